"""Wiring of the ImagePullJob controller: job events wake the job; NodeImage events wake the jobs named
in its tags, and a NodeImage that appears (a new node) wakes every job, since any may target it."""

from __future__ import annotations

import os
from typing import Any

from kruise.api.objects import section
from kruise.control.imagepulljob import pullsecrets
from kruise.kube.controller import Controller
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES, PODS, SECRETS, object_key
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.imagepulljob.reconciler import ImagePullJobReconciler
from kruise.manager.controllers.imagepulljob.secrets import PullSecretSync

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


def jobs_naming(jobs: list[dict[str, Any]], secret: dict[str, Any]) -> list[str]:
    """Keys of the jobs not being deleted, in the Secret's namespace, that name it in `pullSecrets`."""
    meta = secret["metadata"]
    return sorted(
        f"{j['metadata']['namespace']}/{j['metadata']['name']}"
        for j in jobs
        if j["metadata"].get("namespace") == meta.get("namespace")
        and not j["metadata"].get("deletionTimestamp")
        and meta["name"] in ((j.get("spec") or {}).get("pullSecrets") or [])
    )


def build(ctx: ManagerContext) -> Controller:
    jobs = ctx.informers.informer(IMAGEPULLJOBS)
    node_images = ctx.informers.informer(NODEIMAGES)
    pods = ctx.informers.informer(PODS)
    secrets = ctx.informers.informer(SECRETS)
    namespace = pullsecrets.daemon_config_namespace(os.environ)
    reconciler = ImagePullJobReconciler(
        ctx.client,
        jobs=jobs,
        node_images=node_images,
        pods=pods,
        pull_secrets=PullSecretSync(ctx.client, secrets, namespace),
        wall=ctx.clock.wall,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(jobs)
    controller.watch(node_images, jobs_of)

    def source_changed(secret: dict[str, Any]) -> None:
        """A named Secret appearing or its data changing refreshes the jobs' copies."""
        if secret["metadata"].get("namespace") == namespace or secret["metadata"].get("deletionTimestamp"):
            return
        for key in jobs_naming(jobs.list(), secret):
            controller.queue.add(key)

    secrets.add_event_handler(
        on_add=source_changed,
        on_update=lambda old, new: (
            source_changed(new)
            if (old.get("data"), old.get("stringData")) != (new.get("data"), new.get("stringData"))
            else None
        ),
    )
    node_images.add_event_handler(
        on_add=lambda _n: [controller.queue.add(object_key(j)) for j in jobs.list()]
    )
    return controller
