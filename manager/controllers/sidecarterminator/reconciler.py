"""One SidecarTerminator pass over a pod, in upstream's order.

1. On a virtual-kubelet node, swap the image of each `..._WITH_IMAGE` sidecar still up.
2. Ask kruise-daemon to stop the normal sidecars still up: create the ContainerRecreateRequest
   `sidecar-termination-<pod uid>` unless it exists (one request per pod, ever).
3. When the pod has ignore-exit-code sidecars and every other sidecar has stopped: mark the pod
   terminal (status phase and condition `SidecarTerminated`), then stop those sidecars through the
   same request (which, as upstream, is not created again if step 2 made it).

Events (reason `SidecarTerminator`, type Normal, on the pod) as upstream: one per pass that created
the request, and one per pass that swapped or found swapped the images of sidecars still running.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from kruise.api.keys import EVENT_SIDECAR_TERMINATOR
from kruise.api.objects import Obj, spec_of
from kruise.api.timestamps import rfc3339
from kruise.control.sidecarterminator import termination
from kruise.kube.client import Client, PatchType
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS
from kruise.manager.writers.pods import PodWriter


class SidecarTerminatorReconciler:
    """Reads pods and nodes from the caches; creates requests and patches pods through the client."""

    def __init__(
        self,
        client: Client,
        *,
        pods: SharedInformer,
        nodes: SharedInformer,
        recorder: EventRecorder,
        wall: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.pod_writer = PodWriter(client)
        self.pods = pods
        self.nodes = nodes
        self.recorder = recorder
        self.wall = wall

    async def reconcile(self, key: str) -> Result | None:
        pod = self.pods.get(key)
        if pod is None or not termination.is_interesting(pod):
            return None
        node_name = spec_of(pod).get("nodeName") or ""
        node = self.nodes.get(node_name)
        if node is None:
            # upstream fails the pass when it cannot read the node, and retries with backoff
            return Result(requeue=True)
        groups = termination.sidecar_groups(pod, termination.is_virtual_kubelet(node))
        await self._swap_images(pod, groups.inplace_update)
        await self._kill(pod, groups.normal)
        if (
            not groups.ignore_exit_code
            or not termination.containers_completed(pod, groups.normal)
            or not termination.containers_completed(pod, groups.inplace_update)
        ):
            return None
        await self._mark_terminated(pod)
        await self._kill(pod, groups.ignore_exit_code)
        return None

    async def _swap_images(self, pod: Obj, sidecars: Iterable[str]) -> None:
        running = termination.uncompleted(pod, sidecars)
        if not running:
            return
        meta = pod["metadata"]
        try:
            current = await self.client.get(PODS, meta["name"], meta["namespace"])
        except NotFound:
            return
        patch = termination.image_patch(current, running)
        if patch is not None:
            try:
                await self.client.patch(
                    PODS, meta["name"], patch, meta["namespace"], patch_type=PatchType.STRATEGIC
                )
            except NotFound:
                return
        self.recorder.event(
            dict(pod),
            "Normal",
            EVENT_SIDECAR_TERMINATOR,
            f"Kruise SidecarTerminator is trying to terminate sidecar {termination.go_list(running)} "
            "using in-place update",
        )

    async def _kill(self, pod: Obj, sidecars: Iterable[str]) -> None:
        running = termination.uncompleted(pod, sidecars)
        if not running:
            return
        try:
            await self.client.create(
                CONTAINER_RECREATE_REQUESTS,
                termination.kill_request(pod, running),
                pod["metadata"]["namespace"],
            )
        except AlreadyExists:
            return  # created by an earlier pass: wait for it to complete
        self.recorder.event(
            dict(pod),
            "Normal",
            EVENT_SIDECAR_TERMINATOR,
            f"Kruise SidecarTerminator is trying to terminate sidecar {termination.go_list(running)} "
            "using crr",
        )

    async def _mark_terminated(self, pod: Obj) -> None:
        patch = termination.terminated_status_patch(pod, rfc3339(self.wall()))
        if patch is None:
            return
        await self.pod_writer.patch_status(pod, patch)
