"""Wiring of the ImageListPullJob controller: list job events wake the list job; events of its
ImagePullJobs wake their controlling list job and settle its create/delete expectations."""

from __future__ import annotations

from typing import Any

from kruise.api.objects import meta_of, spec_of
from kruise.kube.controller import Controller, enqueue_owner
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.resources import IMAGELISTPULLJOBS, IMAGEPULLJOBS
from kruise.kube.store import unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.imagelistpulljob.reconciler import ImageListPullJobReconciler

NAME = "imagelistpulljob"
COMPONENT = "imagelistpulljob-controller"

owner_of = enqueue_owner("ImageListPullJob", "apps.kruise.io")


def observe_children(expectations: ScaleExpectations) -> dict[str, Any]:
    """Handlers that tell the expectations a created child appeared or a deleted one went away."""

    def seen(action: str, obj: Any) -> None:
        obj = unwrap_tombstone(obj)
        image = str(spec_of(obj).get("image") or "")
        for key in owner_of(obj):
            expectations.observe(key, action, image)

    def on_update(_old: Any, new: Any) -> None:
        if meta_of(new).get("deletionTimestamp"):
            seen(ScaleExpectations.DELETE, new)

    return {
        "on_add": lambda obj: seen(ScaleExpectations.CREATE, obj),
        "on_update": on_update,
        "on_delete": lambda obj: seen(ScaleExpectations.DELETE, obj),
    }


def build(ctx: ManagerContext) -> Controller:
    list_jobs = ctx.informers.informer(IMAGELISTPULLJOBS)
    jobs = ctx.informers.informer(IMAGEPULLJOBS)
    expectations = ScaleExpectations(ctx.clock, ctx.expectation_timeout)
    reconciler = ImageListPullJobReconciler(
        ctx.client,
        list_jobs=list_jobs,
        jobs=jobs,
        recorder=ctx.recorder(COMPONENT),
        expectations=expectations,
        clock=ctx.clock,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    jobs.add_event_handler(**observe_children(expectations))
    controller.watch(list_jobs)
    controller.watch(jobs, owner_of)
    return controller
