"""Carry out one `ScalePlan`: create pods (and their PVCs), move pods through lifecycle hooks, delete.

Creations and deletions are announced to the scale expectations *before* the request, so a
reconcile that races the informer never counts the same pod twice; a request that fails takes its
name back out, because no event will ever observe it.

A long scale-up is spread over several passes: no new slow-start batch starts once a pass has been
creating for `CREATE_PASS_SECONDS`. The pass then ends as any scaling pass does (status written
once, with the pods created so far), and the pods' add events bring the next pass, which the scale
expectations hold until the informer has seen every pod created. At QPS 20, 1000 pods are about
thirty passes instead of one that leaves `status.replicas` at 0 for almost a minute. The budget is
short (1 s, not the 3 s of DaemonSet and BroadcastJob) because each pass first gives the pods of the
one before their readiness write (issue 27): a pod waits about one budget for it, and 1000 pods cost
~11 more CloneSet status writes than at 3 s (29 against 18).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import structlog

from kruise.api.keys import (
    LABEL_CLONESET_INSTANCE_ID,
    LIFECYCLE_STATE_PREPARING_DELETE,
    LIFECYCLE_STATE_PREPARING_NORMAL,
)
from kruise.api.objects import Obj, meta_of, section
from kruise.control.cloneset.pods import new_pod, pvcs_for_instance
from kruise.control.cloneset.scale import ScalePlan, pvcs_of
from kruise.control.common.revision import template_from_revision_data
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.resources import PODS, PVCS, object_key
from kruise.kube.slowstart import slow_start
from kruise.manager.writers.pods import PodWriter

log = structlog.get_logger("kruise.manager.cloneset")

CREATE_PASS_SECONDS = 1.0


class Scaler:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        scale_expectations: ScaleExpectations,
        pod_writer: PodWriter,
        *,
        short_hash_gate: bool = False,
        clock: Clock | None = None,
        create_pass_seconds: float = CREATE_PASS_SECONDS,
    ) -> None:
        self.client = client
        self.clock = clock or RealClock()
        self.create_pass_seconds = create_pass_seconds
        self.recorder = recorder
        self.scale_expectations = scale_expectations
        self.pod_writer = pod_writer
        self.short_hash_gate = short_hash_gate

    async def execute(
        self,
        cloneset: dict[str, Any],
        plan: ScalePlan,
        current_revision: Mapping[str, Any],
        update_revision: Mapping[str, Any],
        pvcs: Sequence[Mapping[str, Any]],
        now: datetime,
    ) -> bool:
        """Returns whether anything was changed (then no update runs in this pass)."""
        if plan.scale_up_limited:
            self.recorder.event(cloneset, "Warning", "ScaleUpLimited", plan.scale_up_limited)
        if plan.undelete:
            for pod in plan.undelete:
                await self.pod_writer.set_lifecycle_state(pod, LIFECYCLE_STATE_PREPARING_NORMAL, False, now)
            return True
        if plan.create_current or plan.create_update:
            await self._create(cloneset, plan, current_revision, update_revision, pvcs, now)
            return True
        acted = False
        mark = bool(section(cloneset, "spec", "lifecycle", "preDelete").get("markPodNotReady"))
        for pod in plan.prepare_delete:
            patched = await self.pod_writer.set_lifecycle_state(
                pod, LIFECYCLE_STATE_PREPARING_DELETE, mark, now
            )
            acted = acted or patched is not None
        if plan.delete:
            await self._delete(cloneset, plan.delete, pvcs)
            acted = True
        return acted

    async def _create(
        self,
        cloneset: dict[str, Any],
        plan: ScalePlan,
        current_revision: Mapping[str, Any],
        update_revision: Mapping[str, Any],
        pvcs: Sequence[Mapping[str, Any]],
        now: datetime,
    ) -> None:
        key = object_key(cloneset)
        current_template = template_from_revision_data(current_revision["data"])
        update_template = template_from_revision_data(update_revision["data"])
        total = plan.create_current + plan.create_update
        pods = []
        for i, instance_id in enumerate(plan.instance_ids[:total]):
            at_current = i < plan.create_current
            revision = current_revision if at_current else update_revision
            template = current_template if at_current else update_template
            pods.append(
                new_pod(
                    cloneset,
                    template,
                    revision["metadata"]["name"],
                    instance_id,
                    now,
                    short_hash_gate=self.short_hash_gate,
                )
            )
        existing_pvcs = {meta_of(p).get("name") for p in pvcs}
        for pod in pods:
            self.scale_expectations.expect(key, ScaleExpectations.CREATE, pod["metadata"]["name"])
        created: set[str] = set()
        deadline = self.clock.now() + self.create_pass_seconds

        async def create_one(pod: dict[str, Any]) -> None:
            if self.clock.now() >= deadline:
                return  # left to the next pass; its expectation is taken back below
            instance_id = pod["metadata"]["labels"][LABEL_CLONESET_INSTANCE_ID]
            for claim in pvcs_for_instance(cloneset, instance_id).values():
                if claim["metadata"]["name"] in existing_pvcs:
                    continue
                try:
                    await self.client.create(PVCS, claim)
                except AlreadyExists:
                    pass
                except Exception as exc:
                    self.recorder.event(
                        cloneset,
                        "Warning",
                        "FailedCreate",
                        f"failed to create pvc: {exc}, pvc: {_dump(claim)}",
                    )
                    raise
            try:
                await self.client.create(PODS, pod)
            except Exception as exc:
                self.recorder.event(
                    cloneset, "Warning", "FailedCreate", f"failed to create pod: {exc}, pod: {_dump(pod)}"
                )
                raise
            created.add(pod["metadata"]["name"])
            self.recorder.event(
                cloneset, "Normal", "SuccessfulCreate", f"succeed to create pod {pod['metadata']['name']}"
            )

        _, error = await slow_start(pods, create_one)
        for pod in pods:
            if pod["metadata"]["name"] not in created:
                self.scale_expectations.observe(key, ScaleExpectations.CREATE, pod["metadata"]["name"])
        if error is not None:
            raise error

    async def _delete(
        self, cloneset: dict[str, Any], pods: Sequence[Obj], pvcs: Sequence[Mapping[str, Any]]
    ) -> None:
        key = object_key(cloneset)
        for pod in pods:
            meta = pod["metadata"]
            self.scale_expectations.expect(key, ScaleExpectations.DELETE, meta["name"])
            try:
                await self.client.delete(PODS, meta["name"], meta["namespace"], uid=meta.get("uid"))
            except NotFound:
                # Already gone: its delete event may have passed before we expected it.
                self.scale_expectations.observe(key, ScaleExpectations.DELETE, meta["name"])
            except Exception as exc:
                self.scale_expectations.observe(key, ScaleExpectations.DELETE, meta["name"])
                self.recorder.event(
                    cloneset, "Warning", "FailedDelete", f"failed to delete pod {meta['name']}: {exc}"
                )
                raise
            self.recorder.event(
                cloneset, "Normal", "SuccessfulDelete", f"succeed to delete pod {meta['name']}"
            )
            for claim in pvcs_of(pod, pvcs):
                claim_meta = claim["metadata"]
                try:
                    await self.client.delete(PVCS, claim_meta["name"], claim_meta["namespace"])
                except NotFound:
                    pass
                except Exception as exc:
                    self.recorder.event(
                        cloneset,
                        "Warning",
                        "FailedDelete",
                        f"failed to delete pvc {claim_meta['name']}: {exc}",
                    )
                    raise


def _dump(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=False)
