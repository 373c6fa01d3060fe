"""One Advanced StatefulSet reconcile (upstream ``syncStatefulSet`` → ``UpdateStatefulSet``):
observe from the caches, plan with ``kruise.control.statefulset``, write, then report status.

A pass: claims first (orphan ControllerRevisions adopted, pods adopted or released by selector
and name, ``kruise.manager.writers.ownership``), revisions (current/update, collisions), refresh
of pods mid-update (a lifecycle write ends the pass), the scale plan (create with claims first,
recreate failed pods, remove condemned ones), and — only when the scale plan reached its end —
the rolling update. Expectations make a pass that races its own writes wait for the informer
instead of acting twice.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import structlog

from kruise.api import features
from kruise.api.common import LabelSelector
from kruise.api.objects import Obj, labels_of, section
from kruise.api.statefulset import PVC_DELETE, VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE
from kruise.control.statefulset import predownload
from kruise.control.statefulset.actions import (
    AlignClaimOwners,
    CreatePod,
    DeletePod,
    EnsureClaims,
    FixIdentity,
    PrepareDelete,
)
from kruise.control.statefulset.claims import pod_claims_state, volume_claim_statuses
from kruise.control.statefulset.identity import member_selection, ordinal_of
from kruise.control.statefulset.pods import retention_policy, revision_of
from kruise.control.statefulset.scaleplan import Gates, Revisions, plan_scale
from kruise.control.statefulset.status import (
    CONDITION_FAILED_CREATE_POD,
    CONDITION_FAILED_UPDATE_POD,
    compute_status,
    revision_template,
    set_failure_condition,
    status_changed,
)
from kruise.control.statefulset.update import ClaimsOf, plan_update
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock
from kruise.kube.controller import Result
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import ADVANCED_STATEFULSETS, CONTROLLER_REVISIONS, PODS
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.controllers.statefulset.podcontrol import StatefulPodControl
from kruise.manager.controllers.statefulset.updater import StatefulSetUpdater
from kruise.manager.writers.expectations import Overtime, scale_hold, writes_pending
from kruise.manager.writers.inplace import InPlaceWriter
from kruise.manager.writers.ownership import adopt_orphans, claim_objects, claimed_view, selected_or_orphan
from kruise.manager.writers.predownload import PreDownloadWriter
from kruise.manager.writers.revisions import RevisionWriter
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.statefulset")

STALE_CLAIM_REQUEUE = 1.0
"""Seconds before a pass blocked by a stale claim (one still owned by an earlier pod of the same
name) looks again: the garbage collector removes such a claim, and claim deletions do not wake
the set."""
CREATE_PASS_SECONDS = 3.0
"""No pod create starts once a pass has been creating this long: the pass ends as any pass does (status
written once, with the pods created so far) and the pods' add events bring the next one, so status
shows progress during a long scale-up instead of staying at 0 until the last create (issue 18)."""


def _earliest(*values: float | None) -> float | None:
    present = [v for v in values if v is not None and v > 0]
    return min(present) if present else None


class StatefulSetReconciler:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        gates: features.FeatureGates,
        *,
        sets: SharedInformer,
        pods: SharedInformer,
        pvcs: SharedInformer,
        revisions: SharedInformer,
        storage_classes: SharedInformer | None = None,
        scale_expectations: ScaleExpectations,
        rv_expectations: ResourceVersionExpectations,
        wall: Any,
        clock: Clock | None = None,
        create_pass_seconds: float = CREATE_PASS_SECONDS,
        predownloader: PreDownloadWriter | None = None,
        resize_subresource: bool = False,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, ADVANCED_STATEFULSETS)
        self.predownloader = predownloader
        self.recorder = recorder
        self.gates = gates
        self.sets, self.pods, self.pvcs, self.revisions = sets, pods, pvcs, revisions
        self.scale_expectations = scale_expectations
        self.rv_expectations = rv_expectations
        self.wall = wall
        self.clock = clock or RealClock()
        self.create_pass_seconds = create_pass_seconds
        self.plan_gates = Gates(
            start_ordinal=gates.enabled(features.STATEFULSET_START_ORDINAL),
            pod_index_label=gates.enabled(features.POD_INDEX_LABEL),
            preparing_update_as_update=gates.enabled(features.PREPARING_UPDATE_AS_UPDATE),
            auto_delete_pvc=gates.enabled(features.STATEFULSET_AUTO_DELETE_PVC),
        )
        self.inplace_vertical_scaling = gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING)
        self.auto_resize_pvc = gates.enabled(features.STATEFULSET_AUTO_RESIZE_PVC_GATE)
        inplace = InPlaceWriter(
            client,
            rv_expectations,
            vertical_scaling=self.inplace_vertical_scaling,
            resize_subresource=resize_subresource,
        )
        self.revision_writer = RevisionWriter(client, rv_expectations)
        self.pod_control = StatefulPodControl(
            client,
            recorder,
            pvcs,
            scale_expectations,
            rv_expectations,
            storage_classes,
            auto_delete_pvc=gates.enabled(features.STATEFULSET_AUTO_DELETE_PVC),
        )
        self.updater = StatefulSetUpdater(
            recorder,
            inplace,
            self.pod_control,
            env_from_metadata=gates.enabled(features.IN_PLACE_UPDATE_ENV_FROM_METADATA),
        )

    async def reconcile(self, key: str) -> Result | None:
        cached = self.sets.get(key)
        if cached is None:
            self.scale_expectations.delete(key)
            return None
        sts: dict[str, Any] = copy.deepcopy(dict(cached))
        spec = sts.get("spec") or {}
        try:
            selector = LabelSelector.model_validate(section(spec, "selector"))
        except ValueError as exc:
            log.error("invalid selector, not retrying", statefulset=key, error=str(exc))
            return None

        # as upstream's Reconcile: adoptOrphanRevisions, then getPodsForStatefulSet, then the sync
        revisions, pods = await self._claim(sts, selector)

        if (hold := scale_hold(self.scale_expectations, key, Overtime.FORGET_AND_REQUEUE)) is not None:
            return hold.result

        meta = sts["metadata"]
        current, update, collision_count = await self.revision_writer.active_revisions(sts, revisions)
        revisions = [r for r in revisions if r["metadata"]["name"] != update["metadata"]["name"]] + [update]

        if writes_pending(self.rv_expectations, [update, *pods], observe=True):
            return Result(requeue_after=self.rv_expectations.timeout)

        now = self.wall()
        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        status = compute_status(sts, pods, current_name, update_name, collision_count, now)
        self._count_claims(sts, status, pods)
        delay: float | None = None
        sync_error: Exception | None = None
        if not meta.get("deletionTimestamp"):
            try:
                delay = await self._sync(sts, key, status, pods, current, update, revisions, now)
            except Exception as exc:  # written to the status first, then retried with backoff
                sync_error = exc

        if status_changed(sts.get("status") or {}, status):
            await self.status_writer.write(sts, status)
        await self.revision_writer.truncate_history(
            sts, revisions, [revision_of(p) for p in pods], current_name, update_name
        )
        if sync_error is not None:
            raise sync_error
        return Result(requeue_after=delay) if delay else None

    async def _claim(self, sts: Obj, selector: LabelSelector) -> tuple[list[Obj], list[Obj]]:
        """The set's revisions and pods, after adopting and releasing (a failed claim raises, and
        the pass ends before any other write, as upstream's Reconcile returns the error).

        Revisions: those of the namespace matching the selector that are ours or nobody's; the
        orphans among them are adopted (uid-only fresh read, first failure stops). Pods: ClaimPods
        with the ``isMemberOf`` filter (name ``<set>-<ordinal>``): an orphan named after another set
        is never taken, and an owned pod relabelled out of the selector is released. Orphans are not
        adopted while the set is being deleted, and the set is re-read uncached before the first.
        """
        namespace = sts["metadata"]["namespace"]

        def selected(obj: Obj) -> bool:
            return selector.matches(labels_of(obj))

        revisions = selected_or_orphan(sts, self.revisions.by_index(NAMESPACE_INDEX, namespace), selected)
        await adopt_orphans(self.client, sts, ADVANCED_STATEFULSETS, CONTROLLER_REVISIONS, revisions)
        members = member_selection(sts["metadata"]["name"], selected)
        await claim_objects(self.client, sts, ADVANCED_STATEFULSETS, PODS, self.pods, members)
        return revisions, claimed_view(sts, self.pods, members)

    async def _sync(
        self,
        sts: dict[str, Any],
        key: str,
        status: dict[str, Any],
        pods: Sequence[Obj],
        current: Obj,
        update: Obj,
        revisions: Sequence[Obj],
        now: datetime,
    ) -> float | None:
        update_name = update["metadata"]["name"]
        await self._pre_download(sts, key, current, update)
        try:
            modified, refresh_delay = await self.updater.refresh(sts, pods, update_name, now)
        except Exception as exc:
            set_failure_condition(status, CONDITION_FAILED_UPDATE_POD, str(exc), now)
            raise
        if modified:
            return refresh_delay

        plan = plan_scale(
            sts,
            pods,
            Revisions(
                current["metadata"]["name"],
                update_name,
                revision_template(current),
                revision_template(update),
            ),
            now,
            self.plan_gates,
        )
        if plan.wait:
            log.debug("statefulset scale waits", statefulset=key, reason=plan.wait)
        try:
            finished, stale_delay = await self._scale(sts, key, status, plan.actions, now)
        finally:
            # upstream recounts over the live replicas on every exit of the scale phase
            self._count_claims(sts, status, plan.replicas.values())
        if not finished:
            # the rest next pass (CREATE_PASS_SECONDS); no update before the scale plan is done
            return _earliest(refresh_delay, plan.requeue_after, stale_delay)
        if not plan.update_allowed:
            return _earliest(refresh_delay, plan.requeue_after, stale_delay)

        update_plan = plan_update(
            sts,
            plan.live_range,
            plan.replicas,
            plan.placeholders,
            update_name,
            now,
            vertical_scaling=self.inplace_vertical_scaling,
            claims=self._claims_of(sts),
            preparing_update_as_update=self.plan_gates.preparing_update_as_update,
        )
        if update_plan.skipped:
            return _earliest(refresh_delay, plan.requeue_after, stale_delay)
        try:
            update_delay = await self.updater.execute(sts, key, update_plan.actions, revisions, update, now)
        except Exception as exc:
            set_failure_condition(status, CONDITION_FAILED_UPDATE_POD, str(exc), now)
            raise
        return _earliest(
            refresh_delay, plan.requeue_after, update_plan.requeue_after, update_delay, stale_delay
        )

    async def _scale(
        self, sts: dict[str, Any], key: str, status: dict[str, Any], actions: Sequence[Any], now: datetime
    ) -> tuple[bool, float | None]:
        """Carry out the scale plan's pod and claim writes; a failure becomes a status condition.

        Returns (False, ...) when the create-pass deadline cut the plan short (no pod is created
        once ``create_pass_seconds`` have gone by), (True, ...) when every action ran; the second
        value is the requeue delay when a stale claim held a pod back (None otherwise). A pod
        whose claim is stale is not created: the pass goes on with the other actions (in
        OrderedReady mode the plan ends at that create anyway, as upstream's pass exits)."""
        retention = retention_policy(sts, self.pod_control.auto_delete_pvc)
        deadline = self.clock.now() + self.create_pass_seconds
        stale_delay: float | None = None
        for action in actions:
            if isinstance(action, CreatePod) and self.clock.now() >= deadline:
                return False, stale_delay
            if (
                isinstance(action, CreatePod)
                and self.pod_control.auto_delete_pvc
                and self.pod_control.claim_is_stale(sts, action.pod)
            ):
                log.info(
                    "pod waits for its stale claim to be removed",
                    statefulset=key,
                    pod=action.pod["metadata"]["name"],
                )
                stale_delay = STALE_CLAIM_REQUEUE
                continue
            try:
                if isinstance(action, CreatePod):
                    await self.pod_control.create_pod(sts, key, action.pod)
                elif isinstance(action, DeletePod | PrepareDelete):
                    await self.pod_control.remove(sts, key, action, now)
                    if (
                        isinstance(action, DeletePod)
                        and action.reason == "condemned"
                        and retention.get("whenScaled") == PVC_DELETE
                    ):
                        await self.pod_control.delete_claims(sts, ordinal_of(action.pod))
                elif isinstance(action, FixIdentity):
                    await self.pod_control.fix_identity(sts, action.pod, action.patch)
                elif isinstance(action, EnsureClaims):
                    await self.pod_control.create_claims(sts, action.pod)
                elif isinstance(action, AlignClaimOwners):
                    await self.pod_control.align_claim_owners(sts, action.pod, action.condemned)
            except Exception as exc:
                failed = (
                    CONDITION_FAILED_CREATE_POD
                    if isinstance(action, CreatePod)
                    else CONDITION_FAILED_UPDATE_POD
                )
                set_failure_condition(status, failed, f"StatefulPodControl failed: {exc}", now)
                raise
        return True, stale_delay

    def _claims_of(self, sts: Obj) -> ClaimsOf | None:
        """How the rolling update sees a pod's claims when they are resized with it (gate
        StatefulSetAutoResizePVCGate and ``volumeClaimUpdateStrategy: OnPodRollingUpdate``); None
        otherwise, and the update leaves claims alone."""
        spec = sts.get("spec") or {}
        strategy = section(spec, "volumeClaimUpdateStrategy").get("type")
        if not self.auto_resize_pvc or strategy != VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE:
            return None
        namespace = sts["metadata"].get("namespace", "")

        def lookup(name: str) -> Obj | None:
            return self.pvcs.get(f"{namespace}/{name}")

        return lambda pod: pod_claims_state(sts, pod, lookup)

    def _count_claims(self, sts: Obj, status: dict[str, Any], pods: Iterable[Obj]) -> None:
        """``updatePVCStatus``: ``status.volumeClaims`` from the claims in the informer (None
        clears the field when the set has no templates, as upstream's omitempty)."""
        namespace = sts["metadata"].get("namespace", "")
        counted = volume_claim_statuses(sts, pods, lambda name: self.pvcs.get(f"{namespace}/{name}"))
        status["volumeClaims"] = counted or None

    async def _pre_download(self, sts: Obj, key: str, current: Obj, update: Obj) -> None:
        """``doPreDownload``: an optimisation, so a failure is logged and the pass goes on."""
        if self.predownloader is None:
            return
        try:
            plan = predownload.plan_pre_download(
                sts,
                current,
                update,
                env_from_metadata=self.gates.enabled(features.IN_PLACE_UPDATE_ENV_FROM_METADATA),
                vertical_scaling=self.gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING),
            )
            await self.predownloader.apply(sts, update, plan)
        except Exception as exc:
            log.error("failed to pre-download images", statefulset=key, error=str(exc))
