"""Carries out a pre-download plan (`kruise.control.common.predownload.PreDownloadPlan`) for CloneSet,
Advanced StatefulSet and Advanced DaemonSet alike.

Creates the planned ImagePullJobs (one already there is left alone; a failed create is reported as a
``FailedCreateImagePullJob`` event and the others still go, as upstream), then labels the update
revision so the decision is never taken twice — also across manager restarts. A converged rollout
deletes every ImagePullJob the workload controls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog

from kruise.api.controllerref import controlled_by
from kruise.control.common import predownload
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTROLLER_REVISIONS, IMAGEPULLJOBS
from kruise.kube.store import OWNER_UID_INDEX

log = structlog.get_logger("kruise.manager.predownload")


class PreDownloadWriter:
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

    async def apply(
        self, owner: Mapping[str, Any], update_revision: Mapping[str, Any], plan: predownload.PreDownloadPlan
    ) -> None:
        if plan.delete_jobs:
            await self.delete_jobs(owner)
        for job in plan.jobs:
            await self._create(owner, job)
        if plan.label is not None:
            await self._label_revision(update_revision, plan.label)

    async def _create(self, owner: Mapping[str, Any], job: dict[str, Any]) -> None:
        name, image = job["metadata"]["name"], job["spec"]["image"]
        try:
            await self.client.create(IMAGEPULLJOBS, job)
        except AlreadyExists:
            return
        except Exception as exc:
            log.error("failed to create ImagePullJob", job=name, error=str(exc))
            self.recorder.event(
                dict(owner), "Normal", "FailedCreateImagePullJob", predownload.failed_event_message(name, exc)
            )
            return
        self.recorder.event(
            dict(owner), "Normal", "CreatedImagePullJob", predownload.created_event_message(name, image)
        )

    async def _label_revision(self, revision: Mapping[str, Any], label: str) -> None:
        meta = revision["metadata"]
        patched = await self.client.patch(
            CONTROLLER_REVISIONS,
            meta["name"],
            {"metadata": {"labels": {label: "true"}}},
            meta.get("namespace"),
            patch_type=PatchType.MERGE,
        )
        self.rv_expectations.expect(patched)

    async def delete_jobs(self, owner: Mapping[str, Any]) -> None:
        """``DeleteJobsForWorkload``: every ImagePullJob whose controller is this workload."""
        uid = owner["metadata"]["uid"]
        for job in self.jobs.by_index(OWNER_UID_INDEX, uid):
            meta = job["metadata"]
            if not controlled_by(job, uid):
                continue
            try:
                await self.client.delete(IMAGEPULLJOBS, meta["name"], meta["namespace"])
            except NotFound:
                continue
