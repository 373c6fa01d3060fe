"""Wiring of the pod-readiness controller: only pod events that still lack the condition wake a key.

Most pods never carry the gate and most gated pods already have the condition, so the handlers
filter with `needs_condition` instead of queueing every pod event.
"""

from __future__ import annotations

from typing import Any

from kruise.api.objects import meta_of
from kruise.kube.controller import Controller
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import PODS, object_key
from kruise.kube.store import unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.podreadiness.reconciler import PodReadinessReconciler, needs_condition

NAME = "podreadiness"


def build(ctx: ManagerContext) -> Controller:
    pods = ctx.informers.informer(PODS)
    rv_expectations = ResourceVersionExpectations(ctx.clock, ctx.expectation_timeout)
    reconciler = PodReadinessReconciler(
        ctx.client, pods=pods, wall=ctx.clock.wall, rv_expectations=rv_expectations
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)

    def on_add(pod: dict[str, Any]) -> None:
        if needs_condition(pod):
            controller.queue.add(object_key(pod))

    def on_update(_old: dict[str, Any], new: dict[str, Any]) -> None:
        rv_expectations.observe(new)
        on_add(new)

    def on_delete(obj: Any) -> None:
        rv_expectations.delete(meta_of(unwrap_tombstone(obj)).get("uid", ""))

    pods.add_event_handler(on_add=on_add, on_update=on_update, on_delete=on_delete)
    return controller
