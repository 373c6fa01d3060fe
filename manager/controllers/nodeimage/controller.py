"""Wiring of the NodeImage controller: node and NodeImage events both wake the node's key.

A NodeImage is named after its node, so the two resources share keys and plain object keys suffice.
"""

from __future__ import annotations

from kruise.kube.controller import Controller
from kruise.kube.resources import NODEIMAGES, NODES
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.nodeimage.reconciler import NodeImageReconciler

NAME = "nodeimage"


def build(ctx: ManagerContext) -> Controller:
    nodes = ctx.informers.informer(NODES)
    node_images = ctx.informers.informer(NODEIMAGES)
    reconciler = NodeImageReconciler(
        ctx.client,
        nodes=nodes,
        node_images=node_images,
        creation_delay=ctx.nodeimage_creation_delay,
        wall=ctx.clock.wall,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(nodes)
    controller.watch(node_images)
    return controller
