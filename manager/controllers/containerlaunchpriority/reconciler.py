"""One launch-priority step for a pod: create its barrier, release the next key, or mark it done.

Which key comes next is `kruise.control.launchpriority.barriers.launch_step`; this module carries the step
out. A pod without a barrier first gets an empty one owned by the pod (so it goes with the pod) and
is requeued at once to take its first step against the new ConfigMap.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from kruise.api.conditions import condition_of
from kruise.api.keys import ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED
from kruise.api.objects import annotations_of, section
from kruise.control.launchpriority import barriers
from kruise.kube.client import Client, PatchType
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONFIGMAPS, PODS, split_key


def present_keys(configmap: Mapping[str, Any] | None) -> set[str] | None:
    """The barrier keys already released, or None when there is no barrier yet."""
    return None if configmap is None else set(section(configmap, "data").keys())


def should_enqueue(pod: Mapping[str, Any], barrier: Mapping[str, Any] | None) -> bool:
    """Upstream's predicate: not completed, containers not all ready, something pending whose key
    is missing (or no barrier yet)."""
    annotations = annotations_of(pod)
    if annotations.get(ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED) == "true":
        return False
    containers_ready = condition_of(pod, "ContainersReady")
    if containers_ready is not None and containers_ready.get("status") == "True":
        return False
    pending = barriers.pending_priorities(pod)
    if not pending:
        return False
    keys = present_keys(barrier)
    return keys is None or barriers.barrier_key(pending[-1]) not in keys


class ContainerLaunchPriorityReconciler:
    """Reads pods and barrier ConfigMaps from the caches; writes ConfigMaps and the pod annotation."""

    def __init__(self, client: Client, *, pods: SharedInformer, configmaps: SharedInformer) -> None:
        self.client = client
        self.pods = pods
        self.configmaps = configmaps

    def barrier_of(self, pod: Mapping[str, Any]) -> dict[str, Any] | None:
        """The pod's `<pod>-barrier` ConfigMap from the cache."""
        meta = pod["metadata"]
        return self.configmaps.get(f"{meta['namespace']}/{barriers.barrier_configmap_name(meta['name'])}")

    async def reconcile(self, key: str) -> Result | None:
        pod = self.pods.get(key)
        if pod is None:
            return None
        namespace, name = split_key(key)
        barrier = self.barrier_of(pod)
        if barrier is None:
            await self._create_barrier(pod, namespace, name)
            return Result(requeue=True)
        add, complete = barriers.launch_step(barriers.pending_priorities(pod), present_keys(barrier) or set())
        if add is not None:
            await self.client.patch(
                CONFIGMAPS,
                barrier["metadata"]["name"],
                {"data": {add: "true"}},
                namespace,
                patch_type=PatchType.STRATEGIC,
            )
        if complete:
            await self._mark_completed(namespace, name)
        return None

    async def _create_barrier(self, pod: Mapping[str, Any], namespace: str, name: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": barriers.barrier_configmap_name(name),
                "namespace": namespace,
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod["metadata"]["uid"]}
                ],
            },
        }
        with contextlib.suppress(AlreadyExists):  # a racing worker or a stale cache: it is there
            await self.client.create(CONFIGMAPS, body)

    async def _mark_completed(self, namespace: str, name: str) -> None:
        """The annotation that makes `should_enqueue` drop the pod for good."""
        with contextlib.suppress(NotFound):
            await self.client.patch(
                PODS,
                name,
                {"metadata": {"annotations": {ANNOTATION_CONTAINER_LAUNCH_PRIORITY_COMPLETED: "true"}}},
                namespace,
                patch_type=PatchType.STRATEGIC,
            )
