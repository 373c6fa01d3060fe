"""EphemeralJob planning (pure): which pods it targets, which get its containers next, its status.

An EphemeralJob adds the ephemeral containers of its template to the active pods its selector
matches in its namespace (oldest first, at most `replicas`), `parallelism` pods at a time (default
1) counting the pods whose containers still run. A container it added carries the env
`KRUISE_EJOB_ID=<job uid>`; a pod already holding a same-named ephemeral container of someone
else is skipped. Each pod's containers add up to one pod state (failed if any failed, succeeded when
all succeeded, else running or waiting), and the job's status counts those states. The job
completes (completionTime) when all `replicas` pods succeeded or all failed, or when it outlives
`activeDeadlineSeconds`; it is deleted `ttlSecondsAfterFinished` (default 1800) later.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from kruise.api.common import LabelSelector, selector_matches
from kruise.api.conditions import set_condition
from kruise.api.ephemeraljob import (
    CONDITION_ERROR,
    CONDITION_FAILED,
    CONDITION_INITIALIZED,
    CONDITION_MATCHED_EMPTY,
    CONDITION_SUCCEEDED,
    PHASE_ERROR,
    PHASE_FAILED,
    PHASE_PAUSED,
    PHASE_RUNNING,
    PHASE_SUCCEEDED,
    PHASE_UNKNOWN,
    PHASE_WAITING,
)
from kruise.api.objects import Obj, meta_of, section, spec_of, status_of
from kruise.control.common import podstatus
from kruise.control.common.lifecycle import rfc3339

ENV_JOB_ID = "KRUISE_EJOB_ID"
DEFAULT_PARALLELISM = 1
DEFAULT_TTL_SECONDS = 1800

SUCCEEDED, FAILED, RUNNING, WAITING, UNKNOWN = "Succeeded", "Failed", "Running", "Waiting", "Unknown"


def spec(job: Obj) -> Mapping[str, Any]:
    return job.get("spec") or {}


def template_containers(job: Obj) -> list[dict[str, Any]]:
    return list(section(spec(job), "template").get("ephemeralContainers") or [])


def template_names(job: Obj) -> set[str]:
    return {c.get("name") for c in template_containers(job)}


def selector(job: Obj) -> LabelSelector | None:
    raw = spec(job).get("selector")
    return None if raw is None else LabelSelector.model_validate(raw)


def selects(job: Obj, pod: Obj, *, empty_matches: bool = True) -> bool:
    """The job's selector picks the pod (same namespace). Pod events ignore an empty selector, as
    upstream's event handler does, while listing the targets treats it as 'everything'."""
    if meta_of(pod).get("namespace") != job["metadata"].get("namespace"):
        return False
    sel = selector(job)
    if sel is not None and sel.is_empty() and not empty_matches:
        return False
    try:
        return selector_matches(sel, meta_of(pod).get("labels"))
    except ValueError:
        return False


def created_by(job: Obj, container: Obj) -> bool:
    uid = job["metadata"].get("uid")
    return any(e.get("name") == ENV_JOB_ID and e.get("value") == uid for e in container.get("env") or [])


def _pod_ephemerals(pod: Obj) -> dict[str, Obj]:
    return {c.get("name"): c for c in spec_of(pod).get("ephemeralContainers") or []}


def has_foreign_container(job: Obj, pod: Obj) -> bool:
    """The pod holds an ephemeral container named like one of the job's that the job did not add."""
    existing = _pod_ephemerals(pod)
    return any(name in existing and not created_by(job, existing[name]) for name in template_names(job))


def contains_job_container(job: Obj, pod: Obj) -> bool:
    existing = _pod_ephemerals(pod)
    return any(name in existing for name in template_names(job))


def expectation_names(job: Obj, pod: Obj) -> list[str]:
    """`<pod>-<container>` per template container: the names the scale expectations track."""
    return [f"{pod['metadata']['name']}-{c.get('name')}" for c in template_containers(job)]


def target_pods(job: Obj, pods: Iterable[Obj]) -> list[Obj]:
    """Active selected pods, oldest first (then by name), without a foreign same-named container,
    at most `replicas` of them."""
    ordered = sorted(
        (p for p in pods if selects(job, p)),
        key=lambda p: (p["metadata"].get("creationTimestamp") or "", p["metadata"]["name"]),
    )
    replicas = spec(job).get("replicas")
    targets: list[Obj] = []
    for pod in ordered:
        if not podstatus.is_active(pod) or has_foreign_container(job, pod):
            continue
        if replicas is None or len(targets) < replicas:
            targets.append(pod)
    return targets


def container_state(status: Obj) -> str:
    state = status.get("state") or {}
    terminated = state.get("terminated")
    if terminated is not None:
        code = terminated.get("exitCode") or 0
        if terminated.get("finishedAt") and code == 0:
            return SUCCEEDED
        if code != 0:
            return FAILED
    if state.get("running") is not None:
        return RUNNING
    waiting = state.get("waiting")
    if waiting is not None:
        return FAILED if waiting.get("reason") == "RunContainerError" else WAITING
    return UNKNOWN


def pod_state(job: Obj, pod: Obj) -> str:
    """The state of the job's containers in one pod: any failed → Failed; all succeeded →
    Succeeded; else Running if one runs, Waiting if one waits, Unknown otherwise."""
    names = template_names(job)
    counts = {SUCCEEDED: 0, RUNNING: 0, WAITING: 0}
    for status in status_of(pod).get("ephemeralContainerStatuses") or []:
        if status.get("name") not in names:
            continue
        state = container_state(status)
        if state == FAILED:
            return FAILED
        if state in counts:
            counts[state] += 1
    if counts[SUCCEEDED] and counts[SUCCEEDED] == len(names):
        return SUCCEEDED
    if counts[RUNNING]:
        return RUNNING
    if counts[WAITING]:
        return WAITING
    return UNKNOWN


_SAME = ("status", "reason", "message")
"""A condition saying the same thing keeps its times."""


def _condition(type_: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {
        "type": type_,
        "status": "True",
        "lastProbeTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


def past_deadline(job: Obj, start_time: datetime | None, now: datetime) -> bool:
    deadline = spec(job).get("activeDeadlineSeconds")
    if deadline is None or start_time is None:
        return False
    return (now - start_time).total_seconds() >= deadline


def status(job: Obj, targets: list[Obj], now: datetime) -> dict[str, Any]:
    """The job's next status (calculateStatus upstream): counts, phase, conditions, times."""
    old = job.get("status") or {}
    stamp = rfc3339(now)
    new: dict[str, Any] = copy.deepcopy(dict(old))
    new.setdefault("startTime", stamp)
    conditions = new.get("conditions")
    if conditions is None:
        conditions = [_condition(CONDITION_INITIALIZED, CONDITION_INITIALIZED, "", stamp)]
    new["conditions"] = conditions
    meta = job["metadata"]
    who = f"{meta.get('namespace')}/{meta.get('name')}"
    states = [pod_state(job, pod) for pod in targets] if template_names(job) else []
    counts = {s: states.count(s) for s in (SUCCEEDED, FAILED, RUNNING, WAITING)}
    new.update(
        match=len(targets),
        succeeded=counts[SUCCEEDED],
        failed=counts[FAILED],
        running=counts[RUNNING],
        waiting=counts[WAITING],
    )
    replicas = spec(job).get("replicas")
    if replicas is None:
        replicas = len(targets)
    if not targets:
        new["phase"] = PHASE_WAITING
        conditions[:] = set_condition(
            conditions,
            _condition(CONDITION_MATCHED_EMPTY, "MatchEmpty", "job match no pods", stamp),
            same=_SAME,
        )
    elif counts[SUCCEEDED] == replicas and counts[SUCCEEDED] > 0:
        new["completionTime"] = stamp
        new["phase"] = PHASE_SUCCEEDED
        conditions[:] = set_condition(
            conditions,
            _condition(CONDITION_SUCCEEDED, "JobSucceeded", "job success to run all tasks", stamp),
            same=_SAME,
        )
    elif counts[RUNNING] > 0:
        new["phase"] = PHASE_RUNNING
    elif counts[FAILED] == replicas:
        new["completionTime"] = stamp
        new["phase"] = PHASE_FAILED
        conditions[:] = set_condition(
            conditions,
            _condition(CONDITION_FAILED, "JobFailed", "job failed to run all tasks", stamp),
            same=_SAME,
        )
    elif counts[WAITING] == replicas:
        new["phase"] = PHASE_WAITING
    else:
        new["phase"] = PHASE_UNKNOWN
    if spec(job).get("paused"):
        new["phase"] = PHASE_PAUSED
    if counts[FAILED] > 0:
        message = f"EphemeralJob {who} failed to create ephemeral container"
        conditions[:] = set_condition(
            conditions, _condition(CONDITION_FAILED, "CreateFailed", message, stamp), same=_SAME
        )
    started = podstatus.parse_time(new["startTime"])
    if new["phase"] in (PHASE_WAITING, PHASE_UNKNOWN, PHASE_RUNNING) and past_deadline(job, started, now):
        new["completionTime"] = stamp
        new["phase"] = PHASE_FAILED
        message = f"EphemeralJob {who} was active longer than specified deadline"
        conditions[:] = set_condition(
            conditions, _condition(CONDITION_FAILED, "DeadlineExceeded", message, stamp), same=_SAME
        )
    if not template_names(job):
        new["phase"] = PHASE_ERROR
        conditions[:] = set_condition(
            conditions, _condition(CONDITION_ERROR, "Error", "job spec invalid fields.", stamp), same=_SAME
        )
    return new


def to_inject(job: Obj, targets: list[Obj], running: int) -> list[Obj]:
    """The pods that get the job's containers now: those without them, `parallelism` (default 1)
    minus the pods whose containers still run, in target order."""
    if not template_names(job):
        return []
    missing = [
        p
        for p in targets
        if not any(created_by(job, c) and n in template_names(job) for n, c in _pod_ephemerals(p).items())
    ]
    parallelism = spec(job).get("parallelism")
    limit = min(DEFAULT_PARALLELISM if parallelism is None else parallelism, len(missing))
    room = limit - running
    return missing[:room] if room > 0 else []


def injection_patch(job: Obj) -> dict[str, Any]:
    """The strategic-merge patch of pods/ephemeralcontainers adding the template's containers, each
    with `KRUISE_EJOB_ID=<job uid>` appended to its env."""
    containers = []
    for template in template_containers(job):
        container = copy.deepcopy(template)
        container["env"] = [
            *(container.get("env") or []),
            {"name": ENV_JOB_ID, "value": job["metadata"]["uid"]},
        ]
        containers.append(container)
    return {"spec": {"ephemeralContainers": containers}}


def ttl_left(job: Obj, now: datetime) -> float | None:
    """Seconds until a finished job is deleted (ttlSecondsAfterFinished, default 1800); None while
    it has not finished."""
    finished = podstatus.parse_time(status_of(job).get("completionTime"))
    if finished is None:
        return None
    ttl = spec(job).get("ttlSecondsAfterFinished")
    ttl = DEFAULT_TTL_SECONDS if ttl is None else ttl
    return float(ttl) - (now - finished).total_seconds()


def deadline_left(job: Obj, start_time: str, now: datetime) -> float | None:
    """Seconds until `activeDeadlineSeconds` runs out (never below 0), for the requeue."""
    deadline = spec(job).get("activeDeadlineSeconds")
    started = podstatus.parse_time(start_time)
    if deadline is None or started is None:
        return None
    return max(float(deadline) - (now - started).total_seconds(), 0.0)
