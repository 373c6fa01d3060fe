"""Image pre-download for in-place rollouts: create the ImagePullJobs `kruise.control` decides on.

Behind gates KruiseDaemon + PreDownloadImageForInPlaceUpdate. The decision is taken once per update
revision and recorded as a label on it (`apps.kruise.io/pre-predownload-created` or
`image-predownload-ignored`), so a restarted manager never creates the jobs twice. Once the
rollout converges (current == update revision) the CloneSet's jobs are deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from kruise.api.keys import LABEL_PRE_PREDOWNLOAD_CREATED
from kruise.control.cloneset import predownload
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTROLLER_REVISIONS, IMAGEPULLJOBS
from kruise.kube.store import OWNER_UID_INDEX

log = structlog.get_logger("kruise.manager.cloneset")


class PreDownloader:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        rv_expectations: ResourceVersionExpectations,
        jobs: SharedInformer,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.rv_expectations = rv_expectations
        self.jobs = jobs

    async def sync(
        self, cloneset: Mapping[str, Any], current: Mapping[str, Any], update: Mapping[str, Any]
    ) -> None:
        if current["metadata"]["name"] == update["metadata"]["name"]:
            await self._delete_jobs(cloneset)
            return
        if not predownload.should_consider(cloneset, current["metadata"]["name"], update["metadata"]["name"]):
            return
        label = predownload.decision(cloneset, current, update)
        if label is None:
            return
        if label == LABEL_PRE_PREDOWNLOAD_CREATED:
            for job in predownload.image_pull_jobs(cloneset, current, update):
                name, image = job["metadata"]["name"], job["spec"]["image"]
                try:
                    await self.client.create(IMAGEPULLJOBS, job)
                except AlreadyExists:
                    continue
                except Exception as exc:
                    self.recorder.event(
                        dict(cloneset),
                        "Normal",
                        "FailedCreateImagePullJob",
                        f"failed to create ImagePullJob {name}: {exc}",
                    )
                    raise
                self.recorder.event(
                    dict(cloneset),
                    "Normal",
                    "CreatedImagePullJob",
                    predownload.created_event_message(name, image),
                )
        meta = update["metadata"]
        patched = await self.client.patch(
            CONTROLLER_REVISIONS,
            meta["name"],
            {"metadata": {"labels": {label: "true"}}},
            meta.get("namespace"),
            patch_type=PatchType.MERGE,
        )
        self.rv_expectations.expect(patched)

    async def _delete_jobs(self, cloneset: Mapping[str, Any]) -> None:
        uid = cloneset["metadata"]["uid"]
        for job in self.jobs.by_index(OWNER_UID_INDEX, uid):
            meta = job["metadata"]
            try:
                await self.client.delete(IMAGEPULLJOBS, meta["name"], meta["namespace"])
            except NotFound:
                continue
