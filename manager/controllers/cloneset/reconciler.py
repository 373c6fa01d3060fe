"""One CloneSet reconcile (upstream `doReconcile`): observe, plan with `kruise.control`, write.

Everything is read from informer caches; expectations make a pass that races its own writes wait
for the cache instead of acting twice. Scale and update never both act in one pass.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

import structlog
from prometheus_client import Counter

from kruise.api import features
from kruise.api.common import LabelSelector
from kruise.api.controllerref import controlled_by, new_controller_ref
from kruise.api.keys import LABEL_CLONESET_INSTANCE_ID, LABEL_CONTROLLER_REVISION_HASH
from kruise.api.objects import Obj, section, status_of
from kruise.control.cloneset import conditions, predownload, vcthash
from kruise.control.cloneset.diffs import calculate_diffs
from kruise.control.cloneset.podchoice import truncated_pods_to_delete
from kruise.control.cloneset.scale import plan_scale
from kruise.control.cloneset.status import availability_wait, compute_status
from kruise.control.common import podstatus
from kruise.control.common.revision import is_pod_update
from kruise.kube.client import Client, PatchType
from kruise.kube.clock import Clock
from kruise.kube.controller import Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CLONESETS, PODS, PVCS
from kruise.kube.store import OWNER_UID_INDEX
from kruise.manager.controllers.cloneset.pubgate import PubGate
from kruise.manager.controllers.cloneset.scaler import Scaler
from kruise.manager.controllers.cloneset.updater import Updater
from kruise.manager.writers.expectations import Overtime, scale_hold, writes_pending
from kruise.manager.writers.inplace import InPlaceWriter
from kruise.manager.writers.ownership import release_strays, selector_of
from kruise.manager.writers.predownload import PreDownloadWriter
from kruise.manager.writers.revisions import RevisionWriter
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.cloneset")


# Upstream's CloneSetScaleExpectationLeakageMetrics (prometheus-client exposes it with `_total`): how often
# a CloneSet waited a whole expectation timeout for pods its informer never showed — the only sign,
# besides the log line, that events were lost.
SCALE_EXPECTATION_LEAKAGE = Counter(
    "cloneset_scale_expectation_leakage",
    "CloneSet Scale Expectation Leakage Metrics",
    ["namespace", "name"],
)


class CloneSetReconciler:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        gates: features.FeatureGates,
        *,
        clonesets: SharedInformer,
        pods: SharedInformer,
        pvcs: SharedInformer,
        revisions: SharedInformer,
        scale_expectations: ScaleExpectations,
        rv_expectations: ResourceVersionExpectations,
        wall: Any,
        predownloader: PreDownloadWriter | None = None,
        pub_gate: PubGate | None = None,
        clock: Clock | None = None,
        resize_subresource: bool = False,
    ) -> None:
        """`resize_subresource`: in-place resizes go through `pods/resize` (server 1.32+)."""
        self.client = client
        self.status_writer = StatusWriter(client, CLONESETS)
        self.recorder = recorder
        self.gates = gates
        self.clonesets, self.pods, self.pvcs, self.revisions = clonesets, pods, pvcs, revisions
        self.scale_expectations = scale_expectations
        self.rv_expectations = rv_expectations
        self.wall = wall
        self.predownloader = predownloader
        short_hash = gates.enabled(features.CLONESET_SHORT_HASH)
        inplace = InPlaceWriter(
            client,
            rv_expectations,
            vertical_scaling=gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING),
            resize_subresource=resize_subresource,
        )
        self.revision_writer = RevisionWriter(client, rv_expectations)
        self.scaler = Scaler(
            client, recorder, scale_expectations, inplace.pods, short_hash_gate=short_hash, clock=clock
        )
        self.updater = Updater(
            client,
            recorder,
            inplace,
            rv_expectations,
            short_hash_gate=short_hash,
            env_from_metadata=gates.enabled(features.IN_PLACE_UPDATE_ENV_FROM_METADATA),
            recreate_on_vct_change=gates.enabled(features.RECREATE_POD_WHEN_CHANGE_VCT_IN_CLONESET_GATE),
            pub_gate=pub_gate,
        )

    async def reconcile(self, key: str) -> Result | None:
        cached = self.clonesets.get(key)
        if cached is None:
            self.scale_expectations.delete(key)
            return None
        cloneset: dict[str, Any] = copy.deepcopy(dict(cached))
        spec = cloneset.get("spec") or {}
        try:
            LabelSelector.model_validate(section(spec, "selector"))
        except ValueError as exc:
            log.error("invalid selector, not retrying", error=str(exc))
            return None

        forced = self.gates.enabled(features.FORCE_DELETE_TIMEOUT_EXPECTATION_GATE)
        overtime = Overtime.FORGET_AND_REQUEUE if forced else Overtime.GIVE_UP
        namespace, _, name = key.partition("/")

        def leaked() -> None:
            SCALE_EXPECTATION_LEAKAGE.labels(namespace, name).inc()

        if (hold := scale_hold(self.scale_expectations, key, overtime, leaked)) is not None:
            return hold.result

        uid = cloneset["metadata"]["uid"]
        owned = [p for p in self.pods.by_index(OWNER_UID_INDEX, uid) if controlled_by(p, uid)]
        active = [p for p in owned if podstatus.is_active(p)]
        inactive = [p for p in owned if not podstatus.is_active(p)]
        pvcs = self.pvcs.by_index(OWNER_UID_INDEX, uid)
        if (section(spec, "scaleStrategy").get("disablePVCReuse")) is True:
            pvcs = await self._cleanup_pvcs(cloneset, active, inactive, pvcs)
        # ClaimOwnedObjects: owned pods that stopped matching are released; orphans are never adopted
        active = await release_strays(self.client, cloneset, PODS, active, selector_of(cloneset))

        revisions = [r for r in self.revisions.by_index(OWNER_UID_INDEX, uid) if controlled_by(r, uid)]
        current, update, collision_count = await self.revision_writer.active_revisions(
            cloneset, revisions, vcthash.revision_annotation(cloneset)
        )
        revisions = [r for r in revisions if r["metadata"]["name"] != update["metadata"]["name"]] + [update]

        if writes_pending(self.rv_expectations, [update, *active], observe=True):
            return Result(requeue_after=self.rv_expectations.timeout)

        if self.predownloader is not None:
            try:
                vct_gate = self.gates.enabled(features.RECREATE_POD_WHEN_CHANGE_VCT_IN_CLONESET_GATE)
                pd_plan = predownload.plan_pre_download(
                    cloneset,
                    current,
                    update,
                    recreate_on_vct_change=vct_gate,
                    vertical_scaling=self.gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING),
                )
                await self.predownloader.apply(cloneset, update, pd_plan)
            except Exception as exc:  # upstream logs and goes on: pre-download is an optimisation
                log.error("failed to pre-download images", error=str(exc))

        now = self.wall()
        old_status = copy.deepcopy(status_of(cloneset))
        status: dict[str, Any] = {"conditions": copy.deepcopy(old_status.get("conditions") or [])}
        delays: list[float] = []
        sync_error: Exception | None = None
        if not cloneset["metadata"].get("deletionTimestamp"):
            try:
                delay = await self._sync(cloneset, status, current, update, revisions, active, pvcs, now)
                if delay:
                    delays.append(delay)
            except Exception as exc:  # recorded in the status, then retried with backoff
                sync_error = exc

        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        status.update(compute_status(cloneset, active, update_name, current_name, collision_count, now))
        deadline_delay = conditions.apply_progressing(cloneset, status, now)
        if deadline_delay is not None and deadline_delay > 0:
            delays.append(deadline_delay)
        if conditions.status_needs_write(old_status, status):
            await self.status_writer.write(cloneset, status)

        await self._truncate_pods_to_delete(cloneset, active)
        await self.revision_writer.truncate_history(
            cloneset,
            revisions,
            [section(p["metadata"], "labels").get(LABEL_CONTROLLER_REVISION_HASH, "") for p in active],
            current_name,
            update_name,
        )
        if sync_error is not None:
            raise sync_error
        if (wait := availability_wait(cloneset, active, status, now)) is not None:
            delays.append(wait)
        return Result(requeue_after=min(delays)) if delays else None

    async def _sync(
        self,
        cloneset: dict[str, Any],
        status: dict[str, Any],
        current: Obj,
        update: Obj,
        revisions: Sequence[Obj],
        pods: Sequence[Obj],
        pvcs: Sequence[Obj],
        now: datetime,
    ) -> float | None:
        """`syncCloneSet`: scale; only if scaling did nothing, update. Failures become conditions.
        A pass that creates pods first gives the pods earlier passes created their first write
        (`Updater.refresh_new_pods`), the one the update half would otherwise make after the last create."""
        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        try:
            plan = plan_scale(
                cloneset,
                pods,
                pvcs,
                current_name,
                update_name,
                now,
                # Upstream scales with revision.IsPodUpdate and updates with the plain hash match.
                is_pod_update=partial(
                    is_pod_update,
                    preparing_update_as_update=self.gates.enabled(features.PREPARING_UPDATE_AS_UPDATE),
                ),
                partition_rollback=self.gates.enabled(features.CLONESET_PARTITION_ROLLBACK),
            )
        except Exception as exc:
            conditions.set_cloneset_condition(
                status, conditions.failed_condition(conditions.CONDITION_FAILED_SCALE, str(exc), now)
            )
            raise
        if plan.create_current or plan.create_update:
            # the pods created by earlier passes get their first write before this pass creates more
            try:
                await self.updater.refresh_new_pods(cloneset, pods, update_name, now)
            except Exception as exc:
                conditions.set_cloneset_condition(
                    status, conditions.failed_condition(conditions.CONDITION_FAILED_UPDATE, str(exc), now)
                )
                raise
        try:
            if await self.scaler.execute(cloneset, plan, current, update, pvcs, now):
                return None
        except Exception as exc:
            conditions.set_cloneset_condition(
                status, conditions.failed_condition(conditions.CONDITION_FAILED_SCALE, str(exc), now)
            )
            raise
        diffs = calculate_diffs(
            cloneset,
            pods,
            current_name,
            update_name,
            now,
            partition_rollback=self.gates.enabled(features.CLONESET_PARTITION_ROLLBACK),
        )
        try:
            return await self.updater.update(cloneset, current, update, revisions, pods, diffs, now)
        except Exception as exc:
            conditions.set_cloneset_condition(
                status, conditions.failed_condition(conditions.CONDITION_FAILED_UPDATE, str(exc), now)
            )
            raise

    async def _truncate_pods_to_delete(self, cloneset: dict[str, Any], pods: Sequence[Obj]) -> None:
        kept = truncated_pods_to_delete(cloneset, pods)
        if kept is None:
            return
        meta = cloneset["metadata"]
        try:
            await self.client.patch(
                CLONESETS,
                meta["name"],
                {
                    "metadata": {"resourceVersion": meta["resourceVersion"]},
                    "spec": {"scaleStrategy": {"podsToDelete": kept}},
                },
                meta["namespace"],
                patch_type=PatchType.MERGE,
            )
        except (Conflict, NotFound) as exc:
            log.info("podsToDelete not truncated this time", reason=type(exc).__name__)

    async def _cleanup_pvcs(
        self, cloneset: Mapping[str, Any], active: Sequence[Obj], inactive: Sequence[Obj], pvcs: Sequence[Obj]
    ) -> list[Obj]:
        """With PVC reuse disabled: PVCs of finished/terminating pods are handed to that pod (so the
        garbage collector removes them together) and PVCs with no pod at all are deleted."""

        def instance(obj: Obj) -> str | None:
            return section(obj["metadata"], "labels").get(LABEL_CLONESET_INSTANCE_ID)

        active_ids = {instance(p) for p in active}
        inactive_by_id = {instance(p): p for p in inactive}
        kept = []
        for pvc in pvcs:
            pvc_id = instance(pvc)
            if pvc_id in active_ids:
                kept.append(pvc)
                continue
            meta = pvc["metadata"]
            pod = inactive_by_id.get(pvc_id)
            try:
                if pod is not None:
                    owner = new_controller_ref({**pod, "apiVersion": "v1", "kind": "Pod"})
                    await self.client.patch(
                        PVCS,
                        meta["name"],
                        {"metadata": {"ownerReferences": [owner]}},
                        meta["namespace"],
                        patch_type=PatchType.MERGE,
                    )
                else:
                    await self.client.delete(PVCS, meta["name"], meta["namespace"])
            except NotFound:
                pass
        return kept
