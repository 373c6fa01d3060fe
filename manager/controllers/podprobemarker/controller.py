"""Wiring of the PodProbeMarker controller.

A marker wakes on its own changes. A pod wakes the markers of its namespace whose selector matches
its old or new labels when something matching depends on changes (labels, node, IP, Initialized,
active). A serverless pod (on a virtual-kubelet node) whose conditions changed type->status wakes,
with gate EnablePodProbeMarkerOnServerless, the markers it carries (or matches) that have a probe
reporting into a changed condition type: its runtime reports probe results there. A NodePodProbe or
Node that appears (or a Node that becomes or stops being virtual-kubelet) wakes every marker, since
the probes of pods already on that node could not be written (nor the pods told apart as normal or
serverless) before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api import features
from kruise.api.common import LabelSelector
from kruise.api.conditions import condition_of
from kruise.api.objects import MutableObj, labels_of, meta_of, spec_of, status_of
from kruise.control.common import podstatus
from kruise.control.podprobemarker import serverless
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import NODE_POD_PROBES, NODES, POD_PROBE_MARKERS, PODS, object_key
from kruise.kube.store import NAMESPACE_INDEX, unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.podprobemarker.reconciler import PodProbeMarkerReconciler

NAME = "podprobemarker"


def _matching_facts(pod: MutableObj) -> tuple[Any, ...]:
    initialized = condition_of(pod, "Initialized") or {}
    return (
        labels_of(pod),
        spec_of(pod).get("nodeName"),
        status_of(pod).get("podIP"),
        initialized.get("status"),
        podstatus.is_active(pod),
    )


def markers_of_pod(pod: MutableObj, markers: SharedInformer) -> list[str]:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    keys = []
    for ppm in markers.by_index(NAMESPACE_INDEX, meta.get("namespace") or ""):
        selector = spec_of(ppm).get("selector")
        if selector and LabelSelector.model_validate(selector).matches(labels):
            keys.append(object_key(ppm))
    return keys


def serverless_markers_to_wake(
    old: MutableObj, new: MutableObj, markers: SharedInformer, nodes: SharedInformer
) -> list[str]:
    """Keys of the markers a serverless pod's condition change concerns (none for other pods)."""
    initialized = condition_of(new, "Initialized") or {}
    node = spec_of(new).get("nodeName")
    if not podstatus.is_active(new) or initialized.get("status") != "True" or not node:
        return []
    if not serverless.is_serverless_node(nodes.get(node)):
        return []
    changed = serverless.changed_condition_types(old, new)
    if not changed:
        return []
    namespace = meta_of(new).get("namespace") or ""
    candidates = serverless.markers_for_pod(new, markers.by_index(NAMESPACE_INDEX, namespace))
    return [object_key(m) for m in serverless.markers_probing(candidates, changed)]


def pod_handlers(
    markers: SharedInformer,
    enqueue: Callable[[str], None],
    nodes: SharedInformer | None = None,
) -> dict[str, Any]:
    """`nodes` given (gate EnablePodProbeMarkerOnServerless): serverless pods' condition changes wake too."""

    def wake(*pods: MutableObj) -> None:
        for key in sorted({k for pod in pods for k in markers_of_pod(pod, markers)}):
            enqueue(key)

    def on_update(old: MutableObj, new: MutableObj) -> None:
        if _matching_facts(old) != _matching_facts(new):
            wake(old, new)
        elif nodes is not None:
            for key in sorted(set(serverless_markers_to_wake(old, new, markers, nodes))):
                enqueue(key)

    return {"on_add": wake, "on_update": on_update, "on_delete": lambda pod: wake(unwrap_tombstone(pod))}


def build(ctx: ManagerContext) -> Controller:
    markers = ctx.informers.informer(POD_PROBE_MARKERS)
    pods = ctx.informers.informer(PODS)
    node_probes = ctx.informers.informer(NODE_POD_PROBES)
    nodes = ctx.informers.informer(NODES)
    serverless_marking = ctx.feature_gates.enabled(features.ENABLE_POD_PROBE_MARKER_ON_SERVERLESS)
    reconciler = PodProbeMarkerReconciler(
        ctx.client,
        markers=markers,
        pods=pods,
        node_probes=node_probes,
        nodes=nodes,
        serverless_marking=serverless_marking,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(markers)
    pods.add_event_handler(
        **pod_handlers(markers, controller.queue.add, nodes if serverless_marking else None)
    )

    def wake_all(_obj: MutableObj) -> None:
        for marker in markers.list():
            controller.queue.add(object_key(marker))

    node_probes.add_event_handler(on_add=wake_all)
    nodes.add_event_handler(
        on_add=wake_all,
        on_update=lambda old, new: (
            wake_all(new)
            if serverless.is_serverless_node(old) != serverless.is_serverless_node(new)
            else None
        ),
    )
    return controller
