"""A minimal batch/v1 Job controller: NonIndexed Jobs with parallelism, completions and backoffLimit.

Kruise's BroadcastJob/ImagePullJob tests and tutorials lean on plain Jobs finishing, so this
keeps the parts users observe: pods labelled and owned as the real controller does, status
counters, ``startTime``/``completionTime``, and the terminal conditions (``SuccessCriteriaMet``
then ``Complete``; ``FailureTarget`` then ``Failed`` with BackoffLimitExceeded).
Counting is level-based from the existing pods (no job-tracking finalizers).
"""

from __future__ import annotations

import copy
import logging

from kruise.sandbox.simulator.client import ApiError, Obj, resource_path
from kruise.sandbox.simulator.controller import OwnerController
from kruise.sandbox.simulator.events import now_rfc3339
from kruise.sandbox.simulator.owners import (
    is_active,
    is_ready,
    owned_by,
    pod_from_template,
    remember,
)

log = logging.getLogger(__name__)

JOBS = "batch/v1"


def job_finished(job: Obj) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in (job.get("status") or {}).get("conditions") or []
    )


def want_active(job: Obj, succeeded: int) -> int:
    """How many pods should run now: parallelism, capped by the completions still missing."""
    spec = job.get("spec") or {}
    if spec.get("suspend"):
        return 0
    parallelism = spec.get("parallelism", 1)
    completions = spec.get("completions")
    if completions is None:
        return 0 if succeeded > 0 else parallelism
    return max(0, min(parallelism, completions - succeeded))


def restarts_counted(job: Obj, active: list[Obj]) -> int:
    """Container restarts of active pods count as failures when the template restarts OnFailure."""
    template_spec = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    if template_spec.get("restartPolicy") != "OnFailure":
        return 0
    return sum(
        status.get("restartCount", 0)
        for pod in active
        for status in [
            *((pod.get("status") or {}).get("initContainerStatuses") or []),
            *((pod.get("status") or {}).get("containerStatuses") or []),
        ]
    )


def job_pod(job: Obj) -> Obj:
    """A pod from the job's template, labelled like the real controller's pods."""
    meta = job["metadata"]
    labels = {
        "batch.kubernetes.io/controller-uid": meta["uid"],
        "batch.kubernetes.io/job-name": meta["name"],
        "controller-uid": meta["uid"],
        "job-name": meta["name"],
    }
    return pod_from_template({"apiVersion": JOBS, "kind": "Job", **job}, labels)


def _condition(kind: str, reason: str, message: str, now: str) -> Obj:
    return {
        "type": kind,
        "status": "True",
        "reason": reason,
        "message": message,
        "lastProbeTime": now,
        "lastTransitionTime": now,
    }


class JobController(OwnerController):
    api_version = JOBS
    kind = "Job"
    name = "job-controller"

    async def sync(self, job: Obj) -> float | None:
        pods = owned_by(self.owned, job)
        active = [p for p in pods if is_active(p)]
        succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        failed = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed")
        spec = job.get("spec") or {}
        status = copy.deepcopy(job.get("status") or {})
        now = now_rfc3339()
        finished = job_finished(job)
        if not finished:
            backoff_limit = spec.get("backoffLimit", 6)
            completions = spec.get("completions")
            if failed + restarts_counted(job, active) > backoff_limit:
                for pod in active:
                    await self._delete(pod)
                active = []
                status["conditions"] = [
                    *(status.get("conditions") or []),
                    _condition(
                        "FailureTarget",
                        "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit",
                        now,
                    ),
                    _condition(
                        "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now
                    ),
                ]
                self.recorder.event(
                    job, "Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
                )
            elif (completions is not None and succeeded >= completions) or (
                completions is None and succeeded > 0 and not active
            ):
                status["conditions"] = [
                    *(status.get("conditions") or []),
                    _condition(
                        "SuccessCriteriaMet",
                        "CompletionsReached",
                        "Reached expected number of succeeded pods",
                        now,
                    ),
                    _condition(
                        "Complete", "CompletionsReached", "Reached expected number of succeeded pods", now
                    ),
                ]
                status["completionTime"] = now
                self.recorder.event(job, "Normal", "Completed", "Job completed")
            else:
                missing = want_active(job, succeeded) - len(active)
                for _ in range(max(0, missing)):
                    created = await self.client.create(
                        resource_path("v1", "pods", job["metadata"]["namespace"]), job_pod(job)
                    )
                    remember(self.owned, created)
                    active.append(created)
                    self.recorder.event(
                        job, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
                    )
                if not spec.get("suspend"):
                    status.setdefault("startTime", now)
        status["active"] = len(active)
        status["ready"] = sum(1 for p in active if is_ready(p))
        status["succeeded"] = succeeded
        status["failed"] = failed
        status["terminating"] = sum(1 for p in pods if p["metadata"].get("deletionTimestamp"))
        status.setdefault("uncountedTerminatedPods", {})
        for counter in ("active", "succeeded", "failed"):
            if status[counter] == 0:
                del status[counter]
        if status != (job.get("status") or {}):
            meta = job["metadata"]
            body = {**job, "status": status}
            written = await self.client.replace(
                resource_path(JOBS, "jobs", meta["namespace"], meta["name"], "status"), body
            )
            remember(self.owners, written)
        return None

    async def _delete(self, pod: Obj) -> None:
        meta = pod["metadata"]
        try:
            await self.client.delete(resource_path("v1", "pods", meta["namespace"], meta["name"]))
        except ApiError as error:
            if not error.not_found:
                raise
