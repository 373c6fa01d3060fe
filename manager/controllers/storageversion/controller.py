"""Wiring: the CRD informer, filtered to the Kruise kinds, feeding one queue keyed by CRD name."""

from __future__ import annotations

from typing import Any

from kruise.api import registry
from kruise.kube.controller import Controller
from kruise.kube.resources import CRDS
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.storageversion.reconciler import StorageVersionReconciler

NAME = "storageversion"
_KRUISE_CRDS = frozenset(info.name for info in registry.KINDS)


def kruise_crd_keys(crd: dict[str, Any]) -> list[str]:
    name = (crd.get("metadata") or {}).get("name", "")
    return [name] if name in _KRUISE_CRDS else []


def build(ctx: ManagerContext) -> Controller:
    crds = ctx.informers.informer(CRDS)
    reconciler = StorageVersionReconciler(ctx.client, crds)
    controller = Controller(NAME, reconciler, workers=1, clock=ctx.clock)
    controller.watch(crds, kruise_crd_keys)
    return controller
