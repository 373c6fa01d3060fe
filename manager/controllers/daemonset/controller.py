"""Wiring of the Advanced DaemonSet controller: informers, event handlers, expectations bookkeeping.

Creations are expected per target node (a pod is created by ``generateName``, so its name is only
known once the server answers, while the node it is bound to is known up front); deletions per pod
name. An orphan pod (no controller reference) that appears or changes labels wakes every DaemonSet
of its namespace whose selector matches it, so one of them can adopt it (no expectation is
observed for it: nobody waits for an orphan). A Node that appears, disappears, or changes labels,
taints or readiness can change where every DaemonSet wants a pod, so it wakes them all.
"""

from __future__ import annotations

from typing import Any

from kruise.api import features
from kruise.api.objects import conditions_of
from kruise.control.common.nodeeligibility import target_node_name
from kruise.control.daemonset.backoff import FailedPodsBackoff
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.ownedpods import watch_owned_pods
from kruise.kube.resources import (
    ADVANCED_DAEMONSETS,
    CONTROLLER_REVISIONS,
    IMAGEPULLJOBS,
    NODES,
    PODS,
    object_key,
)
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.daemonset.reconciler import DaemonSetReconciler
from kruise.manager.controllers.daemonset.status import STATUS_PACE_SECONDS
from kruise.manager.controllers.orphans import watch_orphans
from kruise.manager.writers.ownership import selector_of
from kruise.manager.writers.predownload import PreDownloadWriter

NAME = "daemonset"
KIND = "DaemonSet"
GROUP = "apps.kruise.io"

owner_key = enqueue_owner(KIND, GROUP)


def build(ctx: ManagerContext) -> Controller:
    daemonsets = ctx.informers.informer(ADVANCED_DAEMONSETS)
    pods = ctx.informers.informer(PODS)
    nodes = ctx.informers.informer(NODES)
    revisions = ctx.informers.informer(CONTROLLER_REVISIONS)
    scale_expectations = ScaleExpectations(ctx.clock, ctx.expectation_timeout)
    rv_expectations = ResourceVersionExpectations(ctx.clock, ctx.expectation_timeout)
    recorder = ctx.recorder("daemonset-controller")
    predownloader = None
    gates = ctx.feature_gates
    if gates.enabled(features.KRUISE_DAEMON) and gates.enabled(
        features.PRE_DOWNLOAD_IMAGE_FOR_DAEMONSET_UPDATE
    ):
        jobs = ctx.informers.informer(IMAGEPULLJOBS)
        predownloader = PreDownloadWriter(ctx.client, recorder, rv_expectations, jobs)
    reconciler = DaemonSetReconciler(
        ctx.client,
        recorder,
        ctx.feature_gates,
        daemonsets=daemonsets,
        pods=pods,
        nodes=nodes,
        revisions=revisions,
        scale_expectations=scale_expectations,
        rv_expectations=rv_expectations,
        wall=ctx.clock.wall,
        clock=ctx.clock,
        monotonic=ctx.clock.now,
        failed_backoff=FailedPodsBackoff(),
        status_pace_seconds=STATUS_PACE_SECONDS,
        predownloader=predownloader,
        resize_subresource=ctx.resize_subresource,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(daemonsets, enqueue_object)
    controller.watch(revisions, owner_key)

    def wake_all(*_: Any) -> None:
        for ds in daemonsets.list():
            controller.queue.add(object_key(ds))

    def node_updated(old: dict[str, Any], new: dict[str, Any]) -> None:
        if _scheduling_view(old) != _scheduling_view(new):
            wake_all()

    watch_owned_pods(
        controller,
        pods,
        owner_key,
        scale_expectations,
        rv_expectations,
        creation_name=lambda pod: target_node_name(pod) or "",
    )
    nodes.add_event_handler(on_add=wake_all, on_update=node_updated, on_delete=wake_all)

    # getPodDaemonSets for an orphan: every DaemonSet of its namespace selecting it
    watch_orphans(controller, pods, daemonsets, lambda ds, pod: selector_of(ds)(pod))
    return controller


def _scheduling_view(node: dict[str, Any]) -> tuple[Any, ...]:
    """What of a Node the daemon-pod decision reads (upstream's nodeInSameCondition plus labels/taints)."""
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    conditions = sorted((c.get("type"), c.get("status")) for c in conditions_of(node))
    return meta.get("labels") or {}, spec.get("taints") or [], bool(spec.get("unschedulable")), conditions
