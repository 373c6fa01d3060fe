"""The SidecarSet controller: status of the pods a SidecarSet was injected into, and the in-place
rollout of a changed sidecar image into them (cold upgrade).

Injection itself happens in kruise-webhook at pod creation. When the SidecarSet's containers change
only in their images, pods are updated in place a few at a time (`updateStrategy`: partition,
maxUnavailable, selector, paused, type NotUpdate); the kubelet restarts just those sidecars. A change
beyond images cannot be applied in place and waits for the pods to be recreated by their owners.
"""

from __future__ import annotations

import contextlib
from typing import Any

import structlog

from kruise.control.sidecarset import matching
from kruise.control.sidecarset import update as plan
from kruise.kube.client import PatchType
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import NAMESPACES, PODS, SIDECARSETS, object_key
from kruise.manager.context import ControllerSetup, ManagerContext

NAME = "sidecarset"
log = structlog.get_logger("kruise.manager.sidecarset")


def build(ctx: ManagerContext) -> Controller:
    sidecarsets = ctx.informers.informer(SIDECARSETS)
    pods = ctx.informers.informer(PODS)
    namespaces = ctx.informers.informer(NAMESPACES)
    expectations = ResourceVersionExpectations(ctx.clock)
    recorder = ctx.recorder("sidecarset-controller")

    def namespace_labels(name: str) -> dict[str, str] | None:
        namespace = namespaces.get(name)
        return None if namespace is None else (namespace["metadata"].get("labels") or {})

    def covered(sidecarset: dict[str, Any]) -> list[dict[str, Any]]:
        target = (sidecarset.get("spec") or {}).get("namespace")
        return [
            p
            for p in pods.list()
            if matching.is_active_pod(p)
            and (not target or p["metadata"].get("namespace") == target)
            and plan.is_injected(p, sidecarset)
            and matching.pod_matches(sidecarset, p, namespace_labels)
        ]

    async def reconcile(name: str) -> Result | None:
        sidecarset = sidecarsets.get(name)
        if sidecarset is None or sidecarset["metadata"].get("deletionTimestamp"):
            return None
        matched = covered(sidecarset)
        for pod in matched:
            if not expectations.is_satisfied(pod):
                return Result(requeue_after=1.0)  # our last pod write is not in the cache yet
        status = plan.compute_status(sidecarset, matched)
        current = sidecarset.get("status") or {}
        if any(current.get(k) != v for k, v in status.items()):
            with contextlib.suppress(NotFound):
                await ctx.client.patch(
                    SIDECARSETS, name, {"status": status}, patch_type=PatchType.MERGE, subresource="status"
                )
        not_upgradable = [
            p["metadata"]["name"]
            for p in matched
            if not plan.is_updated(p, sidecarset) and not plan.is_upgradable(p, sidecarset)
        ]
        if not_upgradable:
            recorder.event(
                dict(sidecarset), "Normal", "NotUpgradablePods",
                f"SidecarSet {name} has {len(not_upgradable)} pods whose sidecars changed beyond images "
                "and cannot be upgraded in place",
            )  # fmt: skip
        now = ctx.clock.wall()
        for pod in plan.pods_to_update(sidecarset, matched):
            try:
                written = await ctx.client.update(PODS, plan.updated_pod(pod, sidecarset, now))
            except (Conflict, NotFound):
                continue  # the pod changed meanwhile; its event brings us back
            expectations.expect(written)
            log.info("sidecars updated in place", sidecarset=name, pod=object_key(pod))
        return None

    controller = Controller(NAME, reconcile, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(sidecarsets)

    def sidecarsets_of(pod: dict[str, Any]) -> list[str]:
        expectations.observe(pod)
        return [s["metadata"]["name"] for s in sidecarsets.list() if plan.is_injected(pod, s)]

    controller.watch(pods, sidecarsets_of)
    return controller


SETUP = ControllerSetup(NAME, build)
