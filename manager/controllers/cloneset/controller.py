"""Wiring of the CloneSet controller: shared informers, event handlers, expectations bookkeeping.

Pod events do two jobs besides waking the owning CloneSet: they mark expected creations and
deletions as observed (a pod that starts terminating counts as deleted, as upstream's handler
treats it), and they feed the resourceVersion expectations of pods the controller just wrote.
"""

from __future__ import annotations

from typing import Any

from kruise.api import features
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.resources import (
    CLONESETS,
    CONTROLLER_REVISIONS,
    IMAGEPULLJOBS,
    PODS,
    PODUNAVAILABLEBUDGETS,
    PVCS,
)
from kruise.kube.store import DeletedFinalStateUnknown, unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.cloneset.predownloader import PreDownloader
from kruise.manager.controllers.cloneset.pubgate import PubGate
from kruise.manager.controllers.cloneset.reconciler import CloneSetReconciler

NAME = "cloneset"
KIND = "CloneSet"
GROUP = "apps.kruise.io"

owner_key = enqueue_owner(KIND, GROUP)


def build(ctx: ManagerContext) -> Controller:
    clonesets = ctx.informers.informer(CLONESETS)
    pods = ctx.informers.informer(PODS)
    pvcs = ctx.informers.informer(PVCS)
    revisions = ctx.informers.informer(CONTROLLER_REVISIONS)
    scale_expectations = ScaleExpectations(ctx.clock)
    rv_expectations = ResourceVersionExpectations(ctx.clock)
    recorder = ctx.recorder("cloneset-controller")
    predownloader = None
    gates = ctx.feature_gates
    if gates.enabled(features.KRUISE_DAEMON) and gates.enabled(
        features.PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE
    ):
        jobs = ctx.informers.informer(IMAGEPULLJOBS)
        predownloader = PreDownloader(ctx.client, recorder, rv_expectations, jobs)
    pub_gate = None
    if gates.enabled(features.POD_UNAVAILABLE_BUDGET_UPDATE_GATE):
        pub_gate = PubGate(ctx.client, ctx.informers.informer(PODUNAVAILABLEBUDGETS), ctx.clock.wall)
    reconciler = CloneSetReconciler(
        ctx.client,
        recorder,
        ctx.feature_gates,
        clonesets=clonesets,
        pods=pods,
        pvcs=pvcs,
        revisions=revisions,
        scale_expectations=scale_expectations,
        rv_expectations=rv_expectations,
        wall=ctx.clock.wall,
        predownloader=predownloader,
        pub_gate=pub_gate,
        clock=ctx.clock,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(clonesets, enqueue_object)
    controller.watch(revisions, owner_key)
    controller.watch(pvcs, owner_key)

    def pod_added(pod: dict[str, Any]) -> None:
        for key in owner_key(pod):
            action = ScaleExpectations.DELETE if _terminating(pod) else ScaleExpectations.CREATE
            scale_expectations.observe(key, action, pod["metadata"]["name"])
            controller.queue.add(key)

    def pod_updated(old: dict[str, Any], new: dict[str, Any]) -> None:
        rv_expectations.observe(new)
        keys = set(owner_key(old)) | set(owner_key(new))
        for key in keys:
            if _terminating(new):
                scale_expectations.observe(key, ScaleExpectations.DELETE, new["metadata"]["name"])
            controller.queue.add(key)

    def pod_deleted(obj: dict[str, Any] | DeletedFinalStateUnknown) -> None:
        pod = unwrap_tombstone(obj)
        for key in owner_key(pod):
            scale_expectations.observe(key, ScaleExpectations.DELETE, pod["metadata"]["name"])
            controller.queue.add(key)

    pods.add_event_handler(on_add=pod_added, on_update=pod_updated, on_delete=pod_deleted)
    return controller


def _terminating(pod: dict[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))
