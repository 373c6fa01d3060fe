"""One AdvancedCronJob pass: read the cron job and its children from the caches, plan, carry the plan out.

The plan (`kruise.control.advancedcronjob.plan_reconcile`) is pure; this module only does its I/O in
upstream's order — status, history cleanup, then (unless paused, not due or forbidden) the Replace
deletions and the new child — and asks to be woken at the next activation. Upstream's controller
records no events; its trail is the log, so each step here logs what it did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, tzinfo
from typing import Any

import structlog

from kruise.api.advancedcronjob import (
    KIND,
    TEMPLATE_KIND_BROADCASTJOB,
    TEMPLATE_KIND_IMAGELISTPULLJOB,
    TEMPLATE_KIND_JOB,
)
from kruise.api.controllerref import controller_of
from kruise.control.advancedcronjob.plan import (
    Deletion,
    Outcome,
    ReconcilePlan,
    plan_reconcile,
    template_kind,
)
from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.errors import NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import ADVANCED_CRONJOBS, BROADCASTJOBS, IMAGELISTPULLJOBS, JOBS, ResourceRef
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.advancedcronjob")

GROUP = "apps.kruise.io"
CHILD_RESOURCES: dict[str, ResourceRef] = {
    TEMPLATE_KIND_JOB: JOBS,
    TEMPLATE_KIND_BROADCASTJOB: BROADCASTJOBS,
    TEMPLATE_KIND_IMAGELISTPULLJOB: IMAGELISTPULLJOBS,
}


def controlled_by_name(child: Mapping[str, Any], acj_name: str) -> bool:
    """Whether the child's controller reference is an AdvancedCronJob of that name (upstream's
    `.metadata.controller` index: by owner name, any version of the apps.kruise.io group)."""
    ref = controller_of(child)
    if ref is None:
        return False
    group = str(ref.get("apiVersion") or "").rpartition("/")[0]
    return ref.get("kind") == KIND and group == GROUP and ref.get("name") == acj_name


class AdvancedCronJobReconciler:
    def __init__(
        self,
        client: Client,
        *,
        cronjobs: SharedInformer,
        jobs: SharedInformer,
        broadcastjobs: SharedInformer,
        imagelistpulljobs: SharedInformer,
        wall: Callable[[], datetime],
        local_zone: tzinfo,
    ) -> None:
        self.client = client
        self.status_writer = StatusWriter(client, ADVANCED_CRONJOBS)
        self.cronjobs = cronjobs
        self.children = {
            TEMPLATE_KIND_JOB: jobs,
            TEMPLATE_KIND_BROADCASTJOB: broadcastjobs,
            TEMPLATE_KIND_IMAGELISTPULLJOB: imagelistpulljobs,
        }
        self.wall = wall
        self.local_zone = local_zone

    def children_of(self, acj: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
        """The cron job's children of its template kind, from the cache."""
        meta = acj["metadata"]
        in_namespace = self.children[kind].by_index(NAMESPACE_INDEX, meta["namespace"])
        return [c for c in in_namespace if controlled_by_name(c, meta["name"])]

    async def reconcile(self, key: str) -> Result | None:
        acj = self.cronjobs.get(key)
        if acj is None:
            return None
        plan = plan_reconcile(acj, self.children_of(acj, template_kind(acj)), self.wall(), self.local_zone)
        bound = log.bind(advancedcronjob=key)
        if (await self.status_writer.write(acj, plan.status)).gone:
            return None  # deleted meanwhile
        for deletion in plan.history_deletions:
            await self._delete_history(deletion, key)
        if plan.outcome is Outcome.SCHEDULE_PROBLEM:
            # Upstream does not requeue: only a change to the object can fix the schedule.
            bound.error("Unable to figure out CronJob schedule", error=plan.message)
            return None
        if plan.outcome is not Outcome.RUN:
            bound.debug("No run now", outcome=str(plan.outcome), next_run=_iso(plan.next_run))
            return _requeue(plan)
        for deletion in plan.replace_deletions:
            await self._delete_active(deletion, key)
        assert plan.create is not None
        child_meta = plan.create["metadata"]
        await self.client.create(CHILD_RESOURCES[plan.child_kind], plan.create, child_meta["namespace"])
        bound.info(
            f"Created {plan.child_kind} for AdvancedCronJob run",
            child=child_meta["name"],
            scheduled_time=_iso(plan.scheduled_time),
        )
        return _requeue(plan)

    async def _delete(self, deletion: Deletion) -> None:
        await self.client.delete(
            CHILD_RESOURCES[deletion.kind],
            deletion.name,
            deletion.namespace,
            propagation_policy="Background",
            uid=deletion.uid,
        )

    async def _delete_history(self, deletion: Deletion, key: str) -> None:
        """Best effort, as upstream: a failure is logged and the pass goes on."""
        try:
            await self._delete(deletion)
        except NotFound:
            return
        except Exception as exc:
            log.error(
                "Unable to delete old job",
                advancedcronjob=key,
                child=deletion.name,
                reason=str(deletion.reason),
                error=str(exc),
            )
            return
        log.info("Deleted old job", advancedcronjob=key, child=deletion.name, reason=str(deletion.reason))

    async def _delete_active(self, deletion: Deletion, key: str) -> None:
        """Replace policy: an active child that is already gone is fine; any other failure aborts the
        pass before the new child is created (the key backs off and the pass is redone)."""
        try:
            await self._delete(deletion)
        except NotFound:
            return
        log.info("Deleted active job to replace it", advancedcronjob=key, child=deletion.name)


def _requeue(plan: ReconcilePlan) -> Result | None:
    if plan.requeue_after is None:
        return None
    return Result(requeue_after=plan.requeue_after.total_seconds())


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
