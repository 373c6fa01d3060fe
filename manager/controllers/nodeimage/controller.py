"""Wiring of the NodeImage controller: node and NodeImage events both wake the node's key.

A NodeImage is named after its node, so the two resources share keys and plain object keys suffice.
A deleted ImagePullJob wakes the NodeImages whose tags it owned, so those tags go at once.
"""

from __future__ import annotations

from typing import Any

from kruise.api.objects import section
from kruise.kube.controller import Controller
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES, NODES, SECRETS
from kruise.kube.store import unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.nodeimage.reconciler import NodeImageReconciler

NAME = "nodeimage"
RECORDER = "nodeimage-controller"


def owned_by(node_image: dict[str, Any], uid: str) -> bool:
    """Whether any tag in the NodeImage's spec lists the object with this uid as an owner."""
    for image in section(node_image, "spec", "images").values():
        for tag in image.get("tags") or []:
            if any(ref.get("uid") == uid for ref in tag.get("ownerReferences") or []):
                return True
    return False


def build(ctx: ManagerContext) -> Controller:
    nodes = ctx.informers.informer(NODES)
    node_images = ctx.informers.informer(NODEIMAGES)
    jobs = ctx.informers.informer(IMAGEPULLJOBS)
    reconciler = NodeImageReconciler(
        ctx.client,
        nodes=nodes,
        node_images=node_images,
        jobs=jobs,
        secrets=ctx.informers.informer(SECRETS),
        recorder=ctx.recorder(RECORDER),
        creation_delay=ctx.nodeimage_creation_delay,
        wall=ctx.clock.wall,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(nodes)
    controller.watch(node_images)

    def job_deleted(obj: Any) -> None:
        uid = unwrap_tombstone(obj)["metadata"].get("uid")
        for node_image in node_images.list():
            if uid and owned_by(node_image, uid):
                controller.queue.add(node_image["metadata"]["name"])

    jobs.add_event_handler(on_delete=job_deleted)
    return controller
