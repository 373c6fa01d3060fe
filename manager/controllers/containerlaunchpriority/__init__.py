"""The container-launch-priority controller: releases barrier keys so containers start in order.

kruise-webhook gave every container of an ordered pod an env var read from ConfigMap
`<pod>-barrier`, key `p_<priority>`; the kubelet cannot start a container until its key exists.
This controller creates the ConfigMap (owned by the pod), adds the key of the highest pending
priority, waits until those containers are Ready, then the next — and finally marks the pod
`apps.kruise.io/container-launch-priority-completed: "true"` so it is never looked at again.
"""

from __future__ import annotations

import contextlib
from typing import Any

from kruise.api.keys import ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED
from kruise.control import launchpriority
from kruise.control.inplace.engine import get_condition
from kruise.kube.client import PatchType
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.resources import CONFIGMAPS, PODS, object_key, split_key
from kruise.manager.context import ControllerSetup, ManagerContext

NAME = "containerlaunchpriority"


def present_keys(configmap: dict[str, Any] | None) -> set[str] | None:
    return None if configmap is None else set((configmap.get("data") or {}).keys())


def should_enqueue(pod: dict[str, Any], barrier: dict[str, Any] | None) -> bool:
    """Upstream's predicate: not completed, containers not all ready, something pending whose key
    is missing (or no barrier yet)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if annotations.get(ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED) == "true":
        return False
    containers_ready = get_condition(pod, "ContainersReady")
    if containers_ready is not None and containers_ready.get("status") == "True":
        return False
    pending = launchpriority.pending_priorities(pod)
    if not pending:
        return False
    keys = present_keys(barrier)
    return keys is None or launchpriority.barrier_key(pending[-1]) not in keys


def build(ctx: ManagerContext) -> Controller:
    pods = ctx.informers.informer(PODS)
    configmaps = ctx.informers.informer(CONFIGMAPS)

    def barrier_of(pod: dict[str, Any]) -> dict[str, Any] | None:
        meta = pod["metadata"]
        return configmaps.get(f"{meta['namespace']}/{launchpriority.barrier_configmap_name(meta['name'])}")

    async def reconcile(key: str) -> Result | None:
        pod = pods.get(key)
        if pod is None:
            return None
        namespace, name = split_key(key)
        barrier = barrier_of(pod)
        if barrier is None:
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": launchpriority.barrier_configmap_name(name),
                    "namespace": namespace,
                    "ownerReferences": [
                        {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod["metadata"]["uid"]}
                    ],
                },
            }
            with contextlib.suppress(AlreadyExists):
                await ctx.client.create(CONFIGMAPS, body)
            return Result(requeue=True)
        add, complete = launchpriority.launch_step(
            launchpriority.pending_priorities(pod), present_keys(barrier) or set()
        )
        if add is not None:
            await ctx.client.patch(
                CONFIGMAPS,
                barrier["metadata"]["name"],
                {"data": {add: "true"}},
                namespace,
                patch_type=PatchType.STRATEGIC,
            )
        if complete:
            try:
                await ctx.client.patch(
                    PODS,
                    name,
                    {"metadata": {"annotations": {ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED: "true"}}},
                    namespace,
                    patch_type=PatchType.STRATEGIC,
                )
            except NotFound:
                return None
        return None

    controller = Controller(NAME, reconcile, workers=ctx.workers_for(NAME), clock=ctx.clock)

    def on_pod(pod: dict[str, Any]) -> None:
        if should_enqueue(pod, barrier_of(pod)):
            controller.queue.add(object_key(pod))

    def on_pod_update(_old: dict[str, Any], new: dict[str, Any]) -> None:
        on_pod(new)

    def on_configmap(configmap: dict[str, Any]) -> None:
        """A barrier that appeared or changed: its pod may now move on (the cache is fresher than
        the pod event that asked for it)."""
        for ref in (configmap.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") == "Pod" and configmap["metadata"]["name"].endswith("-barrier"):
                pod = pods.get(f"{configmap['metadata']['namespace']}/{ref['name']}")
                if pod is not None and should_enqueue(pod, configmap):
                    controller.queue.add(object_key(pod))

    pods.add_event_handler(on_add=on_pod, on_update=on_pod_update)
    configmaps.add_event_handler(on_add=on_configmap, on_update=lambda _o, n: on_configmap(n))
    return controller


SETUP = ControllerSetup(NAME, build)
