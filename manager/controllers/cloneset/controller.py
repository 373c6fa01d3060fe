"""Wiring of the CloneSet controller: shared informers, event handlers, expectations bookkeeping.

Pod events do two jobs besides waking the owning CloneSet: they mark expected creations and
deletions as observed (a pod that starts terminating counts as deleted, as upstream's handler
treats it), and they feed the resourceVersion expectations of pods the controller just wrote — the
shared `kruise.kube.ownedpods.watch_owned_pods`, as for Advanced StatefulSet and DaemonSet.
"""

from __future__ import annotations

from kruise.api import features
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.ownedpods import watch_owned_pods
from kruise.kube.resources import (
    CLONESETS,
    CONTROLLER_REVISIONS,
    IMAGEPULLJOBS,
    PODS,
    PODUNAVAILABLEBUDGETS,
    PVCS,
)
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.cloneset.pubgate import PubGate
from kruise.manager.controllers.cloneset.reconciler import CloneSetReconciler
from kruise.manager.writers.predownload import PreDownloadWriter

NAME = "cloneset"
KIND = "CloneSet"
GROUP = "apps.kruise.io"

owner_key = enqueue_owner(KIND, GROUP)


def build(ctx: ManagerContext) -> Controller:
    clonesets = ctx.informers.informer(CLONESETS)
    pods = ctx.informers.informer(PODS)
    pvcs = ctx.informers.informer(PVCS)
    revisions = ctx.informers.informer(CONTROLLER_REVISIONS)
    scale_expectations = ScaleExpectations(ctx.clock, ctx.expectation_timeout)
    rv_expectations = ResourceVersionExpectations(ctx.clock, ctx.expectation_timeout)
    recorder = ctx.recorder("cloneset-controller")
    predownloader = None
    gates = ctx.feature_gates
    if gates.enabled(features.KRUISE_DAEMON) and gates.enabled(
        features.PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE
    ):
        jobs = ctx.informers.informer(IMAGEPULLJOBS)
        predownloader = PreDownloadWriter(ctx.client, recorder, rv_expectations, jobs)
    pub_gate = None
    if gates.enabled(features.POD_UNAVAILABLE_BUDGET_UPDATE_GATE):
        pub_gate = PubGate(
            ctx.client,
            ctx.informers.informer(PODUNAVAILABLEBUDGETS),
            ctx.clock.wall,
            vertical_scaling=ctx.feature_gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING),
        )
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
        resize_subresource=ctx.resize_subresource,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(clonesets, enqueue_object)
    controller.watch(revisions, owner_key)
    controller.watch(pvcs, owner_key)

    watch_owned_pods(controller, pods, owner_key, scale_expectations, rv_expectations)
    return controller
