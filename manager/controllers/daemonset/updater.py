"""Carry out the update half of an Advanced DaemonSet pass: advance in-flight in-place updates, then
one rolling-update step.

The two are kept together because they share what a restart relies on: the pods' labels and
conditions, not memory, say how far each update got. A pass first moves every in-place update one
step (the InPlaceUpdateReady gate, the grace period, KruisePodReady on a new pod), then asks
``kruise.control.daemonset.rollingupdate`` which pods go now; with ``InPlaceIfPossible`` and no
surge those are updated in place where only images changed, and the rest are deleted and recreated
through the same per-node executor the manage step uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import structlog

from kruise.api import features
from kruise.api.daemonset import ROLLING_IN_PLACE_IF_POSSIBLE
from kruise.api.keys import CONDITION_INPLACE_UPDATE_READY, LABEL_CONTROLLER_REVISION_HASH
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of
from kruise.control.common import podreadiness
from kruise.control.common.inplace.spec import calculate_update_spec
from kruise.control.common.nodeeligibility import NodeFit, node_name
from kruise.control.daemonset.history import revision_hash
from kruise.control.daemonset.manage import group_by_node
from kruise.control.daemonset.rollingupdate import (
    RollingUpdateError,
    RollingUpdateSettings,
    plan_rolling_update,
)
from kruise.kube.events import EventRecorder
from kruise.kube.informer import SharedInformer
from kruise.manager.controllers.daemonset.nodesync import NodeSync, rolling_type
from kruise.manager.writers.inplace import InPlaceWriter
from kruise.manager.writers.ownership import claimed_view, selector_of

log = structlog.get_logger("kruise.manager.daemonset")


class Updater:
    def __init__(
        self,
        recorder: EventRecorder,
        gates: features.FeatureGates,
        pods: SharedInformer,
        inplace: InPlaceWriter,
        node_sync: NodeSync,
    ) -> None:
        self.recorder = recorder
        self.gates = gates
        self.pods = pods
        self.inplace = inplace
        self.node_sync = node_sync

    async def rolling_update(
        self,
        ds: dict[str, Any],
        key: str,
        nodes: Sequence[Obj],
        fit_of: Callable[[Obj], NodeFit],
        current: Obj,
        old: Sequence[Obj],
        settings: RollingUpdateSettings,
        now: datetime,
    ) -> None:
        update_hash = revision_hash(current)
        eligible = {node_name(n) for n in nodes if fit_of(n).should_run}
        node_to_pods = group_by_node(claimed_view(ds, self.pods, selector_of(ds)))
        try:
            plan = plan_rolling_update(
                settings,
                nodes,
                eligible,
                node_to_pods,
                update_hash,
                now,
                prune_ineligible_nodes=self.gates.enabled(features.DAEMONSET_PRUNE_INELIGIBLE_NODES),
            )
        except RollingUpdateError as exc:
            self.recorder.event(ds, "Warning", "InvalidRollingUpdate", str(exc))
            log.error("rolling update not evaluable", daemonset=key, error=str(exc))
            return
        if plan.budget is None:
            return
        to_delete = list(plan.pods_to_delete)
        if plan.budget.max_surge == 0 and rolling_type(ds) == ROLLING_IN_PLACE_IF_POSSIBLE:
            to_delete = await self._update_in_place(ds, to_delete, current, old, now)
        await self.node_sync.sync(ds, key, to_delete, plan.nodes_to_create, update_hash)

    async def _update_in_place(
        self, ds: Obj, names: Sequence[str], current: Obj, old: Sequence[Obj], now: datetime
    ) -> list[str]:
        """inPlaceUpdatePods: pods with the InPlaceUpdateReady gate whose revision differs from the
        current one only in images (and metadata) are updated in place; the rest are recreated."""
        namespace = ds["metadata"]["namespace"]
        update_hash = revision_hash(current)
        recreate: list[str] = []
        for name in names:
            pod = self.pods.get(f"{namespace}/{name}")
            spec = None
            if pod is not None and _has_in_place_gate(pod):
                label = section(pod["metadata"], "labels").get(LABEL_CONTROLLER_REVISION_HASH)
                previous = next((r for r in old if revision_hash(r) == label), None)
                spec = calculate_update_spec(
                    previous,
                    current,
                    revision_name=update_hash,
                    vertical_scaling=self.inplace.vertical_scaling,
                )
            if pod is None or spec is None:
                recreate.append(name)
                continue
            try:
                await self.inplace.start(pod, spec, now, write_revision=_write_revision)
            except Exception as exc:
                self.recorder.event(
                    ds,
                    "Warning",
                    "FailedUpdatePodInPlace",
                    f"failed to update pod {name} in-place(revision {current['metadata']['name']}): {exc}",
                )
                raise
            self.recorder.event(
                ds, "Normal", "SuccessfulUpdatePodInPlace", f"successfully update pod {name} in-place"
            )
        return recreate

    async def refresh_in_place(self, ds: Obj, now: datetime, delays: list[float]) -> None:
        """refreshUpdateStates: move every in-flight in-place update one step. A new pod's first
        refresh writes `InPlaceUpdateReady` and `KruisePodReady` together (or the latter alone when the
        pod has no in-place gate): one status write per new pod. The pods are refreshed at once (each
        pod's writes are its own): one after the other, 100 new pods' status writes took twice what
        the client's rate limit allows."""

        async def refresh_one(pod: Obj) -> None:
            step = self.inplace.refresh_step(pod, now, _matches_revision)
            if not meta_of(pod).get("deletionTimestamp"):
                step = podreadiness.fold_initial_condition(step, pod, now)
            outcome = await self.inplace.refresh(pod, now, _matches_revision, step)
            if outcome.requeue_after:
                delays.append(outcome.requeue_after)

        results = await asyncio.gather(
            *(refresh_one(p) for p in claimed_view(ds, self.pods, selector_of(ds))), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result


def _has_in_place_gate(pod: Obj) -> bool:
    gates = spec_of(pod).get("readinessGates") or []
    return any(g.get("conditionType") == CONDITION_INPLACE_UPDATE_READY for g in gates)


def _write_revision(obj: dict[str, Any], revision: str) -> None:
    obj.setdefault("metadata", {}).setdefault("labels", {})[LABEL_CONTROLLER_REVISION_HASH] = revision


def _matches_revision(pod: Mapping[str, Any], revision: str) -> bool:
    return labels_of(pod).get(LABEL_CONTROLLER_REVISION_HASH) == revision
