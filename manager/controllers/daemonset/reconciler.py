"""One Advanced DaemonSet reconcile (upstream ``syncDaemonSet``): observe, plan with ``kruise.control``,
write.

Order, as upstream: claim (adopt/release) the revisions and make the current one exist; claim the
pods; if earlier creates/deletes or pod
writes are not in the cache yet, only refresh the status; otherwise run the manage step (pods onto
eligible nodes, off ineligible ones); if that wrote nothing, advance in-place updates and run one
rolling-update pass (skipped while ``paused``); prune revision history; write the status with
``observedGeneration``.

This module keeps the order and what decides between steps (caches, expectations, revisions); the
steps' writes live beside it, as CloneSet's do: ``nodesync.py`` creates and deletes pods per node for
both the manage plan and the rolling update, ``updater.py`` carries out the update half,
``status.py`` writes the paced status.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import structlog

from kruise.api import features
from kruise.api.common import IntOrStringError, LabelSelector, scaled_value
from kruise.api.daemonset import STRATEGY_ROLLING_UPDATE
from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH
from kruise.api.objects import Obj, section, spec_of, status_of
from kruise.control.common.nodeeligibility import NodeFit, node_name, should_run_on_node
from kruise.control.daemonset import predownload
from kruise.control.daemonset.backoff import FailedPodsBackoff, backoff_key
from kruise.control.daemonset.history import plan_history, revision_hash, revisions_to_prune
from kruise.control.daemonset.manage import group_by_node, plan_manage
from kruise.control.daemonset.progressive import limit_creation
from kruise.control.daemonset.rollingupdate import RollingUpdateSettings
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock
from kruise.kube.controller import Result
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import ADVANCED_DAEMONSETS, CONTROLLER_REVISIONS, PODS
from kruise.manager.controllers.daemonset.nodesync import CREATE_PASS_SECONDS, NodeSync, rolling
from kruise.manager.controllers.daemonset.status import StatusUpdater
from kruise.manager.controllers.daemonset.updater import Updater
from kruise.manager.writers.expectations import Overtime, scale_hold, writes_pending
from kruise.manager.writers.inplace import InPlaceWriter
from kruise.manager.writers.ownership import claim_objects, claimed_view, selector_of
from kruise.manager.writers.predownload import PreDownloadWriter
from kruise.manager.writers.revisions import RevisionWriter
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.daemonset")


class DaemonSetReconciler:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        gates: features.FeatureGates,
        *,
        daemonsets: SharedInformer,
        pods: SharedInformer,
        nodes: SharedInformer,
        revisions: SharedInformer,
        scale_expectations: ScaleExpectations,
        rv_expectations: ResourceVersionExpectations,
        wall: Any,
        clock: Clock | None = None,
        create_pass_seconds: float = CREATE_PASS_SECONDS,
        monotonic: Any = None,
        failed_backoff: FailedPodsBackoff | None = None,
        status_pace_seconds: float = 0.0,
        predownloader: PreDownloadWriter | None = None,
        resize_subresource: bool = False,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, ADVANCED_DAEMONSETS)
        self.revision_writer = RevisionWriter(client)
        self.predownloader = predownloader
        self.recorder = recorder
        self.gates = gates
        self.daemonsets, self.pods, self.nodes, self.revisions = daemonsets, pods, nodes, revisions
        self.scale_expectations = scale_expectations
        self.rv_expectations = rv_expectations
        self.wall = wall
        self._clock = clock or RealClock()
        self.monotonic = monotonic or self._clock.now
        self.failed_backoff = failed_backoff or FailedPodsBackoff()
        self.status = StatusUpdater(
            self.status_writer, pods, wall, clock=self._clock, pace_seconds=status_pace_seconds
        )
        # upstream's ADS runs the shared in-place code with the global gates, so resizes apply here too
        self.inplace = InPlaceWriter(
            client,
            rv_expectations,
            vertical_scaling=gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING),
            resize_subresource=resize_subresource,
        )
        self.node_sync = NodeSync(
            client,
            recorder,
            scale_expectations,
            pods,
            self.inplace.pods,
            wall,
            clock=self._clock,
            create_pass_seconds=create_pass_seconds,
        )
        self.updater = Updater(recorder, gates, pods, self.inplace, self.node_sync)

    # The pacing knobs stay settable on the reconciler (tests and benchmarks tune them after
    # construction); they belong to the parts that act on them.

    @property
    def clock(self) -> Clock:
        return self._clock

    @clock.setter
    def clock(self, clock: Clock) -> None:
        self._clock = clock
        self.node_sync.clock = clock
        self.status.clock = clock

    @property
    def create_pass_seconds(self) -> float:
        return self.node_sync.create_pass_seconds

    @create_pass_seconds.setter
    def create_pass_seconds(self, seconds: float) -> None:
        self.node_sync.create_pass_seconds = seconds

    @property
    def status_pace_seconds(self) -> float:
        return self.status.pace_seconds

    @status_pace_seconds.setter
    def status_pace_seconds(self, seconds: float) -> None:
        self.status.pace_seconds = seconds

    # ---- the pass ---------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result | None:
        cached = self.daemonsets.get(key)
        if cached is None:
            self.scale_expectations.delete(key)
            self.status.forget(key)
            return None
        ds: dict[str, Any] = copy.deepcopy(dict(cached))
        if ds["metadata"].get("deletionTimestamp"):
            return None
        spec = ds.get("spec") or {}
        try:
            selector = LabelSelector.model_validate(section(spec, "selector"))
        except ValueError as exc:
            log.error("invalid selector, not retrying", daemonset=key, error=str(exc))
            return None
        if not selector.match_labels and not selector.match_expressions:
            self.recorder.event(
                ds,
                "Warning",
                "SelectingAll",
                "This DaemonSet is selecting all pods. A non-empty selector is required.",
            )
            return None

        nodes = sorted(self.nodes.list(), key=node_name)
        template = spec.get("template") or {}
        fits: dict[str, NodeFit] = {}

        def fit_of(node: Obj) -> NodeFit:
            name = node_name(node)
            if name not in fits:
                fits[name] = should_run_on_node(template, node)
            return fits[name]

        matches = selector_of(ds)
        current, old = await self._history(ds, matches)
        update_hash = revision_hash(current)
        delays: list[float] = []
        # getDaemonPods: every pass (the status-only one too) adopts and releases first
        await claim_objects(self.client, ds, ADVANCED_DAEMONSETS, PODS, self.pods, matches)

        if not self._expectations_satisfied(key, ds, delays):
            await self.status.update(ds, nodes, fit_of, update_hash, observed=False, delays=delays)
            return _result(delays)

        await self._pre_download(ds, key, current, old)

        now = self.wall()
        settings = RollingUpdateSettings.from_daemonset(ds)
        node_to_pods = group_by_node(self._owned_pods(ds))
        manage = plan_manage(
            nodes,
            fit_of,
            node_to_pods,
            update_hash,
            allow_surge=_allow_surge(ds),
            min_ready_seconds=settings.min_ready_seconds,
            now=now,
            admit_failed=lambda node: self.failed_backoff.admit(backoff_key(ds, node), self.monotonic()),
        )
        for pod, node in manage.failed_pods:
            self.recorder.event(
                ds,
                "Warning",
                "FailedDaemonPod",
                f"Found failed daemon pod {ds['metadata']['namespace']}/{pod} on node {node}, "
                "will try to kill it",
            )
        if manage.requeue_after:
            delays.append(manage.requeue_after)
        # partitionedScaling: the partition also holds back pods on nodes that have none yet
        to_create = limit_creation(
            ds,
            manage.nodes_to_create,
            nodes,
            lambda n: fit_of(n).should_run,
            node_to_pods,
            update_hash,
            settings.template_generation,
        )
        await self.node_sync.sync(ds, key, manage.pods_to_delete, to_create, update_hash)

        if not self._expectations_satisfied(key, ds, delays):
            await self.status.update(ds, nodes, fit_of, update_hash, observed=False, delays=delays)
            return _result(delays)

        await self.updater.refresh_in_place(ds, now, delays)
        if settings.strategy_type == STRATEGY_ROLLING_UPDATE and not settings.paused:
            await self.updater.rolling_update(ds, key, nodes, fit_of, current, old, settings, now)

        await self._cleanup_history(ds, old)
        await self.status.update(ds, nodes, fit_of, update_hash, observed=True, delays=delays)
        return _result(delays)

    async def _pre_download(self, ds: Obj, key: str, current: Obj, old: Sequence[Obj]) -> None:
        """Image pre-download for the rollout under way (an optimisation: a failure is logged and
        the pass goes on). A revision label written by an earlier pass but not yet in the cache
        waits for it rather than deciding twice."""
        if self.predownloader is None:
            return
        self.rv_expectations.observe(dict(current))
        if not self.rv_expectations.is_satisfied(dict(current)):
            return
        try:
            await self.predownloader.apply(ds, current, predownload.plan_pre_download(ds, current, old))
        except Exception as exc:
            log.error("failed to pre-download images", daemonset=key, error=str(exc))

    # ---- reading ------------------------------------------------------------------------------

    def _owned_pods(self, ds: Obj) -> list[Obj]:
        """The pods this pass works with: controlled and matching, plus orphans being adopted."""
        return claimed_view(ds, self.pods, selector_of(ds))

    def _expectations_satisfied(self, key: str, ds: Obj, delays: list[float]) -> bool:
        hold = scale_hold(self.scale_expectations, key, Overtime.FORGET_AND_REQUEUE)
        if hold is not None:
            delays.extend([hold.requeue_after] if hold.requeue_after is not None else [])
            return False
        if writes_pending(self.rv_expectations, self._owned_pods(ds), observe=True):
            delays.append(self.rv_expectations.timeout)
            return False
        return True

    # ---- revisions ----------------------------------------------------------------------------

    async def _history(self, ds: dict[str, Any], matches: Any) -> tuple[Obj, tuple[Obj, ...]]:
        """constructHistory: claim the revisions (adopt/release), then find or create the current one."""
        await claim_objects(
            self.client, ds, ADVANCED_DAEMONSETS, CONTROLLER_REVISIONS, self.revisions, matches
        )
        owned = claimed_view(ds, self.revisions, matches)
        plan = plan_history(ds, owned)
        if plan.create is not None:
            return await self._create_revision(ds, plan.create), plan.old
        assert plan.current is not None
        current = plan.current
        if plan.renumber is not None:
            current = await self.revision_writer.renumber(current, plan.renumber)
        return current, plan.old

    async def _create_revision(self, ds: dict[str, Any], revision: Obj) -> Obj:
        """snapshot: an existing revision of that name with the same data is reused; one with other
        data is a hash collision — bump ``status.collisionCount`` and let the next pass hash again."""
        stored = await self.revision_writer.store(revision)
        if stored is not None:
            return stored
        collision = int(status_of(ds).get("collisionCount") or 0) + 1
        await self.status_writer.write(ds, {"collisionCount": collision}, partial=True)
        raise RuntimeError(
            f"controller revision {revision['metadata']['name']} collides; collisionCount now {collision}"
        )

    async def _cleanup_history(self, ds: Obj, old: Sequence[Obj]) -> None:
        live = {
            section(p["metadata"], "labels").get(LABEL_CONTROLLER_REVISION_HASH, "")
            for p in self._owned_pods(ds)
        }
        limit = spec_of(ds).get("revisionHistoryLimit")
        await self.revision_writer.delete(ds["metadata"]["namespace"], revisions_to_prune(old, live, limit))


# ---- helpers ----------------------------------------------------------------------------------


def _result(delays: Sequence[float]) -> Result | None:
    positive = [d for d in delays if d > 0]
    return Result(requeue_after=min(positive)) if positive else None


def _allow_surge(ds: Obj) -> bool:
    """allowSurge: a RollingUpdate whose maxSurge, scaled against one node, is positive."""
    strategy = spec_of(ds).get("updateStrategy") or {}
    if (strategy.get("type") or STRATEGY_ROLLING_UPDATE) != STRATEGY_ROLLING_UPDATE:
        return False
    surge = rolling(ds).get("maxSurge")
    if surge is None:
        return False
    try:
        return scaled_value(surge, 1, round_up=True) > 0
    except IntOrStringError:
        return False
