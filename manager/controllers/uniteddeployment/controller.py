"""Wiring of the UnitedDeployment controller: a UnitedDeployment is reconciled when it changes and
when a child workload it controls changes (upstream watches them with OnlyControllerOwner).
Children are native StatefulSets, Advanced StatefulSets, CloneSets or Deployments; ReplicaSets are
read (not watched) to find a Deployment child's pods.

Pods are watched for one moment only, when the scheduler marks one `PodScheduled=False`
(Unschedulable): its UnitedDeployment is enqueued through the pod's owner chain so an Adaptive
strategy starts the pod's reschedule clock (and requeues at its deadline). Upstream does not watch
pods and notices such a pod only if some later child event happens to wake it; here detection
never depends on that timing.

The resourceVersion expectations make a pass that just wrote status wait for the cache to show
it, so two passes never compute from a status one of them already replaced.
"""

from __future__ import annotations

from typing import Any

from kruise.api.controllerref import controller_of
from kruise.api.objects import meta_of
from kruise.api.uniteddeployment import KIND
from kruise.control.uniteddeployment.adaptive import failing_to_schedule, turned_unschedulable
from kruise.control.uniteddeployment.subsets import (
    KIND_ADVANCED_STATEFULSET,
    KIND_CLONESET,
    KIND_DEPLOYMENT,
    KIND_STATEFULSET,
)
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
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
        uid = meta_of(unwrap_tombstone(obj)).get("uid", "")
        expectations.delete(uid)

    replicasets = ctx.informers.informer(REPLICASETS)
    owners: dict[str, SharedInformer] = {
        "apps/StatefulSet": children[KIND_STATEFULSET][1],
        "apps.kruise.io/StatefulSet": children[KIND_ADVANCED_STATEFULSET][1],
        "apps.kruise.io/CloneSet": children[KIND_CLONESET][1],
        "apps/Deployment": children[KIND_DEPLOYMENT][1],
        "apps/ReplicaSet": replicasets,
    }

    def pod_owner_ud(pod: dict[str, Any]) -> list[str]:
        """The UnitedDeployment above the pod: child, or ReplicaSet then Deployment child."""
        obj: dict[str, Any] | None = pod
        for _ in range(3):
            meta = (obj or {}).get("metadata") or {}
            ref = controller_of(obj)
            if ref is None:
                return []
            group = ref.get("apiVersion", "").rpartition("/")[0]
            if ref.get("kind") == KIND and group == "apps.kruise.io":
                return [f"{meta.get('namespace')}/{ref['name']}"]
            informer = owners.get(f"{group}/{ref.get('kind')}")
            if informer is None:
                return []
            obj = informer.get(f"{meta.get('namespace')}/{ref['name']}")
        return []

    uds.add_event_handler(on_update=observed, on_delete=forget)
    controller.watch(uds, enqueue_object)
    for _, informer in children.values():
        controller.watch(informer, owner_key)
    controller.watch(
        ctx.informers.informer(PODS),
        lambda pod: pod_owner_ud(pod) if failing_to_schedule(pod) else [],
        update_filter=turned_unschedulable,
    )
    return controller
