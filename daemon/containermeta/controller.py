"""The containermeta reporter: writes ``apps.kruise.io/runtime-containers-meta`` on the pods of this node.

kruise-manager cannot see which container the runtime runs or what env it started with; an in-place
update that changes only labels/annotations read by env ``fieldRef``s (InPlaceUpdateEnvFromMetadata)
completes only when this report shows every container with the env hash its metadata implies. So, per
pod of a Kruise workload (or with SidecarSet containers) on this node, whenever a container got a new ID
or the metadata-implied env hash moved away from the reported one: list the pod's containers through CRI,
read each new container's env once (``ExecSync env``) and hash the metadata-sourced values, write the
report (a strategic-merge patch of ``pods/status``, as upstream — kruise-daemon may write pod status,
not pods), and hand containers whose hash is stale during an in-place update to the restarter
(``report`` says which). Pods seen first at start-up without a report are left until their next change,
as upstream does, so a daemon restart does not patch every pod of the node at once.

Decisions are in ``report``; this module does the I/O.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
import structlog

from kruise.api.keys import ANNOTATION_RUNTIME_CONTAINERS_META
from kruise.control.common.inplace import envhash
from kruise.daemon.containermeta.report import (
    RuntimeContainer,
    can_sync,
    dump_meta_set,
    env_hash_missing,
    needs_report,
    new_meta,
    parse_meta_set,
    reusable_meta,
    set_env_hash,
    stale_env,
)
from kruise.daemon.containermeta.restarter import Restarter
from kruise.daemon.cri import api_pb2 as cri
from kruise.daemon.cri.client import CONTAINER_NAME_LABEL, POD_UID_LABEL, RuntimeClient
from kruise.kube.client import Client, PatchType
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import NotFound
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.ratelimit import ItemExponentialFailureRateLimiter
from kruise.kube.resources import PODS, object_key
from kruise.kube.store import unwrap_tombstone

log = structlog.get_logger("kruise.daemon.containermeta")

ENQUEUE_DELAY_SECONDS = 1.0  # upstream batches a pod's burst of events into one report
ENV_RETRY_SECONDS = 3.0
EXEC_TIMEOUT_SECONDS = 3
EXPECTATION_TIMEOUT_SECONDS = 30.0
HASH_ANNOTATION = "io.kubernetes.container.hash"
RESTART_COUNT_ANNOTATION = "io.kubernetes.container.restartCount"


class EnvUnreadable(Exception):
    """``env`` could not be run in the container (it is retried)."""


def _runtime_type(pod: Mapping[str, Any]) -> str | None:
    """The runtime named by the pod's container IDs (``containerd://…``); None before any container."""
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        container_id = status.get("containerID") or ""
        if container_id:
            return container_id.partition("://")[0] or None
    return None


def _hex(value: str | None) -> int:
    try:
        return int(value or "", 16)
    except ValueError:
        return 0


def runtime_containers(found: Sequence[cri.Container], runtime_type: str) -> dict[str, RuntimeContainer]:
    """The newest runtime container of each name (the kubelet's ``FindContainerStatusByName``)."""
    newest: dict[str, RuntimeContainer] = {}
    for c in sorted(found, key=lambda c: c.created_at, reverse=True):
        name = c.labels.get(CONTAINER_NAME_LABEL) or c.metadata.name
        if name in newest:
            continue
        restart_count = c.annotations.get(RESTART_COUNT_ANNOTATION)
        newest[name] = RuntimeContainer(
            name=name,
            container_id=f"{runtime_type}://{c.id}",
            restart_count=int(restart_count) if (restart_count or "").isdigit() else c.metadata.attempt,
            plain_hash=_hex(c.annotations.get(HASH_ANNOTATION)),
            running=c.state == cri.CONTAINER_RUNNING,
        )
    return newest


def parse_env(stdout: bytes) -> dict[str, str]:
    """``env`` output: one NAME=value per line (a value spanning lines keeps its first line, as upstream)."""
    found = {}
    for line in stdout.decode(errors="replace").strip().split("\n"):
        name, sep, value = line.strip().partition("=")
        if sep:
            found[name] = value
    return found


class ContainerMetaController:
    def __init__(
        self,
        client: Client,
        runtime: RuntimeClient,
        node_name: str,
        *,
        env_from_metadata: bool = True,
        workers: int = 5,
        restart_workers: int = 10,
    ) -> None:
        self.client = client
        self.runtime = runtime
        self.env_from_metadata = env_from_metadata
        self.expectations = ResourceVersionExpectations(timeout=EXPECTATION_TIMEOUT_SECONDS)
        self.pods = SharedInformer(client, PODS, None, field_selector=f"spec.nodeName={node_name}")
        self.controller = Controller(
            "runtime_container_meta",
            self.reconcile,
            workers=workers,
            rate_limiter=ItemExponentialFailureRateLimiter(0.5, 50.0 + random.uniform(0.0, 5.0)),
        )
        self.restarter = Restarter(runtime, workers=restart_workers)
        self.pods.add_event_handler(on_add=self._on_add, on_update=self._on_update, on_delete=self._on_delete)
        self._workers_starter: asyncio.Future[None] | None = None

    # ---- events ------------------------------------------------------------------------------

    def _enqueue(self, pod: dict[str, Any]) -> None:
        if can_sync(pod):
            self.controller.queue.add_after(object_key(pod), ENQUEUE_DELAY_SECONDS)

    def _on_add(self, pod: dict[str, Any]) -> None:
        if parse_meta_set(pod) is not None and needs_report(None, pod, self.env_from_metadata):
            self._enqueue(pod)

    def _on_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        if needs_report(old, new, self.env_from_metadata):
            self._enqueue(new)

    def _on_delete(self, obj: Any) -> None:
        uid = (unwrap_tombstone(obj).get("metadata") or {}).get("uid")
        if uid:
            self.expectations.delete(uid)

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """The informer now, the workers once it has synced (a key handled before would find no pod)."""
        self.pods.start()
        self.restarter.start()
        self._workers_starter = asyncio.ensure_future(self._start_workers_when_synced())

    async def _start_workers_when_synced(self) -> None:
        await self.pods.wait_for_sync(None)
        self.controller.start()

    def has_synced(self) -> bool:
        return self.pods.has_synced()

    async def stop(self, timeout: float | None = 30.0) -> None:
        starter = self._workers_starter
        if starter is not None and not starter.done():
            starter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starter
        await self.controller.stop(timeout=timeout)
        await self.restarter.stop(timeout=timeout)
        await self.pods.stop()

    # ---- one pod -----------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result | None:
        pod = self.pods.get(key)
        if pod is None or not can_sync(pod):
            return None
        self.expectations.observe(pod)
        if not self.expectations.is_satisfied(pod):
            return None  # our last report is not in the cache yet; its event brings the pod back
        runtime_type = _runtime_type(pod)
        if runtime_type is None:
            return None
        found = await self.runtime.list_containers({POD_UID_LABEL: pod["metadata"].get("uid", "")})
        containers = runtime_containers(found, runtime_type)
        old = parse_meta_set(pod)
        metas, retry = await self._metas(pod, containers, old)
        if metas != old:
            await self._report(pod, metas)
        return Result(requeue_after=ENV_RETRY_SECONDS) if retry else None

    async def _metas(
        self,
        pod: dict[str, Any],
        containers: Mapping[str, RuntimeContainer],
        old: list[dict[str, Any]] | None,
    ) -> tuple[list[dict[str, Any]], bool]:
        """The new report, and whether some container's env could not be read yet."""
        spec = pod.get("spec") or {}
        all_specs = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
        specs = {c.get("name"): c for c in all_specs}
        metas: list[dict[str, Any]] = []
        retry = False
        for status in (pod.get("status") or {}).get("containerStatuses") or []:
            container, container_spec = containers.get(status.get("name")), specs.get(status.get("name"))
            if container is None or container_spec is None:
                continue
            meta = reusable_meta(old, container.container_id) or new_meta(container)
            if self.env_from_metadata:
                if env_hash_missing(meta) and container.running:
                    try:
                        set_env_hash(meta, await self._current_env_hash(container, container_spec))
                    except EnvUnreadable as exc:
                        log.warning("cannot read container env", pod=object_key(pod), error=str(exc))
                        retry = True
                if stale_env(pod, container_spec, meta):
                    log.info(
                        "restarting container: its env from metadata is stale",
                        pod=object_key(pod),
                        container=container.name,
                        container_id=container.container_id,
                    )
                    self.restarter.request(container.container_id)
            metas.append(meta)
        return metas, retry

    async def _current_env_hash(self, container: RuntimeContainer, spec: Mapping[str, Any]) -> int:
        if not envhash.meta_env_refs(spec):
            return envhash.hash_envs([])  # nothing to read: the hash of no envs, without an exec
        runtime_id = container.container_id.partition("://")[2]
        try:
            result = await self.runtime.exec_sync(runtime_id, ["env"], EXEC_TIMEOUT_SECONDS)
        except grpc.aio.AioRpcError as exc:
            raise EnvUnreadable(f"{container.container_id}: {exc.details() or exc.code().name}") from exc
        if result.exit_code != 0:
            raise EnvUnreadable(f"{container.container_id}: `env` exited with {result.exit_code}")
        values = parse_env(result.stdout)
        return envhash.current_hash(spec, lambda name: values.get(name, ""))

    async def _report(self, pod: dict[str, Any], metas: list[dict[str, Any]]) -> None:
        meta = pod["metadata"]
        value = dump_meta_set(metas)
        log.info("reporting container meta", pod=object_key(pod), meta=value)
        patch = {"metadata": {"annotations": {ANNOTATION_RUNTIME_CONTAINERS_META: value}}}
        try:
            written = await self.client.patch(
                PODS,
                meta["name"],
                patch,
                meta.get("namespace"),
                patch_type=PatchType.STRATEGIC,
                subresource="status",
            )
        except NotFound:
            return
        self.expectations.expect(written)
