"""Wiring of the AdvancedCronJob controller: a cron job is reconciled when it changes, when one of its
children (Jobs, BroadcastJobs or ImageListPullJobs it controls) is created or updated, and at its next
activation (the reconciler's requeue). Child deletions are not watched, as upstream: a deleted child
changes nothing until the next pass.
"""

from __future__ import annotations

from typing import Any

from kruise.api.advancedcronjob import KIND
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.resources import ADVANCED_CRONJOBS, BROADCASTJOBS, IMAGELISTPULLJOBS, JOBS
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.advancedcronjob.localzone import process_zone
from kruise.manager.controllers.advancedcronjob.reconciler import GROUP, AdvancedCronJobReconciler

NAME = "advancedcronjob"

owner_key = enqueue_owner(KIND, GROUP)


def build(ctx: ManagerContext) -> Controller:
    cronjobs = ctx.informers.informer(ADVANCED_CRONJOBS)
    jobs = ctx.informers.informer(JOBS)
    broadcastjobs = ctx.informers.informer(BROADCASTJOBS)
    imagelistpulljobs = ctx.informers.informer(IMAGELISTPULLJOBS)
    reconciler = AdvancedCronJobReconciler(
        ctx.client,
        cronjobs=cronjobs,
        jobs=jobs,
        broadcastjobs=broadcastjobs,
        imagelistpulljobs=imagelistpulljobs,
        wall=ctx.clock.wall,
        local_zone=process_zone(),
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(cronjobs, enqueue_object)

    def enqueue_owner_of(child: dict[str, Any]) -> None:
        for key in owner_key(child):
            controller.queue.add(key)

    def child_updated(old: dict[str, Any], new: dict[str, Any]) -> None:
        enqueue_owner_of(old)
        enqueue_owner_of(new)

    for informer in (jobs, broadcastjobs, imagelistpulljobs):
        informer.add_event_handler(on_add=enqueue_owner_of, on_update=child_updated)
    return controller
