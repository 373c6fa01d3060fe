"""Wiring of the NodePodProbe controller; the queue holds node names.

A node wakes its own name (created: make its NodePodProbe; deleted: delete it). A NodePodProbe wakes
its node when created, deleted, or its spec or status changed. A pod on a node wakes that node when it
is deleted, starts terminating or finishes (its entry is pruned).
"""

from __future__ import annotations

from kruise.api.objects import MutableObj, spec_of
from kruise.control.common import podstatus
from kruise.kube.controller import Controller
from kruise.kube.resources import NODE_POD_PROBES, NODES, POD_PROBE_MARKERS, PODS
from kruise.kube.store import unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.nodepodprobe.reconciler import NodePodProbeReconciler

NAME = "nodepodprobe"


def node_of(obj: MutableObj) -> list[str]:
    return [obj["metadata"]["name"]]


def node_of_pod(pod: MutableObj) -> list[str]:
    node = spec_of(pod).get("nodeName")
    return [node] if node else []


def deletion_started(old: MutableObj, new: MutableObj) -> bool:
    return bool(old["metadata"].get("deletionTimestamp")) != bool(new["metadata"].get("deletionTimestamp"))


def content_changed(old: MutableObj, new: MutableObj) -> bool:
    return old.get("spec") != new.get("spec") or old.get("status") != new.get("status")


def build(ctx: ManagerContext) -> Controller:
    node_probes = ctx.informers.informer(NODE_POD_PROBES)
    nodes = ctx.informers.informer(NODES)
    pods = ctx.informers.informer(PODS)
    markers = ctx.informers.informer(POD_PROBE_MARKERS)
    reconciler = NodePodProbeReconciler(
        ctx.client, node_probes=node_probes, nodes=nodes, pods=pods, markers=markers
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(nodes, node_of, update_filter=deletion_started)
    controller.watch(node_probes, node_of, update_filter=content_changed)

    def on_pod_update(old: MutableObj, new: MutableObj) -> None:
        if podstatus.is_active(old) and not podstatus.is_active(new):
            for key in node_of_pod(new):
                controller.queue.add(key)

    pods.add_event_handler(
        on_update=on_pod_update,
        on_delete=lambda pod: [controller.queue.add(k) for k in node_of_pod(unwrap_tombstone(pod))],
    )
    return controller
