"""Wiring: one informer per unhandled Kruise kind (storage version), all feeding one queue keyed by kind."""

from __future__ import annotations

from typing import Any

from kruise.api import registry
from kruise.kube.controller import Controller
from kruise.kube.resources import ResourceRef, object_key
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.unhandled.reconciler import UnhandledReconciler

NAME = "unhandled"


def _resource(kind: str) -> ResourceRef:
    name, _, group = kind.partition(".")
    info = registry.by_kind(group, name)
    storage = next(v.name for v in info.versions if v.storage)
    return ResourceRef(group, storage, info.plural, info.scope == "Namespaced", info.kind)


def build(ctx: ManagerContext) -> Controller:
    informers = {kind: ctx.informers.informer(_resource(kind)) for kind in sorted(ctx.unhandled_kinds)}
    reconciler = UnhandledReconciler(ctx.recorder("kruise-manager"), informers, ctx.unhandled_kinds)
    controller = Controller(NAME, reconciler, workers=1, clock=ctx.clock)
    for kind, informer in informers.items():

        def keys(obj: dict[str, Any], kind: str = kind) -> list[str]:
            return [f"{kind}:{object_key(obj)}"]

        controller.watch(informer, keys)
    return controller
