"""Wiring of the SidecarTerminator controller.

Only pods wake it, as upstream's handler: a created pod or a new resourceVersion of a pod enqueues
the pod when it is interesting (Job-like, main work done, a sidecar still up); deletions are ignored.
Nodes are read from a cache to tell virtual-kubelet nodes apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api.objects import MutableObj
from kruise.control.sidecarterminator import termination
from kruise.kube.controller import Controller
from kruise.kube.resources import NODES, PODS, object_key
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.sidecarterminator.reconciler import SidecarTerminatorReconciler

NAME = "sidecarterminator"
COMPONENT = "sidecarterminator-controller"
UPSTREAM_WORKERS = 3  # upstream's --sidecarterminator-workers default


def pod_handlers(enqueue: Callable[[str], None]) -> dict[str, Any]:
    def on_add(pod: MutableObj) -> None:
        if termination.is_interesting(pod):
            enqueue(object_key(pod))

    def on_update(old: MutableObj, new: MutableObj) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        on_add(new)

    return {"on_add": on_add, "on_update": on_update}


def build(ctx: ManagerContext) -> Controller:
    pods = ctx.informers.informer(PODS)
    nodes = ctx.informers.informer(NODES)
    reconciler = SidecarTerminatorReconciler(
        ctx.client, pods=pods, nodes=nodes, recorder=ctx.recorder(COMPONENT), wall=ctx.clock.wall
    )
    workers = ctx.workers.get(NAME, UPSTREAM_WORKERS)
    controller = Controller(NAME, reconciler, workers=workers, clock=ctx.clock)
    pods.add_event_handler(**pod_handlers(controller.queue.add))
    return controller
