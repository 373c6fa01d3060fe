"""Wiring of the ImagePullJob controller: job events wake the job; NodeImage events wake the jobs named
in its tags, and a NodeImage that appears (a new node) wakes every job, since any may target it."""

from __future__ import annotations

from typing import Any

from kruise.api.objects import section
from kruise.kube.controller import Controller
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES, PODS, object_key
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.imagepulljob.reconciler import ImagePullJobReconciler

NAME = "imagepulljob"


def jobs_of(node_image: dict[str, Any]) -> list[str]:
    """Keys of the jobs that own a tag in this NodeImage's spec."""
    keys = set()
    for image in section(node_image, "spec", "images").values():
        for tag in image.get("tags") or []:
            for ref in tag.get("ownerReferences") or []:
                if ref.get("kind") == "ImagePullJob" and ref.get("namespace"):
                    keys.add(f"{ref['namespace']}/{ref['name']}")
    return sorted(keys)


def build(ctx: ManagerContext) -> Controller:
    jobs = ctx.informers.informer(IMAGEPULLJOBS)
    node_images = ctx.informers.informer(NODEIMAGES)
    pods = ctx.informers.informer(PODS)
    reconciler = ImagePullJobReconciler(
        ctx.client, jobs=jobs, node_images=node_images, pods=pods, wall=ctx.clock.wall
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(jobs)
    controller.watch(node_images, jobs_of)
    node_images.add_event_handler(
        on_add=lambda _n: [controller.queue.add(object_key(j)) for j in jobs.list()]
    )
    return controller
