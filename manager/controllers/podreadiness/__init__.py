"""The pod-readiness controller: gives every pod carrying the `KruisePodReady` gate its condition.

kruise-webhook adds the `KruisePodReady` readiness gate to pods at creation; the kubelet counts a
pod Ready only when every gated condition is True, so someone must set it True first. Kruise's
lifecycle hooks (and PodUnavailableBudget) later flip it False by adding not-ready keys
(`kruise.control.podreadiness`); this controller only creates it, never overwrites it.
"""

from __future__ import annotations

from typing import Any

from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.control.inplace.engine import get_condition
from kruise.control.lifecycle import rfc3339
from kruise.kube.client import PatchType
from kruise.kube.controller import Controller
from kruise.kube.errors import NotFound
from kruise.kube.resources import PODS, object_key, split_key
from kruise.manager.context import ControllerSetup, ManagerContext

NAME = "podreadiness"


def needs_condition(pod: dict[str, Any]) -> bool:
    gates = (pod.get("spec") or {}).get("readinessGates") or []
    has_gate = any(g.get("conditionType") == CONDITION_KRUISE_POD_READY for g in gates)
    return has_gate and get_condition(pod, CONDITION_KRUISE_POD_READY) is None


def build(ctx: ManagerContext) -> Controller:
    pods = ctx.informers.informer(PODS)

    async def reconcile(key: str) -> None:
        pod = pods.get(key)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp") or not needs_condition(pod):
            return
        namespace, name = split_key(key)
        condition = {
            "type": CONDITION_KRUISE_POD_READY,
            "status": "True",
            "lastTransitionTime": rfc3339(ctx.clock.wall()),
        }
        try:
            await ctx.client.patch(
                PODS,
                name,
                {"status": {"conditions": [condition]}},
                namespace,
                patch_type=PatchType.STRATEGIC,
                subresource="status",
            )
        except NotFound:
            return

    controller = Controller(NAME, reconcile, workers=ctx.workers_for(NAME), clock=ctx.clock)

    def on_add(pod: dict[str, Any]) -> None:
        if needs_condition(pod):
            controller.queue.add(object_key(pod))

    def on_update(_old: dict[str, Any], new: dict[str, Any]) -> None:
        on_add(new)

    pods.add_event_handler(on_add=on_add, on_update=on_update)
    return controller


SETUP = ControllerSetup(NAME, build)
