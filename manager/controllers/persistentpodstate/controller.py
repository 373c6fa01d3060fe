"""Wiring of the PersistentPodState controller.

A PersistentPodState wakes on its own changes. A StatefulSet pod wakes its PersistentPodState (the
one named by its injected annotation, else the one targeting its controller) when it turns Ready,
starts terminating or is deleted. A StatefulSet (apps/v1 or Advanced) wakes the auto-generation of
its PersistentPodState when created annotated for it or when one of those annotations changes, and
wakes the PersistentPodState targeting it when it starts terminating or is deleted. The kinds of
kruise-configuration's `PPS_Watch_Custom_Workload_WhiteList` are treated as StatefulSets: their pods
wake their PersistentPodState, and each kind is watched (same handlers) once kruise-configuration
is seen naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from kruise.api.controllerref import controller_of
from kruise.api.keys import ANNOTATION_INJECTED_PERSISTENT_POD_STATE
from kruise.api.objects import MutableObj, section
from kruise.control.common import podstatus
from kruise.control.common.customworkloads import (
    StatefulSetLikeWhitelist,
    WhitelistError,
    parse_pps_whitelist,
)
from kruise.control.persistentpodstate import podstates
from kruise.control.persistentpodstate.podstates import NO_CUSTOM_WORKLOADS
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
from kruise.manager.configuration import configuration_informer, configuration_of
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.persistentpodstate.reconciler import (
    FOLLOW_CUSTOM_WORKLOADS,
    PersistentPodStateReconciler,
)

log = structlog.get_logger("kruise.manager.persistentpodstate")

NAME = "persistentpodstate"


def pps_of_pod(
    pod: MutableObj, states: SharedInformer, whitelist: StatefulSetLikeWhitelist = NO_CUSTOM_WORKLOADS
) -> list[str]:
    """The PersistentPodState a pod belongs to, when its controller is a StatefulSet or a kind of
    `whitelist` (PPS_Watch_Custom_Workload_WhiteList)."""
    meta = pod.get("metadata") or {}
    ref = controller_of(pod)
    if ref is None or not whitelist.allows(ref.get("apiVersion") or "", ref.get("kind") or ""):
        return []
    namespace = meta.get("namespace") or ""
    injected = section(meta, "annotations").get(ANNOTATION_INJECTED_PERSISTENT_POD_STATE)
    if injected:
        return [f"{namespace}/{injected}"] if states.get(f"{namespace}/{injected}") else []
    pps = podstates.select_for(
        states.by_index(NAMESPACE_INDEX, namespace), ref.get("apiVersion") or "", ref.get("kind") or "",
        ref.get("name") or "",
    )  # fmt: skip
    return [f"{namespace}/{pps['metadata']['name']}"] if pps else []


def pod_handlers(
    states: SharedInformer,
    enqueue: Callable[[str], None],
    whitelist: Callable[[], StatefulSetLikeWhitelist] = lambda: NO_CUSTOM_WORKLOADS,
) -> dict[str, Any]:
    """Creations are ignored (a new pod is not Ready yet), as upstream. `whitelist` is read on each
    event; one that does not parse wakes nothing (upstream logs it and skips the pod)."""

    def wake(pod: MutableObj) -> None:
        try:
            allowed = whitelist()
        except WhitelistError as exc:
            log.warning("PersistentPodState custom workload whitelist ignored", error=str(exc))
            return
        for key in pps_of_pod(pod, states, allowed):
            enqueue(key)

    def on_update(old: MutableObj, new: MutableObj) -> None:
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

    def generate(obj: MutableObj) -> None:
        meta = obj["metadata"]
        enqueue(podstates.generate_key(meta["namespace"], api_version, ref.kind, meta["name"]))

    def wake_target(obj: MutableObj) -> None:
        meta = obj["metadata"]
        pps = podstates.select_for(
            states.by_index(NAMESPACE_INDEX, meta["namespace"]), api_version, ref.kind, meta["name"]
        )
        if pps is not None:
            enqueue(f"{meta['namespace']}/{pps['metadata']['name']}")

    def on_add(obj: MutableObj) -> None:
        if podstates.wants_generated(obj):
            generate(obj)

    def on_update(old: MutableObj, new: MutableObj) -> None:
        old_ann = old["metadata"].get("annotations") or {}
        new_ann = new["metadata"].get("annotations") or {}
        if any(old_ann.get(k) != new_ann.get(k) for k in podstates.GENERATION_ANNOTATIONS):
            generate(new)
        if not old["metadata"].get("deletionTimestamp") and new["metadata"].get("deletionTimestamp"):
            wake_target(new)

    return {"on_add": on_add, "on_update": on_update, "on_delete": lambda o: wake_target(unwrap_tombstone(o))}


def configuration_handlers(namespace: str, enqueue: Callable[[str], None]) -> dict[str, Any]:
    """kruise-configuration appearing or changing asks to watch the whitelisted kinds."""

    def wake(*_: MutableObj) -> None:
        enqueue(f"{namespace}/{FOLLOW_CUSTOM_WORKLOADS}")

    return {"on_add": wake, "on_update": wake}


def build(ctx: ManagerContext) -> Controller:
    states = ctx.informers.informer(PERSISTENT_POD_STATES)
    config_maps = configuration_informer(ctx)
    configuration = configuration_of(config_maps)
    followed: set[ResourceRef] = set()

    def follow(ref: ResourceRef) -> None:
        # a whitelisted kind is watched from the first time it is named: its auto-generation
        # annotations and its deletion then wake the controller as a StatefulSet's do
        if ref in followed:
            return
        followed.add(ref)
        ctx.informers.informer(ref).add_event_handler(**workload_handlers(ref, states, controller.queue.add))
        ctx.informers.start()

    pods = ctx.informers.informer(PODS)
    nodes = ctx.informers.informer(NODES)
    workloads = {
        "apps": ctx.informers.informer(STATEFULSETS_APPS),
        "apps.kruise.io": ctx.informers.informer(ADVANCED_STATEFULSETS),
    }
    reconciler = PersistentPodStateReconciler(
        ctx.client, states=states, pods=pods, nodes=nodes, workloads=workloads,
        configuration=configuration, follow=follow,
    )  # fmt: skip
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(states)
    pods.add_event_handler(
        **pod_handlers(states, controller.queue.add, lambda: parse_pps_whitelist(configuration()))
    )
    config_maps.add_event_handler(**configuration_handlers(ctx.namespace, controller.queue.add))
    for ref in (STATEFULSETS_APPS, ADVANCED_STATEFULSETS):
        informer = workloads[ref.group]
        informer.add_event_handler(**workload_handlers(ref, states, controller.queue.add))
    return controller
