"""Wiring of the PodProbeMarker controller.

A marker wakes on its own changes. A pod wakes the markers of its namespace whose selector matches
its old or new labels when something matching depends on changes (labels, node, IP, Initialized,
active). A NodePodProbe that appears (a new node) wakes every marker, since the probes of pods
already on that node could not be written before it existed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api.common import LabelSelector
from kruise.control import podstatus
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import NODE_POD_PROBES, POD_PROBE_MARKERS, PODS, object_key
from kruise.kube.store import NAMESPACE_INDEX, unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.podprobemarker.reconciler import PodProbeMarkerReconciler

NAME = "podprobemarker"

Obj = dict[str, Any]


def _matching_facts(pod: Obj) -> tuple[Any, ...]:
    initialized = podstatus.condition(pod, "Initialized") or {}
    return (
        (pod.get("metadata") or {}).get("labels") or {},
        (pod.get("spec") or {}).get("nodeName"),
        (pod.get("status") or {}).get("podIP"),
        initialized.get("status"),
        podstatus.is_active(pod),
    )


def markers_of_pod(pod: Obj, markers: SharedInformer) -> list[str]:
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    keys = []
    for ppm in markers.by_index(NAMESPACE_INDEX, meta.get("namespace") or ""):
        selector = (ppm.get("spec") or {}).get("selector")
        if selector and LabelSelector.model_validate(selector).matches(labels):
            keys.append(object_key(ppm))
    return keys


def pod_handlers(markers: SharedInformer, enqueue: Callable[[str], None]) -> dict[str, Any]:
    def wake(*pods: Obj) -> None:
        for key in sorted({k for pod in pods for k in markers_of_pod(pod, markers)}):
            enqueue(key)

    def on_update(old: Obj, new: Obj) -> None:
        if _matching_facts(old) != _matching_facts(new):
            wake(old, new)

    return {"on_add": wake, "on_update": on_update, "on_delete": lambda pod: wake(unwrap_tombstone(pod))}


def build(ctx: ManagerContext) -> Controller:
    markers = ctx.informers.informer(POD_PROBE_MARKERS)
    pods = ctx.informers.informer(PODS)
    node_probes = ctx.informers.informer(NODE_POD_PROBES)
    reconciler = PodProbeMarkerReconciler(ctx.client, markers=markers, pods=pods, node_probes=node_probes)
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(markers)
    pods.add_event_handler(**pod_handlers(markers, controller.queue.add))
    node_probes.add_event_handler(
        on_add=lambda _npp: [controller.queue.add(object_key(m)) for m in markers.list()]
    )
    return controller
