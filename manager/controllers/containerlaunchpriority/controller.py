"""Wiring of the container-launch-priority controller: pod and barrier ConfigMap events wake the pod.

Both handlers filter with upstream's predicate (`should_enqueue`), so the many pods without launch
priority, or already done, never reach the workqueue.
"""

from __future__ import annotations

from typing import Any

from kruise.api.objects import owner_refs_of
from kruise.kube.controller import Controller
from kruise.kube.resources import CONFIGMAPS, PODS, object_key
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.containerlaunchpriority.reconciler import (
    ContainerLaunchPriorityReconciler,
    should_enqueue,
)

NAME = "containerlaunchpriority"


def build(ctx: ManagerContext) -> Controller:
    pods = ctx.informers.informer(PODS)
    configmaps = ctx.informers.informer(CONFIGMAPS)
    reconciler = ContainerLaunchPriorityReconciler(ctx.client, pods=pods, configmaps=configmaps)
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)

    def on_pod(pod: dict[str, Any]) -> None:
        if should_enqueue(pod, reconciler.barrier_of(pod)):
            controller.queue.add(object_key(pod))

    def on_pod_update(_old: dict[str, Any], new: dict[str, Any]) -> None:
        on_pod(new)

    def on_configmap(configmap: dict[str, Any]) -> None:
        """A barrier that appeared or changed: its pod may now move on (the cache is fresher than
        the pod event that asked for it)."""
        for ref in owner_refs_of(configmap):
            if ref.get("kind") == "Pod" and configmap["metadata"]["name"].endswith("-barrier"):
                pod = pods.get(f"{configmap['metadata']['namespace']}/{ref['name']}")
                if pod is not None and should_enqueue(pod, configmap):
                    controller.queue.add(object_key(pod))

    pods.add_event_handler(on_add=on_pod, on_update=on_pod_update)
    configmaps.add_event_handler(on_add=on_configmap, on_update=lambda _o, n: on_configmap(n))
    return controller
