"""Wiring of the SidecarSet controller: a SidecarSet is reconciled when it changes, when a pod it was
injected into appears or goes, and when such a pod changes in a way its pass can notice
(`podevents.wake_delay`, upstream's filter) — not on every pod write, so passes a PodUnavailableBudget
refuses do not pile up backoff. Every pod event still feeds the resourceVersion expectations of our
own writes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.control.sidecarset import podevents, update
from kruise.kube.controller import Controller
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import CONTROLLER_REVISIONS, NAMESPACES, PODS, SIDECARSETS
from kruise.kube.store import DeletedFinalStateUnknown, unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.sidecarset.history import SidecarSetHistory
from kruise.manager.controllers.sidecarset.reconciler import SidecarSetReconciler
from kruise.manager.writers.inplace import InPlaceWriter

NAME = "sidecarset"

Obj = dict[str, Any]


def pod_handlers(
    list_sidecarsets: Callable[[], list[Obj]],
    expectations: ResourceVersionExpectations,
    add: Callable[[str], None],
    add_after: Callable[[str, float], None],
) -> dict[str, Any]:
    """Informer handlers for pods: each wakes the SidecarSets injected into the pod (a created or
    deleted pod always, an updated one when `wake_delay` says so)."""

    def injected(pod: Obj) -> list[Obj]:
        return [s for s in list_sidecarsets() if update.is_injected(pod, s)]

    def on_add(pod: Obj) -> None:
        expectations.observe(pod)
        for sidecarset in injected(pod):
            add(sidecarset["metadata"]["name"])

    def on_update(old: Obj, new: Obj) -> None:
        expectations.observe(new)
        for sidecarset in injected(new):
            delay = podevents.wake_delay(old, new, sidecarset)
            if delay is None:
                continue
            if delay > 0:
                add_after(sidecarset["metadata"]["name"], delay)
            else:
                add(sidecarset["metadata"]["name"])

    def on_delete(obj: Obj | DeletedFinalStateUnknown) -> None:
        on_add(unwrap_tombstone(obj))

    return {"on_add": on_add, "on_update": on_update, "on_delete": on_delete}


def build(ctx: ManagerContext) -> Controller:
    sidecarsets = ctx.informers.informer(SIDECARSETS)
    pods = ctx.informers.informer(PODS)
    namespaces = ctx.informers.informer(NAMESPACES)
    expectations = ResourceVersionExpectations(ctx.clock, ctx.expectation_timeout)
    reconciler = SidecarSetReconciler(
        ctx.client,
        ctx.recorder("sidecarset-controller"),
        InPlaceWriter(ctx.client, expectations),
        expectations,
        SidecarSetHistory(ctx.client, ctx.informers.informer(CONTROLLER_REVISIONS), ctx.namespace),
        sidecarsets=sidecarsets,
        pods=pods,
        namespaces=namespaces,
        wall=ctx.clock.wall,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(sidecarsets)
    pods.add_event_handler(
        **pod_handlers(sidecarsets.list, expectations, controller.queue.add, controller.queue.add_after)
    )
    return controller
