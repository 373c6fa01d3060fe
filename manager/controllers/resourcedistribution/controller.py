"""Wiring of the ResourceDistribution controller.

A distribution wakes on its own spec changes (its status writes do not wake it). A namespace that
appears wakes the distributions it is a target of; one that goes away wakes those that list it; a
namespace whose labels change wakes those whose selector matches the old or the new labels. A copy
that is edited or deleted wakes its controlling distribution, which puts it back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api.controllerref import controller_of
from kruise.api.objects import MutableObj, meta_of
from kruise.control.resourcedistribution import distribution
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONFIGMAPS, NAMESPACES, RESOURCEDISTRIBUTIONS, SECRETS
from kruise.kube.store import unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.resourcedistribution.reconciler import ResourceDistributionReconciler

NAME = "resourcedistribution"


def distribution_of(obj: MutableObj) -> list[str]:
    """The controlling ResourceDistribution of a copy (cluster-scoped: its key is its name)."""
    ref = controller_of(obj)
    if ref is None or ref.get("kind") != distribution.KIND:
        return []
    return [ref["name"]] if ref.get("apiVersion", "").startswith("apps.kruise.io/") else []


def spec_changed(old: MutableObj, new: MutableObj) -> bool:
    return old.get("spec") != new.get("spec")


def namespace_handlers(distributions: SharedInformer, enqueue: Callable[[str], None]) -> dict[str, Any]:
    def wake(namespace: MutableObj, match: Callable[[MutableObj, MutableObj], bool]) -> None:
        for rd in distributions.list():
            if match(namespace, rd):
                enqueue(rd["metadata"]["name"])

    def on_update(old: MutableObj, new: MutableObj) -> None:
        if meta_of(old).get("labels") == meta_of(new).get("labels"):
            return
        wake(new, distribution.matches_selector)
        wake(old, distribution.matches_selector)

    return {
        "on_add": lambda ns: wake(ns, distribution.matches_targets),
        "on_update": on_update,
        "on_delete": lambda ns: wake(unwrap_tombstone(ns), distribution.lists_namespace),
    }


def copy_handlers(enqueue: Callable[[str], None]) -> dict[str, Any]:
    """Updates and deletes of copies only (upstream ignores creations: the distribution made them)."""

    def wake(obj: MutableObj) -> None:
        for key in distribution_of(obj):
            enqueue(key)

    return {"on_update": lambda _old, new: wake(new), "on_delete": lambda obj: wake(unwrap_tombstone(obj))}


def build(ctx: ManagerContext) -> Controller:
    distributions = ctx.informers.informer(RESOURCEDISTRIBUTIONS)
    namespaces = ctx.informers.informer(NAMESPACES)
    copies = {"Secret": ctx.informers.informer(SECRETS), "ConfigMap": ctx.informers.informer(CONFIGMAPS)}
    reconciler = ResourceDistributionReconciler(
        ctx.client, distributions=distributions, namespaces=namespaces, copies=copies, clock=ctx.clock
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(distributions, update_filter=spec_changed)
    namespaces.add_event_handler(**namespace_handlers(distributions, controller.queue.add))
    for informer in copies.values():
        informer.add_event_handler(**copy_handlers(controller.queue.add))
    return controller
