"""The ImagePullJob controller: spreads a job's image over the target nodes' NodeImages.

Each pass reads every target NodeImage from the cache: nodes whose NodeImage carries the job's tag
(owner reference + version) are synced, and their status says pulling, succeeded or failed; up to
`parallelism` minus the active ones get the tag added next (a compare-and-swap PUT of the NodeImage,
so two jobs adding tags to one node never lose each other's). `Always` jobs complete when every
target node finished (or at `activeDeadlineSeconds`) and are deleted `ttlSecondsAfterFinished` later;
`Never` jobs keep adding new nodes. The `apps.kruise.io/deletion-protection` finalizer the webhook
puts on every job is taken off once the job finished or is being deleted.
"""

from __future__ import annotations

import contextlib
from typing import Any

from kruise.api import features
from kruise.api.keys import FINALIZER_DELETION_PROTECTION
from kruise.control import imagepulljob as plan
from kruise.control import podstatus
from kruise.control.lifecycle import rfc3339
from kruise.kube.client import PatchType
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES, PODS, object_key
from kruise.manager.context import ControllerSetup, ManagerContext

NAME = "imagepulljob"
RESYNC_SECONDS = 5.0


def build(ctx: ManagerContext) -> Controller:
    jobs = ctx.informers.informer(IMAGEPULLJOBS)
    node_images = ctx.informers.informer(NODEIMAGES)
    pods = ctx.informers.informer(PODS)

    async def drop_finalizer(job: dict[str, Any]) -> None:
        finalizers = job["metadata"].get("finalizers") or []
        if FINALIZER_DELETION_PROTECTION in finalizers:
            kept = [f for f in finalizers if f != FINALIZER_DELETION_PROTECTION]
            patch = {"metadata": {"finalizers": kept, "resourceVersion": job["metadata"]["resourceVersion"]}}
            with contextlib.suppress(NotFound, Conflict):
                await ctx.client.patch(
                    IMAGEPULLJOBS, job["metadata"]["name"], patch, job["metadata"]["namespace"]
                )

    async def write_status(job: dict[str, Any], status: dict[str, Any]) -> None:
        with contextlib.suppress(NotFound):
            await ctx.client.patch(
                IMAGEPULLJOBS, job["metadata"]["name"], {"status": status}, job["metadata"]["namespace"],
                patch_type=PatchType.MERGE, subresource="status",
            )  # fmt: skip

    async def reconcile(key: str) -> Result | None:
        job = jobs.get(key)
        if job is None:
            return None
        meta, spec, status = job["metadata"], job.get("spec") or {}, job.get("status") or {}
        now = ctx.clock.wall()
        if meta.get("deletionTimestamp"):
            await drop_finalizer(job)
            return None
        if status.get("completionTime"):
            await drop_finalizer(job)
            ttl = (spec.get("completionPolicy") or {}).get("ttlSecondsAfterFinished")
            if ttl is None:
                return None
            finished = podstatus.parse_time(status["completionTime"]) or now
            left = float(ttl) - (now - finished).total_seconds()
            if left > 0:
                return Result(requeue_after=left)
            with contextlib.suppress(NotFound):
                await ctx.client.delete(IMAGEPULLJOBS, meta["name"], meta["namespace"])
            return None

        by_name = {n["metadata"]["name"]: n for n in node_images.list()}
        targets = plan.target_nodes(job, by_name.values(), pods.list() if spec.get("podSelector") else [])
        result = plan.progress(job, targets, by_name)
        new_status = plan.job_status(job, result, now, status.get("startTime"))
        deadline = (spec.get("completionPolicy") or {}).get("activeDeadlineSeconds")
        started = podstatus.parse_time(new_status["startTime"]) or now
        if (
            not plan.is_never(job)
            and deadline is not None
            and (now - started).total_seconds() > float(deadline)
        ):
            unfinished = [
                n
                for n in targets
                if n not in result.failed_nodes and plan.node_phase(job, by_name[n]) != "Succeeded"
            ]
            failed_nodes = sorted([*result.failed_nodes, *unfinished])
            new_status.update(
                completionTime=rfc3339(now), message="job exceeds activeDeadlineSeconds", active=0,
                failed=len(failed_nodes), failedNodes=failed_nodes,
            )  # fmt: skip
        elif "completionTime" not in new_status:
            room = plan.parallelism(job, result.desired) - result.active
            secrets = [{"namespace": meta["namespace"], "name": s} for s in spec.get("pullSecrets") or []]
            for node in result.not_synced[: max(room, 0)]:
                node_image = by_name[node]
                updated_spec = plan.with_job(job, node_image, secrets, now)
                if updated_spec is None:
                    continue
                with contextlib.suppress(Conflict, NotFound):  # the next event brings us back
                    await ctx.client.update(NODEIMAGES, {**node_image, "spec": updated_spec})
        if {k: status.get(k) for k in new_status} != new_status:
            await write_status(job, new_status)
        if "completionTime" in new_status:
            return None
        return Result(requeue_after=RESYNC_SECONDS)

    controller = Controller(NAME, reconcile, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(jobs)

    def jobs_of(node_image: dict[str, Any]) -> list[str]:
        """Jobs named in the NodeImage's tags, and — for a node that just appeared — every job."""
        keys = set()
        for image in ((node_image.get("spec") or {}).get("images") or {}).values():
            for tag in image.get("tags") or []:
                for ref in tag.get("ownerReferences") or []:
                    if ref.get("kind") == "ImagePullJob" and ref.get("namespace"):
                        keys.add(f"{ref['namespace']}/{ref['name']}")
        return sorted(keys)

    controller.watch(node_images, jobs_of)
    node_images.add_event_handler(
        on_add=lambda _n: [controller.queue.add(object_key(j)) for j in jobs.list()]
    )
    return controller


SETUP = ControllerSetup(
    NAME, build, gate=features.IMAGE_PULL_JOB_GATE, kinds=("ImagePullJob.apps.kruise.io",)
)
