"""``CriNodeRuntime``: the ``NodeRuntime`` of a real node, over CRI gRPC to its containerd.

Every method is one CRI call (see ``noderuntime``); what a real kubelet keeps beside the runtime
is kept here too: each pod's log directory and volume files on the host, and which log file
belongs to which container instance, for ``kubectl logs``. Grace periods are simulated seconds
like everywhere in the simulator, so StopContainer's timeout is divided by the node's speed
(rounded up to whole seconds, CRI's unit). gRPC failures become the ``CriError`` of their status
code; StopContainer (it blocks for up to the grace period) gets a deadline past that period.

containerd 1.6 has no event stream, so ``start`` polls ListContainers every ``poll_seconds``
and reports to ``on_exit`` each container that is newly EXITED (whether or not a list ever saw it
running) or vanished while running.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.message import Message

from kruise.sandbox.cri import (
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    AlreadyExistsError,
    ContainerState,
    CriError,
    ExecResult,
    LinuxResources,
)
from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.errors import error_for
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.cri.wire import resources_message
from kruise.sandbox.simulator.cri_config import (
    REQUESTED_IMAGE_ANNOTATION,
    container_config,
    log_directory,
    sandbox_config,
)
from kruise.sandbox.simulator.cri_streams import attach_url, exec_url
from kruise.sandbox.simulator.crilog import read_log
from kruise.sandbox.simulator.logs import LogOptions, NoInstance
from kruise.sandbox.simulator.node import NodeSpec
from kruise.sandbox.simulator.noderuntime import (
    ContainerExit,
    ContainerStatus,
    ImageInfo,
    LogReader,
    Obj,
    RegistryAuth,
    Sandbox,
    StartFailed,
    StreamOptions,
)
from kruise.sandbox.simulator.podvolumes import VolumeContext
from kruise.sandbox.simulator.process_runner import ProcessRunner
from kruise.sandbox.simulator.timing import Timing

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5
CALL_TIMEOUT = 60.0  # seconds for an ordinary CRI call (a pull of a stand-in takes well under that)
STOP_MARGIN = 30.0  # beyond the grace period, for StopContainer's own work
SANDBOX_ATTEMPTS = 5  # RunPodSandbox attempts of one pod (a name reserved by a failed start)


@dataclass
class _PodFiles:
    """What the kubelet keeps for a pod beside the runtime: its log directory and instances."""

    uid: str
    log_dir: Path
    instances: dict[str, dict[int, str]] = field(default_factory=dict)  # container -> attempt -> id


def _exit_of(container_id: str, labels: Mapping[str, str]) -> ContainerExit | None:
    if POD_NAMESPACE_LABEL not in labels or POD_NAME_LABEL not in labels:
        return None  # not one of the kubelet's (e.g. created by crictl)
    return ContainerExit(
        container_id=container_id,
        pod_namespace=labels[POD_NAMESPACE_LABEL],
        pod_name=labels[POD_NAME_LABEL],
        pod_uid=labels.get(POD_UID_LABEL, ""),
        container_name=labels.get(CONTAINER_NAME_LABEL, ""),
    )


def _new_exits(
    before: Mapping[str, tuple[int, dict[str, str]]], now: Mapping[str, tuple[int, dict[str, str]]]
) -> list[ContainerExit]:
    """Containers EXITED now but not in the last list (a short-lived one may never have been seen
    RUNNING), and RUNNING ones that vanished."""
    found = []
    for container_id, (state, labels) in now.items():
        was = before.get(container_id)
        if state == ContainerState.EXITED and (was is None or was[0] != ContainerState.EXITED):
            found.append(_exit_of(container_id, labels))
    for container_id, (state, labels) in before.items():
        if container_id not in now and state == ContainerState.RUNNING:
            found.append(_exit_of(container_id, labels))
    return [exit_ for exit_ in found if exit_ is not None]


class CriNodeRuntime:
    """``NodeRuntime`` over the CRI socket ``socket`` of node ``node`` (see the module docstring).

    ``files`` provides the API lookups (ConfigMaps, Secrets, service account tokens) and the host
    layout (``pods/<uid>`` volumes, ``nodes/<node>`` hostPath roots) shared with process
    containers; ``log_root`` is the node's ``/var/log/pods``; ``api_host``/``api_port`` is where
    pods reach the API server (``KUBERNETES_SERVICE_HOST``/``_PORT``).
    """

    def __init__(
        self,
        node: NodeSpec,
        socket: Path,
        timing: Timing,
        files: ProcessRunner,
        log_root: Path,
        *,
        api_host: str,
        api_port: str,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.node = node
        self.timing = timing
        self.files = files
        self.log_root = Path(log_root)
        self.api_host = api_host
        self.api_port = api_port
        self.poll_seconds = poll_seconds
        self.cri = CriClient(socket, timeout=CALL_TIMEOUT)
        self._pods: dict[str, _PodFiles] = {}  # pod uid -> files
        self._sandbox_pods: dict[str, str] = {}  # sandbox id -> pod uid
        self._stops: dict[str, asyncio.Task[None]] = {}  # container id -> StopContainer in flight
        self._on_exit: Callable[[ContainerExit], None] = lambda _exit: None
        self._poller: asyncio.Task[None] | None = None

    async def _call(self, method: str, request: Message, timeout: float | None = CALL_TIMEOUT) -> Any:
        try:
            return await self.cri.call(method, request, timeout=timeout)
        except grpc.aio.AioRpcError as error:
            raise error_for(error.code().name, f"{method}: {error.details()}") from None

    # ------------------------------------------------------------- lifecycle

    async def start(self, on_exit: Callable[[ContainerExit], None]) -> None:
        self.cri.open()
        self._on_exit = on_exit
        self._poller = asyncio.create_task(self._poll(), name=f"cri {self.node.name} exits")

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
            self._poller = None
        for task in list(self._stops.values()):
            task.cancel()
        await asyncio.gather(*self._stops.values(), return_exceptions=True)
        await self.cri.close()

    async def _poll(self) -> None:
        seen: dict[str, tuple[int, dict[str, str]]] = {}  # container id -> (state, labels) last round
        while True:
            try:
                listed = await self._call("ListContainers", messages.ListContainersRequest())
            except CriError as error:  # containerd restarting or gone: try again next round
                log.debug("node %s: ListContainers failed: %s", self.node.name, error)
            else:
                now = {c.id: (int(c.state), dict(c.labels)) for c in listed.containers}
                for exited in _new_exits(seen, now):
                    self._on_exit(exited)
                seen = now
            await asyncio.sleep(self.poll_seconds)

    # ---------------------------------------------------------------- images

    async def image_status(self, image: str) -> ImageInfo | None:
        answer = await self._call(
            "ImageStatus", messages.ImageStatusRequest(image=messages.ImageSpec(image=image))
        )
        if not answer.HasField("image") or not answer.image.id:
            return None
        found = answer.image
        return ImageInfo(found.id, found.size, tuple(found.repo_tags), tuple(found.repo_digests))

    async def image_present(self, image: str) -> bool:
        return await self.image_status(image) is not None

    async def pull_image(self, image: str, auth: RegistryAuth | None = None) -> str:
        request = messages.PullImageRequest(image=messages.ImageSpec(image=image))
        if auth is not None:
            # containerd 1.6 ignores credentials that name a server_address other than the host it
            # resolved, so the address is left out: the credentials go with this pull only anyway
            fields = {k: v for k, v in vars(auth).items() if v and k != "server_address"}
            request.auth.CopyFrom(messages.AuthConfig(**fields))
        return str((await self._call("PullImage", request, timeout=None)).image_ref)

    # ------------------------------------------------------------- sandboxes

    async def run_pod_sandbox(self, pod: Obj) -> Sandbox:
        uid = pod["metadata"]["uid"]
        log_dir = log_directory(self.log_root, pod)
        log_dir.mkdir(parents=True, exist_ok=True)
        for attempt in range(SANDBOX_ATTEMPTS):
            request = messages.RunPodSandboxRequest(config=sandbox_config(pod, log_dir, attempt))
            try:
                sandbox_id = str((await self._call("RunPodSandbox", request, timeout=None)).pod_sandbox_id)
                break
            except AlreadyExistsError:  # this attempt's name is still reserved: take the next
                if attempt == SANDBOX_ATTEMPTS - 1:
                    raise
        self._pods.setdefault(uid, _PodFiles(uid, log_dir))
        self._sandbox_pods[sandbox_id] = uid
        if (pod.get("spec") or {}).get("hostNetwork"):
            return Sandbox(sandbox_id, self.node.internal_ip)
        status = await self._call(
            "PodSandboxStatus", messages.PodSandboxStatusRequest(pod_sandbox_id=sandbox_id)
        )
        return Sandbox(sandbox_id, str(status.status.network.ip))

    async def stop_pod_sandbox(self, sandbox_id: str) -> None:
        await self._call(
            "StopPodSandbox", messages.StopPodSandboxRequest(pod_sandbox_id=sandbox_id), timeout=None
        )

    async def remove_pod_sandbox(self, sandbox_id: str) -> None:
        """RemovePodSandbox, then what the kubelet keeps of the pod: its logs and volume files."""
        await self._call(
            "RemovePodSandbox", messages.RemovePodSandboxRequest(pod_sandbox_id=sandbox_id), timeout=None
        )
        uid = self._sandbox_pods.pop(sandbox_id, None)
        if uid is None or uid in self._sandbox_pods.values():
            return
        files = self._pods.pop(uid, None)
        if files is not None:
            shutil.rmtree(files.log_dir, ignore_errors=True)
        self.files.forget(uid)

    # ------------------------------------------------------------ containers

    async def create_container(
        self, sandbox: Sandbox, pod: Obj, container: Mapping[str, Any], attempt: int
    ) -> str:
        meta = pod["metadata"]
        base = {
            "KUBERNETES_SERVICE_HOST": self.api_host,
            "KUBERNETES_SERVICE_PORT": self.api_port,
            "KUBERNETES_SERVICE_PORT_HTTPS": self.api_port,
        }
        context = VolumeContext(pod, self.files.fetch, self.files.token, sandbox.ip, self.node.internal_ip)
        config = await container_config(
            pod,
            container,
            attempt,
            context=context,
            pod_dir=self.files.pod_dir(meta["uid"]),
            node_root=self.files.node_root(self.node.name),
            base_env=base,
        )
        log_dir = log_directory(self.log_root, pod)
        request = messages.CreateContainerRequest(
            pod_sandbox_id=sandbox.id, config=config, sandbox_config=sandbox_config(pod, log_dir)
        )
        container_id = str((await self._call("CreateContainer", request)).container_id)
        files = self._pods.setdefault(meta["uid"], _PodFiles(meta["uid"], log_dir))
        files.instances.setdefault(container["name"], {})[attempt] = container_id
        return container_id

    async def start_container(self, container_id: str) -> None:
        try:
            await self._call("StartContainer", messages.StartContainerRequest(container_id=container_id))
        except CriError as error:  # containerd marks it EXITED with 128 (StartError)
            raise StartFailed(str(error)) from None

    async def update_container_resources(self, container_id: str, resources: LinuxResources) -> None:
        request = messages.UpdateContainerResourcesRequest(
            container_id=container_id, linux=resources_message(resources)
        )
        await self._call("UpdateContainerResources", request)

    async def stop_container(self, container_id: str, grace: int) -> None:
        task = self._stops.get(container_id)
        if task is None:
            task = asyncio.create_task(self._stop(container_id, grace), name=f"stop {container_id[:12]}")
            self._stops[container_id] = task
            task.add_done_callback(lambda _t: self._stops.pop(container_id, None))
        await asyncio.shield(task)

    async def _stop(self, container_id: str, grace: int) -> None:
        seconds = math.ceil(self.timing.scaled(float(max(grace, 0))))
        request = messages.StopContainerRequest(container_id=container_id, timeout=seconds)
        await self._call("StopContainer", request, timeout=seconds + STOP_MARGIN)

    async def finish_simulated(self, container_id: str, exit_code: int) -> None:
        raise CriError(f"container {container_id[:12]}: a real node has no simulated containers")

    async def remove_container(self, container_id: str) -> None:
        await self._call("RemoveContainer", messages.RemoveContainerRequest(container_id=container_id))

    async def container_status(self, container_id: str) -> ContainerStatus | None:
        try:
            answer = await self._call(
                "ContainerStatus", messages.ContainerStatusRequest(container_id=container_id)
            )
        except CriError as error:
            if error.code == "NOT_FOUND":
                return None
            raise
        status = answer.status
        return ContainerStatus(
            id=status.id,
            name=status.metadata.name,
            attempt=status.metadata.attempt,
            state=ContainerState(status.state),
            requested_image=status.annotations.get(REQUESTED_IMAGE_ANNOTATION, status.image.image),
            image=status.image.image,
            image_ref=status.image_ref,
            created_at=status.created_at,
            started_at=status.started_at,
            finished_at=status.finished_at,
            exit_code=status.exit_code,
            reason=status.reason,
            message=status.message,
            log_path=status.log_path,
        )

    async def task_alive(self, container_id: str) -> bool:
        status = await self.container_status(container_id)
        return status is not None and status.state in (ContainerState.RUNNING, ContainerState.UNKNOWN)

    async def exec(self, container_id: str, command: Sequence[str], timeout: int) -> ExecResult:
        request = messages.ExecSyncRequest(container_id=container_id, cmd=list(command), timeout=timeout)
        deadline = timeout + STOP_MARGIN if timeout > 0 else None
        answer = await self._call("ExecSync", request, timeout=deadline)
        return ExecResult(exit_code=answer.exit_code, stdout=answer.stdout, stderr=answer.stderr)

    async def exec_stream(self, container_id: str, command: Sequence[str], options: StreamOptions) -> str:
        return await exec_url(self.cri, container_id, command, options)

    async def attach_stream(self, container_id: str, options: StreamOptions) -> str:
        return await attach_url(self.cri, container_id, options)

    def open_log(self, pod_uid: str, container: str, previous: bool) -> LogReader:
        files = self._pods.get(pod_uid)
        instances = sorted((files.instances.get(container) or {}).items()) if files is not None else []
        if len(instances) < (2 if previous else 1):
            raise NoInstance(container)
        attempt, container_id = instances[-2 if previous else -1]
        assert files is not None
        path = files.log_dir / container / f"{attempt}.log"

        async def running() -> bool:
            with contextlib.suppress(CriError):
                return await self.task_alive(container_id)
            return False

        return lambda options: read_log(path, options, running)


__all__ = ["CriNodeRuntime", "LogOptions"]
