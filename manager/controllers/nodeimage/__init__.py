"""The NodeImage controller: one NodeImage per Ready node, named after it, carrying its labels.

A node's NodeImage is created `--nodeimage-creation-delay` (30 s) after the node turned Ready, so a
flapping node does not churn objects; it is deleted with the node (unless labelled
`apps.kruise.io/fake-nodeimage`, which tests use to keep a NodeImage without a node). kruise-daemon
on that node pulls what the spec lists and writes the status.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from kruise.api import features
from kruise.control import podstatus
from kruise.kube.client import PatchType
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.resources import NODEIMAGES, NODES
from kruise.manager.context import ControllerSetup, ManagerContext

NAME = "nodeimage"
FAKE_LABEL = "apps.kruise.io/fake-nodeimage"


def ready_since(node: dict[str, Any]) -> datetime | None:
    """When the node's Ready condition last turned True, or None while it is not Ready."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            if condition.get("status") != "True":
                return None
            return podstatus.parse_time(condition.get("lastTransitionTime"))
    return None


def build(ctx: ManagerContext) -> Controller:
    nodes = ctx.informers.informer(NODES)
    node_images = ctx.informers.informer(NODEIMAGES)

    async def reconcile(name: str) -> Result | None:
        node = nodes.get(name)
        node_image = node_images.get(name)
        if node is None or node["metadata"].get("deletionTimestamp"):
            if node_image is None or node_image["metadata"].get("deletionTimestamp"):
                return None
            if FAKE_LABEL not in (node_image["metadata"].get("labels") or {}):
                with contextlib.suppress(NotFound):
                    await ctx.client.delete(NODEIMAGES, name)
            return None
        labels = dict(node["metadata"].get("labels") or {})
        if node_image is None:
            since = ready_since(node)
            if since is None:
                return None
            wait = ctx.nodeimage_creation_delay - (ctx.clock.wall() - since).total_seconds()
            if wait > 0:
                return Result(requeue_after=wait)
            body = {
                "apiVersion": "apps.kruise.io/v1alpha1",
                "kind": "NodeImage",
                "metadata": {"name": name, "labels": labels},
                "spec": {},
            }
            with contextlib.suppress(AlreadyExists):
                await ctx.client.create(NODEIMAGES, body)
            return None
        current = dict(node_image["metadata"].get("labels") or {})
        if FAKE_LABEL not in current and current != labels:
            patch = {"metadata": {"labels": {**dict.fromkeys(set(current) - set(labels)), **labels}}}
            with contextlib.suppress(NotFound):
                await ctx.client.patch(NODEIMAGES, name, patch, patch_type=PatchType.MERGE)
        return None

    controller = Controller(NAME, reconcile, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(nodes)
    controller.watch(node_images)
    return controller


SETUP = ControllerSetup(NAME, build, gate=features.KRUISE_DAEMON, kinds=("NodeImage.apps.kruise.io",))
