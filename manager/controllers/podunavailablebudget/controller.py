"""Wiring of the PodUnavailableBudget controller: PUB events wake the PUB; pod changes that bear on
availability wake the pod's PUB (or every PUB of its namespace); a workload's replica change wakes
the PUBs of its namespace."""

from __future__ import annotations

from collections.abc import Callable

from kruise.api import features
from kruise.api.objects import MutableObj, spec_of
from kruise.control.pub import budget
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CLONESETS,
    DEPLOYMENTS,
    PODS,
    PODUNAVAILABLEBUDGETS,
    REPLICASETS,
    STATEFULSETS_APPS,
    object_key,
)
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.podunavailablebudget.reconciler import PodUnavailableBudgetReconciler
from kruise.manager.controllers.podunavailablebudget.workloads import WorkloadFinder

NAME = "podunavailablebudget"


def pubs_for_pod(pubs: SharedInformer) -> Callable[[MutableObj], list[str]]:
    """The PUB named on the pod, else every PUB of its namespace (a cheap over-approximation: a new
    pod may match a selector or belong to a targeted workload)."""

    def mapper(pod: MutableObj) -> list[str]:
        namespace = pod["metadata"].get("namespace", "")
        name = budget.related_pub(pod)
        if name:
            return [f"{namespace}/{name}"]
        return [object_key(p) for p in pubs.by_index(NAMESPACE_INDEX, namespace)]

    return mapper


def pubs_in_namespace(pubs: SharedInformer) -> Callable[[MutableObj], list[str]]:
    def mapper(workload: MutableObj) -> list[str]:
        namespace = workload["metadata"].get("namespace", "")
        return [object_key(p) for p in pubs.by_index(NAMESPACE_INDEX, namespace)]

    return mapper


def pod_changed(old: MutableObj, new: MutableObj) -> bool:
    """Readiness, phase, deletion, labels, annotations or spec: what availability depends on."""
    return (
        old.get("status") != new.get("status")
        or old["metadata"].get("labels") != new["metadata"].get("labels")
        or old["metadata"].get("annotations") != new["metadata"].get("annotations")
        or old["metadata"].get("deletionTimestamp") != new["metadata"].get("deletionTimestamp")
        or old.get("spec") != new.get("spec")
    )


def replicas_changed(old: MutableObj, new: MutableObj) -> bool:
    return spec_of(old).get("replicas") != spec_of(new).get("replicas")


def build(ctx: ManagerContext) -> Controller:
    pubs = ctx.informers.informer(PODUNAVAILABLEBUDGETS)
    pods = ctx.informers.informer(PODS)
    workloads = {
        ("apps", "Deployment"): ctx.informers.informer(DEPLOYMENTS),
        ("apps", "ReplicaSet"): ctx.informers.informer(REPLICASETS),
        ("apps", "StatefulSet"): ctx.informers.informer(STATEFULSETS_APPS),
        ("apps.kruise.io", "CloneSet"): ctx.informers.informer(CLONESETS),
        ("apps.kruise.io", "StatefulSet"): ctx.informers.informer(ADVANCED_STATEFULSETS),
    }
    reconciler = PodUnavailableBudgetReconciler(
        ctx.client,
        pubs=pubs,
        finder=WorkloadFinder(pods, workloads),
        recorder=ctx.recorder("podunavailablebudget-controller"),
        wall=ctx.clock.wall,
        vertical_scaling=ctx.feature_gates.enabled(features.IN_PLACE_WORKLOAD_VERTICAL_SCALING),
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(pubs)
    controller.watch(pods, pubs_for_pod(pubs), update_filter=pod_changed)
    for informer in workloads.values():
        controller.watch(informer, pubs_in_namespace(pubs), update_filter=replicas_changed)
    return controller
