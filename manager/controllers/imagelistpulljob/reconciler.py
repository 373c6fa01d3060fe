"""One pass over an ImageListPullJob: expire it, or sync its ImagePullJobs and write its status.

The plan (children per image, what to create and delete, the status) is
`kruise.control.imagelistpulljob.childjobs`; this module reads the caches, guards against a stale cache with
scale expectations (a child just created has a generated name, so a second pass that does not see
it yet would create another), applies the TTL against the clock and makes the writes.
"""

from __future__ import annotations

import contextlib

from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH
from kruise.api.objects import Obj, section, spec_of, status_of
from kruise.control.common import podstatus
from kruise.control.common.lifecycle import rfc3339
from kruise.control.imagelistpulljob import childjobs
from kruise.kube.client import Client
from kruise.kube.clock import Clock
from kruise.kube.controller import Result
from kruise.kube.errors import NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import IMAGELISTPULLJOBS, IMAGEPULLJOBS
from kruise.kube.store import OWNER_UID_INDEX
from kruise.manager.writers.expectations import Overtime, scale_hold
from kruise.manager.writers.status import StatusWriter


class ImageListPullJobReconciler:
    """Reads list jobs and ImagePullJobs from the caches; creates and deletes ImagePullJobs and
    writes the list job's label, status and (after its TTL) deletion through the client."""

    def __init__(
        self,
        client: Client,
        *,
        list_jobs: SharedInformer,
        jobs: SharedInformer,
        recorder: EventRecorder,
        expectations: ScaleExpectations,
        clock: Clock,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, IMAGELISTPULLJOBS)
        self.list_jobs = list_jobs
        self.jobs = jobs
        self.recorder = recorder
        self.expectations = expectations
        self.clock = clock

    async def reconcile(self, key: str) -> Result | None:
        ilpj = self.list_jobs.get(key)
        if ilpj is None:
            self.expectations.delete(key)
            return None
        if ilpj["metadata"].get("deletionTimestamp"):
            return None
        hash_ = childjobs.template_hash(ilpj)
        await self._label(ilpj, hash_)
        if status_of(ilpj).get("completionTime"):
            return await self._finished(ilpj)
        if (hold := scale_hold(self.expectations, key, Overtime.FORGET_AND_PROCEED)) is not None:
            return hold.result
        children = childjobs.live_children(ilpj, self.jobs.by_index(OWNER_UID_INDEX, ilpj["metadata"]["uid"]))
        new_status = childjobs.status(ilpj, children, rfc3339(self.clock.wall()))
        actions = childjobs.actions(ilpj, children, hash_)
        await self._create(key, ilpj, actions.create, hash_)
        await self._delete(key, ilpj, actions.delete)
        await self.status_writer.write(ilpj, new_status)
        if "completionTime" in new_status:
            return self._ttl_left(ilpj, new_status["completionTime"])
        return None

    def _ttl_left(self, ilpj: Obj, completion_time: str) -> Result | None:
        ttl = section(ilpj, "spec", "completionPolicy").get("ttlSecondsAfterFinished")
        if ttl is None:
            return None
        finished = podstatus.parse_time(completion_time) or self.clock.wall()
        left = float(ttl) - (self.clock.wall() - finished).total_seconds()
        return Result(requeue_after=max(left, 0.0))

    async def _finished(self, ilpj: Obj) -> Result | None:
        """A completed list job waits out its TTL, then is deleted (its ImagePullJobs with it)."""
        result = self._ttl_left(ilpj, ilpj["status"]["completionTime"])
        if result is None or result.requeue_after:
            return result
        meta = ilpj["metadata"]
        with contextlib.suppress(NotFound):
            await self.client.delete(IMAGELISTPULLJOBS, meta["name"], meta["namespace"])
        return None

    async def _label(self, ilpj: Obj, hash_: str) -> None:
        """The list job carries its template hash in `controller-revision-hash`, as upstream."""
        meta = ilpj["metadata"]
        if section(meta, "labels").get(LABEL_CONTROLLER_REVISION_HASH) == hash_:
            return
        patch = {"metadata": {"labels": {LABEL_CONTROLLER_REVISION_HASH: hash_}}}
        with contextlib.suppress(NotFound):
            await self.client.patch(IMAGELISTPULLJOBS, meta["name"], patch, meta["namespace"])

    async def _create(self, key: str, ilpj: Obj, images: list[str], hash_: str) -> None:
        created = 0
        try:
            for image in images:
                self.expectations.expect(key, ScaleExpectations.CREATE, image)
                try:
                    await self.client.create(IMAGEPULLJOBS, childjobs.new_child(ilpj, image, hash_))
                except Exception:
                    self.expectations.observe(key, ScaleExpectations.CREATE, image)
                    raise
                created += 1
        finally:
            if created:
                self.recorder.eventf(
                    dict(ilpj), "Normal", "Successful create ImagePullJob", "Create %d ImagePullJob", created
                )

    async def _delete(self, key: str, ilpj: Obj, children: list[Obj]) -> None:
        for child in children:
            meta = child["metadata"]
            image = str(spec_of(child).get("image") or "")
            self.expectations.expect(key, ScaleExpectations.DELETE, image)
            try:
                await self.client.delete(IMAGEPULLJOBS, meta["name"], meta["namespace"])
            except NotFound:
                self.expectations.observe(key, ScaleExpectations.DELETE, image)
            except Exception:
                self.expectations.observe(key, ScaleExpectations.DELETE, image)
                raise
        if children:
            self.recorder.eventf(
                dict(ilpj),
                "Normal",
                "Successful delete ImagePullJob",
                "Delete %d ImagePullJob",
                len(children),
            )
