"""Wiring of the PersistentPodState controller.

A PersistentPodState wakes on its own changes. A StatefulSet pod wakes its PersistentPodState (the
one named by its injected annotation, else the one targeting its controller) when it turns Ready,
starts terminating or is deleted. A StatefulSet (apps/v1 or Advanced) wakes the auto-generation of
its PersistentPodState when created annotated for it or when one of those annotations changes, and
wakes the PersistentPodState targeting it when it starts terminating or is deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api.keys import ANNOTATION_INJECTED_PERSISTENT_POD_STATE
from kruise.control import persistentpodstate as plan
from kruise.control import podstatus
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    NODES,
    PERSISTENT_POD_STATES,
    PODS,
    STATEFULSETS_APPS,
    ResourceRef,
)
from kruise.kube.store import NAMESPACE_INDEX, unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.persistentpodstate.reconciler import PersistentPodStateReconciler

NAME = "persistentpodstate"

Obj = dict[str, Any]


def pps_of_pod(pod: Obj, states: SharedInformer) -> list[str]:
    meta = pod.get("metadata") or {}
    ref = plan.controller_ref(pod)
    if ref is None or ref.get("kind") != "StatefulSet":
        return []
    namespace = meta.get("namespace") or ""
    injected = (meta.get("annotations") or {}).get(ANNOTATION_INJECTED_PERSISTENT_POD_STATE)
    if injected:
        return [f"{namespace}/{injected}"] if states.get(f"{namespace}/{injected}") else []
    pps = plan.select_for(
        states.by_index(NAMESPACE_INDEX, namespace), ref.get("apiVersion") or "", "StatefulSet",
        ref.get("name") or "",
    )  # fmt: skip
    return [f"{namespace}/{pps['metadata']['name']}"] if pps else []


def pod_handlers(states: SharedInformer, enqueue: Callable[[str], None]) -> dict[str, Any]:
    """Creations are ignored (a new pod is not Ready yet), as upstream."""

    def wake(pod: Obj) -> None:
        for key in pps_of_pod(pod, states):
            enqueue(key)

    def on_update(old: Obj, new: Obj) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        started_terminating = not old["metadata"].get("deletionTimestamp") and new["metadata"].get(
            "deletionTimestamp"
        )
        became_ready = not podstatus.is_ready(old) and podstatus.is_ready(new)
        if started_terminating or became_ready:
            wake(new)

    return {"on_update": on_update, "on_delete": lambda pod: wake(unwrap_tombstone(pod))}


def workload_handlers(
    ref: ResourceRef, states: SharedInformer, enqueue: Callable[[str], None]
) -> dict[str, Any]:
    api_version = f"{ref.group}/{ref.version}"

    def generate(obj: Obj) -> None:
        meta = obj["metadata"]
        enqueue(plan.generate_key(meta["namespace"], api_version, ref.kind, meta["name"]))

    def wake_target(obj: Obj) -> None:
        meta = obj["metadata"]
        pps = plan.select_for(
            states.by_index(NAMESPACE_INDEX, meta["namespace"]), api_version, ref.kind, meta["name"]
        )
        if pps is not None:
            enqueue(f"{meta['namespace']}/{pps['metadata']['name']}")

    def on_add(obj: Obj) -> None:
        if plan.wants_generated(obj):
            generate(obj)

    def on_update(old: Obj, new: Obj) -> None:
        old_ann = old["metadata"].get("annotations") or {}
        new_ann = new["metadata"].get("annotations") or {}
        if any(old_ann.get(k) != new_ann.get(k) for k in plan.GENERATION_ANNOTATIONS):
            generate(new)
        if not old["metadata"].get("deletionTimestamp") and new["metadata"].get("deletionTimestamp"):
            wake_target(new)

    return {"on_add": on_add, "on_update": on_update, "on_delete": lambda o: wake_target(unwrap_tombstone(o))}


def build(ctx: ManagerContext) -> Controller:
    states = ctx.informers.informer(PERSISTENT_POD_STATES)
    pods = ctx.informers.informer(PODS)
    nodes = ctx.informers.informer(NODES)
    workloads = {
        "apps": ctx.informers.informer(STATEFULSETS_APPS),
        "apps.kruise.io": ctx.informers.informer(ADVANCED_STATEFULSETS),
    }
    reconciler = PersistentPodStateReconciler(
        ctx.client, states=states, pods=pods, nodes=nodes, workloads=workloads
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(states)
    pods.add_event_handler(**pod_handlers(states, controller.queue.add))
    for ref in (STATEFULSETS_APPS, ADVANCED_STATEFULSETS):
        informer = workloads[ref.group]
        informer.add_event_handler(**workload_handlers(ref, states, controller.queue.add))
    return controller
