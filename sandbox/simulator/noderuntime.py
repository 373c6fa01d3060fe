"""``NodeRuntime``: all the simulated kubelet asks of its node's container runtime.

One kubelet drives two back-ends (architecture: "Two node runtimes, one kubelet"):
``FakeNodeRuntime`` over the in-memory ``FakeRuntime`` (the default), and a CRI ``runtime.v1``
gRPC client of a real containerd. The methods are cut so the gRPC back-end maps 1:1:

- ``image_present`` / ``image_status`` -> ImageStatus (absent: None, not an error);
  ``pull_image`` -> PullImage with the ``RegistryAuth`` as its AuthConfig, answering the image ref.
- ``run_pod_sandbox`` -> RunPodSandbox, then PodSandboxStatus for the address the CNI plugin
  gave the pod (the fake takes one from the node's ``IPPool``; a hostNetwork pod gets the node's
  InternalIP either way). ``stop_pod_sandbox`` -> StopPodSandbox: it kills what still runs and
  gives the address back (CNI DEL); ``remove_pod_sandbox`` -> RemovePodSandbox, which also
  drops the pod's container logs.
- ``create_container`` -> CreateContainer: the back-end builds the ContainerConfig (command,
  args, env, mounts, log path ``<container>/<attempt>.log``) from the pod and container spec and
  keeps the spec's image name with the container (an annotation), so ``ContainerStatus`` can
  report it. Env or volumes that cannot be built yet raise ``ConfigMissing`` (the kubelet shows
  CreateContainerConfigError) or ``MountFailed`` (event FailedMount) and create nothing.
- ``start_container`` -> StartContainer; a start that fails (runc cannot exec the entry point)
  raises ``StartFailed`` and leaves the container EXITED with code 128, as containerd does.
- ``update_container_resources`` -> UpdateContainerResources: the kubelet's in-place resize of a
  container whose resizePolicy needs no restart; containerd rewrites the running container's cgroup
  (cpu shares and quota, memory limit). New containers get the same settings in CreateContainer.
- ``stop_container`` -> StopContainer(timeout=grace): SIGTERM, SIGKILL after ``grace`` seconds,
  and it returns only once the container has exited - it BLOCKS up to the grace period, so the
  kubelet runs it in the background and learns of the exit from ``container_status`` and
  ``on_exit``. A second call for the same container just waits for the same exit.
- ``remove_container`` -> RemoveContainer (force: a running container is killed first).
- ``container_status`` -> ContainerStatus (NOT_FOUND: None). The kubelet reads it on every pass
  over the pod; nothing is cached on its side.
- ``task_alive``: whether the container's process still runs. Over CRI that is state RUNNING
  (or UNKNOWN); the fake can end a container record before its process is gone (a CRI client
  removed it), and the kubelet waits for the process before it starts the next instance.
- ``exec`` -> ExecSync(cmd, timeout): exit code and output; a non-zero code is a result, a
  command that cannot run or overruns its timeout raises ``CriError``.
- ``start(on_exit)``: ``on_exit`` is called for container exits the kubelet did not cause itself
  (a kill from kruise-daemon, a process that ended) - it re-syncs that pod. containerd 1.6 has
  no event stream (GetContainerEvents is 1.7+): the gRPC back-end polls ListContainers and calls
  ``on_exit`` for every container newly EXITED (seen running or not) or vanished while running; calling it
  for an exit the kubelet caused is harmless (the kubelet is level-triggered).
- ``open_log`` -> the file at ContainerStatus.log_path (CRI log format), read as ``kubectl
  logs`` asks; ``NoInstance`` when that instance (or the previous one) does not exist.
- ``exec_stream`` / ``attach_stream`` -> Exec / Attach: a URL on the runtime's streaming server
  (containerd's answers WebSocket remotecommand there), which the kubelet API dials and splices to
  the client's upgraded connection, as a kubelet does for ``kubectl exec`` and ``attach``. The
  fake has no streaming server and raises ``StreamingUnsupported`` (the kubelet answers 400).

The fake alone has *simulated* containers (``ContainerStatus.simulated``): images that run no
process, whose lifetime the kubelet scripts - it ends them with ``finish_simulated`` at the
exit code it decides, and only their exec probes can fail. A gRPC back-end never reports one
(so ``finish_simulated`` is never called on it). Failures of every call are ``CriError``s whose
``code`` names the gRPC status, so a gRPC back-end re-raises an RpcError as the matching class.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from kruise.sandbox.cri import ContainerState, ExecResult, LinuxResources
from kruise.sandbox.simulator.logs import LogOptions

Obj = dict[str, Any]
LogReader = Callable[[LogOptions], AsyncIterator[bytes]]  # one container instance's log


class StartFailed(Exception):
    """StartContainer failed; the container exited with 128 and the message is the event's."""


class StreamingUnsupported(Exception):
    """The runtime cannot stream exec/attach; the message tells the user what to use instead."""


@dataclass(frozen=True)
class StreamOptions:
    """Which streams an exec/attach session carries (CRI ExecRequest/AttachRequest flags)."""

    stdin: bool = False
    stdout: bool = True
    stderr: bool = True
    tty: bool = False


@dataclass(frozen=True)
class RegistryAuth:
    """Credentials for one pull (CRI ``AuthConfig``), e.g. from an ``imagePullSecrets`` entry."""

    username: str = ""
    password: str = ""
    auth: str = ""  # base64 "user:password", as in a docker config
    server_address: str = ""
    identity_token: str = ""
    registry_token: str = ""


@dataclass(frozen=True)
class ImageInfo:
    """A present image: ``id`` is ``sha256:<hex>``, ``size`` in bytes."""

    id: str
    size: int
    repo_tags: tuple[str, ...] = ()
    repo_digests: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sandbox:
    """A running pod sandbox: its runtime id and the pod's IP."""

    id: str
    ip: str


@dataclass(frozen=True)
class ContainerStatus:
    """One container as the runtime reports it; timestamps are Unix nanoseconds (0 = never).

    ``requested_image`` is the image exactly as the pod spec named it (the kubelet compares it
    with the spec to see a changed image); ``image`` is the normalized name it runs
    (``status.image``) and ``image_ref`` the repo digest (``status.imageID``). ``attempt`` is
    the restart count the kubelet created it with.
    """

    id: str
    name: str
    attempt: int
    state: ContainerState
    requested_image: str
    image: str
    image_ref: str
    created_at: int = 0
    started_at: int = 0
    finished_at: int = 0
    exit_code: int = 0
    reason: str = ""
    message: str = ""
    log_path: str = ""
    simulated: bool = False


@dataclass(frozen=True)
class ContainerExit:
    """A container exit the kubelet must look at: which pod it belongs to."""

    container_id: str
    pod_namespace: str
    pod_name: str
    pod_uid: str
    container_name: str

    @property
    def pod_key(self) -> str:
        return f"{self.pod_namespace}/{self.pod_name}"


@runtime_checkable
class NodeRuntime(Protocol):
    """A node's container runtime as the kubelet drives it (see the module docstring)."""

    async def start(self, on_exit: Callable[[ContainerExit], None]) -> None:
        """Begin watching the node's containers; ``on_exit`` is called from the event loop."""

    async def close(self) -> None:
        """The kubelet stops: stop watching; the fake also ends its processes quickly."""

    async def image_present(self, image: str) -> bool: ...

    async def image_status(self, image: str) -> ImageInfo | None:
        """The image by name, digest or id; None when it is not on the node."""

    async def pull_image(self, image: str, auth: RegistryAuth | None = None) -> str:
        """Pull and answer the image ref (``sha256:<hex>``); a failed pull raises ``CriError``."""

    async def run_pod_sandbox(self, pod: Obj) -> Sandbox: ...

    async def stop_pod_sandbox(self, sandbox_id: str) -> None: ...

    async def remove_pod_sandbox(self, sandbox_id: str) -> None: ...

    async def create_container(
        self, sandbox: Sandbox, pod: Obj, container: Mapping[str, Any], attempt: int
    ) -> str:
        """Create (not start) the container; answers its id."""

    async def start_container(self, container_id: str) -> None: ...

    async def update_container_resources(self, container_id: str, resources: LinuxResources) -> None:
        """An in-place resize of a running container (its cgroup, on a real node)."""

    async def stop_container(self, container_id: str, grace: int) -> None:
        """Blocks until the container exited (``grace``: seconds before SIGKILL)."""

    async def finish_simulated(self, container_id: str, exit_code: int) -> None:
        """End a simulated container now with the exit code the kubelet decided."""

    async def remove_container(self, container_id: str) -> None: ...

    async def container_status(self, container_id: str) -> ContainerStatus | None: ...

    async def task_alive(self, container_id: str) -> bool: ...

    async def exec(self, container_id: str, command: Sequence[str], timeout: int) -> ExecResult: ...

    def open_log(self, pod_uid: str, container: str, previous: bool) -> LogReader: ...

    async def exec_stream(self, container_id: str, command: Sequence[str], options: StreamOptions) -> str:
        """CRI Exec: the streaming URL for ``command``; ``StreamingUnsupported`` without a server."""

    async def attach_stream(self, container_id: str, options: StreamOptions) -> str:
        """CRI Attach: the streaming URL for the container's own stdio."""
