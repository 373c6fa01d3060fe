"""Wiring of the WorkloadSpread controller.

A WorkloadSpread wakes on its own changes. A pod carrying `apps.kruise.io/matched-workloadspread`
wakes the WorkloadSpread it names when created, deleted, when it stops being active, when its
version changes, or when the scheduler marks it Unschedulable (so the Adaptive strategy starts
counting rescheduleCriticalSeconds for it; upstream's handler leaves that to chance). A target
workload (CloneSet, Deployment, ReplicaSet, Job, StatefulSet, Advanced StatefulSet) wakes the
WorkloadSpread targeting it — a ReplicaSet also the one targeting its Deployment — when created or
deleted, when its replicas (a Job: parallelism) change, and for a CloneSet or Deployment when a new
revision rolls out (deletion costs rank versions). A custom workload whitelisted in
kruise-configuration is watched from the first pass that targets it, and wakes its WorkloadSpread
when the value at its `replicasPath` changes. Nodes are only read (to adopt pods created before
the WorkloadSpread), as upstream: a node change wakes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api.controllerref import controller_of
from kruise.api.objects import MutableObj, spec_of
from kruise.control.common import podstatus
from kruise.control.workloadspread.reschedule import marked_unschedulable
from kruise.control.workloadspread.subsets import MatchedSpread, pod_version
from kruise.control.workloadspread.targets import group_of
from kruise.control.workloadspread.whitelist import (
    ReplicasPathError,
    WhitelistError,
    parse_whitelist,
    replicas_at,
)
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import (
    ADVANCED_STATEFULSETS,
    CLONESETS,
    DEPLOYMENTS,
    JOBS,
    NODES,
    PODS,
    REPLICASETS,
    STATEFULSETS_APPS,
    WORKLOADSPREADS,
    ResourceRef,
)
from kruise.kube.store import NAMESPACE_INDEX, unwrap_tombstone
from kruise.manager.configuration import configuration_informer, configuration_of
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.workloadspread.reconciler import WorkloadSpreadReconciler

NAME = "workloadspread"
COMPONENT = "workloadspread-controller"
TARGETS: tuple[ResourceRef, ...] = (
    CLONESETS, DEPLOYMENTS, REPLICASETS, JOBS, STATEFULSETS_APPS, ADVANCED_STATEFULSETS,
)  # fmt: skip
DEPLOYMENT_REVISION = "deployment.kubernetes.io/revision"


def pod_handlers(enqueue: Callable[[str], None]) -> dict[str, Any]:
    def wake(pod: MutableObj) -> None:
        matched = MatchedSpread.of(pod)
        if matched is not None and matched.name:
            enqueue(f"{pod['metadata'].get('namespace') or ''}/{matched.name}")

    def on_update(old: MutableObj, new: MutableObj) -> None:
        stopped = podstatus.is_active(old) and not podstatus.is_active(new)
        # Not in upstream's handler: without it the Adaptive clock of a pod starts only if some
        # unrelated event happens to run a pass after the scheduler gave up on the pod.
        unschedulable = marked_unschedulable(new) and not marked_unschedulable(old)
        if stopped or unschedulable or pod_version(old) != pod_version(new):
            wake(new)

    return {"on_add": wake, "on_update": on_update, "on_delete": lambda pod: wake(unwrap_tombstone(pod))}


def spreads_for(workload: MutableObj, group: str, kind: str, spreads: SharedInformer) -> list[str]:
    """Keys of the live WorkloadSpreads targeting the workload (or, for a ReplicaSet, its Deployment)."""
    meta = workload.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    names = {(group, kind, meta.get("name"))}
    owner = controller_of(workload)
    deployment = owner is not None and owner.get("kind") == "Deployment"
    if kind == "ReplicaSet" and deployment and group_of(str((owner or {}).get("apiVersion") or "")) == "apps":
        names.add(("apps", "Deployment", owner.get("name")))
    keys = []
    for ws in spreads.by_index(NAMESPACE_INDEX, namespace):
        if ws["metadata"].get("deletionTimestamp"):
            continue
        ref = spec_of(ws).get("targetRef") or {}
        if (group_of(str(ref.get("apiVersion") or "")), ref.get("kind"), ref.get("name")) in names:
            keys.append(f"{namespace}/{ws['metadata']['name']}")
    return keys


def _rolled(old: MutableObj, new: MutableObj, kind: str) -> bool:
    if kind == "CloneSet":
        # as upstream: the new updateRevision against the old currentRevision (true all through a rollout)
        new_status, old_status = new.get("status") or {}, old.get("status") or {}
        return new_status.get("updateRevision") != old_status.get("currentRevision")
    if kind == "Deployment":
        old_ann = old["metadata"].get("annotations") or {}
        new_ann = new["metadata"].get("annotations") or {}
        return old_ann.get(DEPLOYMENT_REVISION) != new_ann.get(DEPLOYMENT_REVISION)
    return False


def workload_handlers(
    ref: ResourceRef,
    spreads: SharedInformer,
    enqueue: Callable[[str], None],
    replicas_of: Callable[[MutableObj], Any] | None = None,
) -> dict[str, Any]:
    """`replicas_of`: how to read a custom workload's replicas (its whitelisted replicasPath);
    default `spec.replicas` (a Job: `spec.parallelism`)."""

    def wake(obj: MutableObj) -> None:
        for key in spreads_for(obj, ref.group, ref.kind, spreads):
            enqueue(key)

    def replicas(obj: MutableObj) -> Any:
        if replicas_of is not None:
            return replicas_of(obj)
        return spec_of(obj).get("parallelism" if ref.kind == "Job" else "replicas")

    def on_update(old: MutableObj, new: MutableObj) -> None:
        if replicas(old) != replicas(new) or _rolled(old, new, ref.kind):
            wake(new)

    return {"on_add": wake, "on_update": on_update, "on_delete": lambda o: wake(unwrap_tombstone(o))}


def custom_replicas(
    ref: ResourceRef, configuration: Callable[[], dict[str, str]]
) -> Callable[[MutableObj], Any]:
    """A custom workload's replicas as its whitelisted replicasPath reads them (None: unreadable)."""

    def read(obj: MutableObj) -> Any:
        try:
            path = parse_whitelist(configuration()).replicas_path(ref.group, ref.kind)
            return replicas_at(obj, path or "")
        except (WhitelistError, ReplicasPathError):
            return None

    return read


def build(ctx: ManagerContext) -> Controller:
    spreads = ctx.informers.informer(WORKLOADSPREADS)
    pods = ctx.informers.informer(PODS)
    workloads = {(ref.group, ref.kind): ctx.informers.informer(ref) for ref in TARGETS}
    configuration = configuration_of(configuration_informer(ctx))
    followed: set[ResourceRef] = set()

    def follow(ref: ResourceRef) -> None:
        # A whitelisted kind is known only once a WorkloadSpread targets it (its resource is looked
        # up then); from then on its changes wake the WorkloadSpreads targeting it.
        if ref in followed:
            return
        followed.add(ref)
        informer = ctx.informers.informer(ref)
        informer.add_event_handler(
            **workload_handlers(ref, spreads, controller.queue.add, custom_replicas(ref, configuration))
        )
        ctx.informers.start()

    reconciler = WorkloadSpreadReconciler(
        ctx.client, spreads=spreads, pods=pods, workloads=workloads, nodes=ctx.informers.informer(NODES),
        recorder=ctx.recorder(COMPONENT), clock=ctx.clock, configuration=configuration, follow=follow,
    )  # fmt: skip
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(spreads)
    pods.add_event_handler(**pod_handlers(controller.queue.add))
    for ref in TARGETS:
        workloads[(ref.group, ref.kind)].add_event_handler(
            **workload_handlers(ref, spreads, controller.queue.add)
        )
    return controller
