"""One pass over an ImagePullJob: release its finalizer, expire it, or spread its tag and write status.

The plan (targets, per-node phase, the NodeImage spec with the tag added, the status) is
`kruise.control.imagepulljob.nodeimages`; this module reads the caches, applies the deadline and TTL against
the clock, and makes the writes. A running job is requeued every `RESYNC_SECONDS`, so a deadline or
a node that stops reporting is noticed without an event.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime

from kruise.api.conversion import convert
from kruise.api.keys import FINALIZER_DELETION_PROTECTION
from kruise.api.objects import Obj, section, status_of
from kruise.control.common import podstatus
from kruise.control.common.lifecycle import rfc3339
from kruise.control.imagepulljob import nodeimages
from kruise.control.nodeimage.modes import V1ALPHA1, as_v1beta1
from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES
from kruise.manager.controllers.imagepulljob.secrets import PullSecretSync
from kruise.manager.writers.status import StatusWriter

RESYNC_SECONDS = 5.0


class ImagePullJobReconciler:
    """Reads jobs, NodeImages and (for `podSelector`) pods from the caches; writes NodeImage specs and
    the job's status, finalizers and deletion through the client."""

    def __init__(
        self,
        client: Client,
        *,
        jobs: SharedInformer,
        node_images: SharedInformer,
        pods: SharedInformer,
        pull_secrets: PullSecretSync,
        wall: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.pull_secrets = pull_secrets
        self.status_writer = StatusWriter(client, IMAGEPULLJOBS)
        self.jobs = jobs
        self.node_images = node_images
        self.pods = pods
        self.wall = wall

    async def reconcile(self, key: str) -> Result | None:
        job = self.jobs.get(key)
        if job is None:
            return None
        now = self.wall()
        if job["metadata"].get("deletionTimestamp"):
            await self._finalize(job)
            return None
        if status_of(job).get("completionTime"):
            return await self._finished(job, now)
        return await self._run(job, now)

    async def _finished(self, job: Obj, now: datetime) -> Result | None:
        """A completed job releases its pull secret copies and loses its finalizer and, with a TTL, is
        deleted when the TTL runs out."""
        await self._finalize(job)
        ttl = section(job, "spec", "completionPolicy").get("ttlSecondsAfterFinished")
        if ttl is None:
            return None
        finished = podstatus.parse_time(job["status"]["completionTime"]) or now
        left = float(ttl) - (now - finished).total_seconds()
        if left > 0:
            return Result(requeue_after=left)
        meta = job["metadata"]
        with contextlib.suppress(NotFound):
            await self.client.delete(IMAGEPULLJOBS, meta["name"], meta["namespace"])
        return None

    async def _run(self, job: Obj, now: datetime) -> Result | None:
        """Count the target nodes' phases; past the deadline fail the unfinished, else tag more nodes."""
        spec, status = job.get("spec") or {}, job.get("status") or {}
        by_name = {n["metadata"]["name"]: n for n in self.node_images.list()}
        pods = self.pods.list() if spec.get("podSelector") else []
        targets = nodeimages.target_nodes(job, by_name.values(), pods)
        secrets = await self.pull_secrets.sync(job)
        result = nodeimages.progress(job, targets, by_name, secrets)
        new_status = nodeimages.job_status(job, result, now, status.get("startTime"))
        deadline = section(spec, "completionPolicy").get("activeDeadlineSeconds")
        started = podstatus.parse_time(new_status["startTime"]) or now
        if (
            not nodeimages.is_never(job)
            and deadline is not None
            and (now - started).total_seconds() > float(deadline)
        ):
            unfinished = [
                n
                for n in targets
                if n not in result.failed_nodes and nodeimages.node_phase(job, by_name[n]) != "Succeeded"
            ]
            failed_nodes = sorted([*result.failed_nodes, *unfinished])
            new_status.update(
                completionTime=rfc3339(now), message="job exceeds activeDeadlineSeconds", active=0,
                failed=len(failed_nodes), failedNodes=failed_nodes,
            )  # fmt: skip
        elif "completionTime" not in new_status:
            room = nodeimages.parallelism(job, result.desired) - result.active
            for node in result.not_synced[: max(room, 0)]:
                await self._add_tag(job, by_name[node], secrets, now)
        if {k: status.get(k) for k in new_status} != new_status:
            await self.status_writer.write(job, new_status)
        if "completionTime" in new_status:
            return None
        return Result(requeue_after=RESYNC_SECONDS)

    async def _add_tag(self, job: Obj, node_image: Obj, secrets: list[dict[str, str]], now: datetime) -> None:
        """A PUT carrying the cached resourceVersion: a concurrent writer makes it conflict instead
        of losing its tag; the NodeImage event that follows brings the job back. The spec is planned
        as v1beta1 (references carry `mode`) and written at v1alpha1, the modes riding in the
        conversion-data annotation as for any v1beta1 writer."""
        beta = as_v1beta1(node_image)
        updated_spec = nodeimages.with_job(job, beta, secrets, now)
        if updated_spec is None:
            return
        written = convert({**beta, "spec": updated_spec}, V1ALPHA1)
        with contextlib.suppress(Conflict, NotFound):
            await self.client.update(NODEIMAGES, written)

    async def _finalize(self, job: Obj) -> None:
        """Release the job's pull secret copies, then drop the finalizer that waited for that (as
        upstream, only a job still holding the finalizer releases)."""
        meta = job["metadata"]
        finalizers = meta.get("finalizers") or []
        if FINALIZER_DELETION_PROTECTION not in finalizers:
            return
        await self.pull_secrets.sync(job)
        kept = [f for f in finalizers if f != FINALIZER_DELETION_PROTECTION]
        patch = {"metadata": {"finalizers": kept, "resourceVersion": meta["resourceVersion"]}}
        with contextlib.suppress(NotFound, Conflict):
            await self.client.patch(IMAGEPULLJOBS, meta["name"], patch, meta["namespace"])
