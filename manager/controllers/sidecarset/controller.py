"""Wiring of the SidecarSet controller: a SidecarSet is reconciled when it changes and when any pod it
was injected into changes (pod events also feed the resourceVersion expectations of our own writes)."""

from __future__ import annotations

from typing import Any

from kruise.control.sidecarset import update
from kruise.kube.controller import Controller
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import CONTROLLER_REVISIONS, NAMESPACES, PODS, SIDECARSETS
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.sidecarset.history import SidecarSetHistory
from kruise.manager.controllers.sidecarset.reconciler import SidecarSetReconciler
from kruise.manager.writers.inplace import InPlaceWriter

NAME = "sidecarset"


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

    def sidecarsets_of(pod: dict[str, Any]) -> list[str]:
        expectations.observe(pod)
        return [s["metadata"]["name"] for s in sidecarsets.list() if update.is_injected(pod, s)]

    controller.watch(pods, sidecarsets_of)
    return controller
