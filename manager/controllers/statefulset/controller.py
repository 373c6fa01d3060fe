"""Wiring of the Advanced StatefulSet controller: shared informers, event handlers, expectations.

Pod events wake the owning set and mark expected creations and deletions as observed (a pod that
starts terminating counts as deleted); pod updates also feed the resourceVersion expectations of
pods the controller just wrote, so a pass never plans from a pod older than its own last write.
An orphan pod (no controller) that the set would adopt — selector matches, named ``<set>-<n>`` —
wakes it when it appears or its labels change; upstream kruise watches owned pods only and leaves
the adoption to the set's next pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api import features
from kruise.api.objects import section
from kruise.control.statefulset.claims import ANNOTATION_PVC_OWNED_BY_ASTS
from kruise.control.statefulset.identity import member_selection
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.ownedpods import watch_owned_pods
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CONTROLLER_REVISIONS,
    IMAGEPULLJOBS,
    PODS,
    PVCS,
    STORAGE_CLASSES,
)
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.orphans import watch_orphans
from kruise.manager.controllers.statefulset.reconciler import StatefulSetReconciler
from kruise.manager.writers.ownership import selector_of
from kruise.manager.writers.predownload import PreDownloadWriter

NAME = "statefulset"
KIND = "StatefulSet"
GROUP = "apps.kruise.io"

owner_key = enqueue_owner(KIND, GROUP)


def resized_claim_owner(claim: Mapping[str, Any]) -> list[str]:
    """A claim the controller resized names its set in ``apps.kruise.io/owned-by-asts``; its
    changes (capacity growing, resize conditions) wake that set, as upstream's pvcEventHandler."""
    meta = claim.get("metadata") or {}
    owner = section(meta, "annotations").get(ANNOTATION_PVC_OWNED_BY_ASTS)
    return [f"{meta.get('namespace', '')}/{owner}"] if owner else []


def build(ctx: ManagerContext) -> Controller:
    sets = ctx.informers.informer(ADVANCED_STATEFULSETS)
    pods = ctx.informers.informer(PODS)
    pvcs = ctx.informers.informer(PVCS)
    revisions = ctx.informers.informer(CONTROLLER_REVISIONS)
    scale_expectations = ScaleExpectations(ctx.clock, ctx.expectation_timeout)
    rv_expectations = ResourceVersionExpectations(ctx.clock, ctx.expectation_timeout)
    recorder = ctx.recorder("statefulset-controller")
    predownloader = None
    gates = ctx.feature_gates
    storage_classes = None
    if gates.enabled(features.STATEFULSET_AUTO_RESIZE_PVC_GATE):
        # only resizing claims reads classes (RBAC: storageclasses get/list/watch)
        storage_classes = ctx.informers.informer(STORAGE_CLASSES)
    if gates.enabled(features.KRUISE_DAEMON) and gates.enabled(
        features.PRE_DOWNLOAD_IMAGE_FOR_IN_PLACE_UPDATE
    ):
        jobs = ctx.informers.informer(IMAGEPULLJOBS)
        predownloader = PreDownloadWriter(ctx.client, recorder, rv_expectations, jobs)
    reconciler = StatefulSetReconciler(
        ctx.client,
        recorder,
        ctx.feature_gates,
        sets=sets,
        pods=pods,
        pvcs=pvcs,
        revisions=revisions,
        storage_classes=storage_classes,
        scale_expectations=scale_expectations,
        rv_expectations=rv_expectations,
        wall=ctx.clock.wall,
        clock=ctx.clock,
        predownloader=predownloader,
        resize_subresource=ctx.resize_subresource,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(sets, enqueue_object)
    controller.watch(revisions, owner_key)
    controller.watch(pvcs, resized_claim_owner)

    watch_owned_pods(controller, pods, owner_key, scale_expectations, rv_expectations)
    # an orphan pod the set would adopt (selector and name) wakes it
    watch_orphans(
        controller,
        pods,
        sets,
        lambda sts, pod: member_selection(sts["metadata"]["name"], selector_of(sts))(pod),
    )
    return controller
