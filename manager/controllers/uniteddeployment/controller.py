"""Wiring of the UnitedDeployment controller: a UnitedDeployment is reconciled when it changes and
when a child workload it controls changes (upstream watches them with OnlyControllerOwner).
Children are native StatefulSets, Advanced StatefulSets, CloneSets or Deployments; ReplicaSets are
read (not watched) to find a Deployment child's pods.

The resourceVersion expectations make a pass that just wrote status wait for the cache to show
it, so two passes never compute from a status one of them already replaced.
"""

from __future__ import annotations

from typing import Any

from kruise.api.uniteddeployment import KIND
from kruise.control.uniteddeployment.subsets import (
    KIND_ADVANCED_STATEFULSET,
    KIND_CLONESET,
    KIND_DEPLOYMENT,
    KIND_STATEFULSET,
)
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CLONESETS,
    CONTROLLER_REVISIONS,
    DEPLOYMENTS,
    PODS,
    REPLICASETS,
    STATEFULSETS_APPS,
    UNITED_DEPLOYMENTS,
)
from kruise.kube.store import unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.uniteddeployment.reconciler import UnitedDeploymentReconciler

NAME = "uniteddeployment"
COMPONENT = "uniteddeployment-controller"

owner_key = enqueue_owner(KIND, "apps.kruise.io")


def build(ctx: ManagerContext) -> Controller:
    uds = ctx.informers.informer(UNITED_DEPLOYMENTS)
    child_refs = {
        KIND_STATEFULSET: STATEFULSETS_APPS,
        KIND_ADVANCED_STATEFULSET: ADVANCED_STATEFULSETS,
        KIND_CLONESET: CLONESETS,
        KIND_DEPLOYMENT: DEPLOYMENTS,
    }
    children = {kind: (ref, ctx.informers.informer(ref)) for kind, ref in child_refs.items()}
    expectations = ResourceVersionExpectations(clock=ctx.clock)
    reconciler = UnitedDeploymentReconciler(
        ctx.client,
        uds=uds,
        children=children,
        pods=ctx.informers.informer(PODS),
        revisions=ctx.informers.informer(CONTROLLER_REVISIONS),
        replicasets=ctx.informers.informer(REPLICASETS),
        recorder=ctx.recorder(COMPONENT),
        expectations=expectations,
        wall=ctx.clock.wall,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)

    def observed(_old: dict[str, Any], new: dict[str, Any]) -> None:
        expectations.observe(new)

    def forget(obj: Any) -> None:
        uid = (unwrap_tombstone(obj).get("metadata") or {}).get("uid", "")
        expectations.delete(uid)

    uds.add_event_handler(on_update=observed, on_delete=forget)
    controller.watch(uds, enqueue_object)
    for _, informer in children.values():
        controller.watch(informer, owner_key)
    return controller
