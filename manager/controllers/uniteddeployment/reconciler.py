"""One UnitedDeployment pass, in upstream's order: revisions, children, allocation, provision,
updates, status.

Decisions come from `kruise.control.uniteddeployment`; this module reads the caches and writes.
A failed provision or child update makes the pass raise (the key backs off) without writing
status, as upstream returns before its status update in that case.

This module keeps the order, the revisions and the status; the per-kind child workload I/O is in
``children.py`` and the Adaptive strategy's assessments (with their pod label writes) in
``adaptive.py``, so each can be read without the other's detail.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import structlog

from kruise.api.common import selector_to_string
from kruise.api.objects import meta_of, status_of
from kruise.api.uniteddeployment import UnitedDeployment
from kruise.control.uniteddeployment.adaptive import (
    RESERVED_SELECTOR_SUFFIX,
    Requeue,
    after_allocation,
    mark_new_subsets,
    max_unavailable_for,
)
from kruise.control.uniteddeployment.allocation import (
    AllocationError,
    SubsetState,
    allocate,
    next_partitions,
    reserves_unschedulable_pods,
)
from kruise.control.uniteddeployment.plan import group_children, plan_children
from kruise.control.uniteddeployment.revision import new_revision, plan_history
from kruise.control.uniteddeployment.status import (
    SUBSET_FAILURE,
    SUBSET_PROVISIONED,
    SUBSET_UPDATED,
    aggregate,
    drop_condition,
    init_subset_statuses,
    set_united_deployment_condition,
    set_updated_condition,
    status_unchanged,
)
from kruise.control.uniteddeployment.subsets import set_max_unavailable, template_kind
from kruise.kube.client import Client
from kruise.kube.clock import rfc3339
from kruise.kube.controller import Result, TerminalError
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import UNITED_DEPLOYMENTS, ResourceRef
from kruise.manager.controllers.uniteddeployment.adaptive import assess, subset_entry
from kruise.manager.controllers.uniteddeployment.children import ChildWorkloads, owned_in_namespace
from kruise.manager.writers.revisions import RevisionWriter
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.uniteddeployment")

MAX_COLLISIONS = 100


class UnitedDeploymentReconciler:
    def __init__(
        self,
        client: Client,
        *,
        uds: SharedInformer,
        children: Mapping[str, tuple[ResourceRef, SharedInformer]],
        pods: SharedInformer,
        revisions: SharedInformer,
        replicasets: SharedInformer,
        recorder: EventRecorder,
        expectations: ResourceVersionExpectations,
        wall: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, UNITED_DEPLOYMENTS)
        self.revision_writer = RevisionWriter(client)
        self.uds = uds
        self.children = children
        """Child kind (subsets.KIND_*) -> its resource and informer."""
        self.workloads = ChildWorkloads(client, recorder, children, pods, replicasets)
        self.revisions = revisions
        self.recorder = recorder
        self.expectations = expectations
        self.wall = wall

    # ---- the pass --------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result | None:
        ud_obj = self.uds.get(key)
        if ud_obj is None or meta_of(ud_obj).get("deletionTimestamp"):
            return None
        if not self.expectations.is_satisfied(ud_obj):
            return Result(requeue_after=1.0)
        try:
            ud = UnitedDeployment.model_validate(ud_obj)
        except ValueError as exc:
            raise TerminalError(f"UnitedDeployment {key}: {exc}") from exc
        bound = log.bind(uniteddeployment=key)
        wall = self.wall()
        now = rfc3339(wall)
        old_status = dict(status_of(ud_obj))
        status = copy.deepcopy(old_status)
        subset_names = [s.name for s in ud.spec.topology.subsets or []]
        known = init_subset_statuses(status, subset_names)
        reserve = reserves_unschedulable_pods(ud)
        if reserve:
            mark_new_subsets(status, known, subset_names, wall)

        try:
            current_revision, expected_revision = await self._revisions(ud_obj)
        except Exception as exc:
            self.recorder.event(dict(ud_obj), "Warning", "FailedRevisionProvision", str(exc))
            raise
        set_updated_condition(status, current_revision, expected_revision, now)

        kind = template_kind(ud_obj)
        if kind is None or kind not in self.children:
            raise TerminalError(f"UnitedDeployment {key}: no supported workload template")
        existing, duplicates = group_children(self.workloads.read(kind, ud_obj, expected_revision))
        for child in duplicates:
            bound.info(
                "Deleted duplicated Subset for subset name", subset=child.name, subset_name=child.subset_name
            )
            await self.workloads.delete(kind, child.obj)

        requeue = Requeue()
        assessments = await assess(self.client, ud, status, existing, expected_revision, wall, requeue, bound)
        states = {
            n: SubsetState(
                replicas=c.replicas,
                ready_replicas=c.ready_replicas,
                unschedulable=assessments[n].unschedulable if n in assessments else False,
                marked_unschedulable=assessments[n].marked_unschedulable if n in assessments else False,
                reserved_pods=assessments[n].reserved_pods if n in assessments else 0,
            )
            for n, c in existing.items()
        }
        try:
            replicas = allocate(ud, states)
        except AllocationError as exc:
            self.recorder.event(
                dict(ud_obj),
                "Warning",
                "Failed SpecifySubsetReplicas",
                f"Specified subset replicas is ineffective: {exc}",
            )
            raise
        if reserve:
            for name, assessment in assessments.items():
                entry = subset_entry(status, name)
                if entry is not None:
                    after_allocation(entry, assessment, existing[name].replicas, replicas.get(name, 0), wall)
        partitions = next_partitions(ud, replicas)
        plan = plan_children(ud_obj, ud, existing, expected_revision, replicas, partitions)
        if reserve:
            for write in plan.updates:
                assessment = assessments.get(write.subset)
                if assessment is not None and assessment.unschedulable:
                    child = existing[write.subset]
                    value = max_unavailable_for(child.replicas, child.ready_replicas, assessment)
                    set_max_unavailable(kind, write.body, value)

        provisioned = await self.workloads.provision(kind, ud_obj, plan, bound)
        if provisioned:
            set_united_deployment_condition(status, SUBSET_PROVISIONED, "True", "", "", now)
        await self.workloads.update(kind, ud_obj, plan, bound)
        set_united_deployment_condition(status, SUBSET_UPDATED, "True", "", "", now)

        kept = {n: c for n, c in existing.items() if n in replicas}
        status["labelSelector"] = selector_to_string(ud.spec.selector)
        if reserve:
            status["labelSelector"] += RESERVED_SELECTOR_SUFFIX
        reserved = {n: a.reserved_pods for n, a in assessments.items()}
        new_status = aggregate(
            status, kept, replicas, partitions, current_revision, expected_revision, reserved
        )
        drop_condition(new_status, SUBSET_FAILURE)
        await self._write_status(ud_obj, old_status, new_status)
        if requeue.seconds > 0:
            bound.info("Requeue needed", after_seconds=requeue.seconds)
            return Result(requeue_after=requeue.seconds)
        return None

    # ---- revisions -------------------------------------------------------------------------------

    async def _revisions(self, ud_obj: Mapping[str, Any]) -> tuple[str, str]:
        """(current, expected) revision names, after creating / renumbering / truncating history."""
        stored = owned_in_namespace(self.revisions, ud_obj)
        history = plan_history(ud_obj, stored)
        namespace = ud_obj["metadata"]["namespace"]
        await self.revision_writer.delete(namespace, history.deletions)
        update = history.update
        if history.action == "rollback":
            update = await self.revision_writer.renumber(update, int(update["revision"]))
        elif history.action == "create":
            update = await self._create_revision(ud_obj, update)
        expected = update["metadata"]["name"]
        current = history.current_name
        if current == history.update["metadata"]["name"]:
            current = expected
        return current, expected

    async def _create_revision(
        self, ud_obj: Mapping[str, Any], candidate: Mapping[str, Any]
    ) -> dict[str, Any]:
        """`createControllerRevision`: on a name collision with other data, count up and retry."""
        collisions = int(status_of(ud_obj).get("collisionCount") or 0)
        body = dict(candidate)
        for _ in range(MAX_COLLISIONS):
            stored = await self.revision_writer.store(body)
            if stored is not None:
                return stored
            collisions += 1
            body = new_revision(ud_obj, int(body["revision"]), collisions)
        raise RuntimeError(f"too many revision name collisions for {ud_obj['metadata']['name']}")

    # ---- status ----------------------------------------------------------------------------------

    async def _write_status(
        self, ud_obj: Mapping[str, Any], old: Mapping[str, Any], new: dict[str, Any]
    ) -> None:
        generation = int(ud_obj["metadata"].get("generation") or 0)
        if status_unchanged(old, new, generation):
            return
        new["observedGeneration"] = generation
        write = await self.status_writer.write(ud_obj, new)
        if write.obj is not None:
            self.expectations.expect(write.obj)
