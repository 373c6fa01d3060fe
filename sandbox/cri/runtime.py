"""``FakeRuntime``: one node's container runtime, held in memory.

The simulated kubelet drives it in-process (plain method calls), and ``CriServer`` exposes the
same state over CRI gRPC, so a container the kubelet runs is the very container kruise-daemon
or crictl sees and can stop. Every state change is published as a ``ContainerEvent`` carrying
its cause, which is how the kubelet learns that something else stopped one of its containers.

Behaviour follows containerd's CRI plugin where callers can tell the difference: ids are 64
hex characters and may be shortened to a unique prefix; stopping an already stopped container
and removing unknown sandboxes, containers or images succeed; creating a container needs its
image present; a sandbox or container name+attempt can be reserved only once.

Timing: the only simulated duration is the image pull delay, ``pull_delay / speed`` seconds
(``speed`` > 1 makes the node faster, which tests use to keep delays tiny).

Containers with a real process. Whoever runs a container as a local process (the simulated
kubelet, for process images) attaches a ``ContainerTask`` to it. StopContainer and ExecSync
(``terminate_container``, ``execute``) then act on the process as containerd does on its task:
the stop sends SIGTERM, SIGKILL once ``timeout`` seconds are over (a timeout of 0 kills at once)
and returns when the process is gone; the container's exit code is the process's status, 128+N
when signal N killed it (143 after SIGTERM, 137 after SIGKILL), else its own exit code. An exec
runs the command as a local process and answers its exit code and output.

Simulated containers have no process. StopContainer ends one at once with exit code 0
(``Completed``): the container is taken to be a well-behaved workload that catches SIGTERM and
exits cleanly, since a real runtime reports 143 only when a process actually died of the
signal, and there is none here. ExecSync on one asks ``exec_handler``, which is how tests script exec
probes; the default answers ``env`` with the environment the container was created with (one
``NAME=value`` line each, as a real ``env`` prints it; kruise-daemon reads env values that way) and
anything else with exit 0 and no output. ``stop_container`` (the in-process call) always
records the exit code its caller gives: the kubelet uses it for the exits it simulates.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from kruise.sandbox.cri.errors import (
    AlreadyExistsError,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
)
from kruise.sandbox.cri.events import EventHub, Subscription
from kruise.sandbox.cri.image_store import ImageStore, PullDelay
from kruise.sandbox.cri.image_store import parse as parse_image
from kruise.sandbox.cri.model import (
    CAUSE_KUBELET,
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    Container,
    ContainerEvent,
    ContainerEventType,
    ContainerState,
    ExecResult,
    Image,
    LinuxResources,
    PodSandbox,
    SandboxState,
)

if TYPE_CHECKING:
    from kruise.sandbox.cri.server import CriServer

RUNTIME_NAME = "containerd"
RUNTIME_VERSION = "v1.7.0-kruise-sandbox"
RUNTIME_API_VERSION = "v1"
KUBELET_API_VERSION = "0.1.0"

# Exit status of a process killed by SIGKILL, which is how a sandbox stop ends its containers.
KILLED_EXIT_CODE = 137
# Exit status containerd gives a container whose process could not be started.
START_ERROR_EXIT_CODE = 128

ExecHandler = Callable[[Container, Sequence[str]], ExecResult]


class ContainerTask(Protocol):
    """The real process behind a container (see the module docstring). It reports its exit,
    however it came, through ``FakeRuntime.task_exited``."""

    async def kill(self, timeout: int) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds (0: SIGKILL at once); returns once
        the process is gone and its exit has been reported."""

    async def exec(self, cmd: Sequence[str], timeout: int) -> ExecResult:
        """Run ``cmd`` beside the process (``timeout`` seconds, 0 = none); a command that cannot
        be run or overruns its timeout raises ``CriError``."""


def default_exec(container: Container, cmd: Sequence[str]) -> ExecResult:
    """A simulated container's answer to an exec: ``env`` prints its environment, the rest succeeds."""
    if list(cmd) in (["env"], ["/usr/bin/env"], ["/bin/env"]):
        return ExecResult(stdout="".join(f"{name}={value}\n" for name, value in container.envs).encode())
    return ExecResult()


def _new_id() -> str:
    return secrets.token_hex(32)


def _resolve(table: Mapping[str, object], key: str) -> str | None:
    """Exact id, else a unique id prefix (containerd's truncated-id lookup)."""
    if key in table:
        return key
    if not key:
        return None
    matches = [candidate for candidate in table if candidate.startswith(key)]
    return matches[0] if len(matches) == 1 else None


def _exit_reason(exit_code: int) -> str:
    return "Completed" if exit_code == 0 else "Error"


def _labels_match(labels: Mapping[str, str], selector: Mapping[str, str] | None) -> bool:
    return not selector or all(labels.get(k) == v for k, v in selector.items())


class FakeRuntime:
    """In-memory images, pod sandboxes and containers of one node.

    Args:
        node_name: the node this runtime belongs to (kept for the simulator's bookkeeping).
        speed: simulated-time factor; durations are divided by it.
        pull_delay: seconds a pull takes at speed 1, or a function of the normalized reference.
        fail_images: glob patterns; pulling a reference that matches (raw or normalized) fails.
        fail_image_if: a predicate on the normalized reference; True makes the pull fail.
        clock: Unix-nanosecond clock for timestamps (injectable for deterministic tests).
        runtime_name, runtime_version: what ``Version`` reports (containerd's name by default,
            so the kubelet shows ``containerd://...`` as the node's container runtime).
    """

    def __init__(
        self,
        node_name: str,
        *,
        speed: float = 1.0,
        pull_delay: PullDelay = 0.0,
        fail_images: Iterable[str] = (),
        fail_image_if: Callable[[str], bool] | None = None,
        clock: Callable[[], int] = time.time_ns,
        runtime_name: str = RUNTIME_NAME,
        runtime_version: str = RUNTIME_VERSION,
    ) -> None:
        self.node_name = node_name
        self.images = ImageStore(
            speed=speed, pull_delay=pull_delay, fail_images=fail_images, fail_image_if=fail_image_if
        )
        self.clock = clock
        self.runtime_name = runtime_name
        self.runtime_version = runtime_version
        self.exec_handler: ExecHandler = default_exec
        self._sandboxes: dict[str, PodSandbox] = {}
        self._containers: dict[str, Container] = {}
        self._tasks: dict[str, ContainerTask] = {}  # container id -> its real process
        self._stop_causes: dict[str, str] = {}  # container id -> who is stopping its task
        self._hub = EventHub()

    def __repr__(self) -> str:
        return (
            f"FakeRuntime({self.node_name!r}, images={len(self.images.list())}, "
            f"sandboxes={len(self._sandboxes)}, containers={len(self._containers)})"
        )

    # ------------------------------------------------------------------ images

    @property
    def speed(self) -> float:
        return self.images.speed

    @speed.setter
    def speed(self, value: float) -> None:
        if value <= 0:
            raise ValueError(f"speed: must be > 0, got {value}")
        self.images.speed = value

    @property
    def pull_delay(self) -> PullDelay:
        return self.images.pull_delay

    @pull_delay.setter
    def pull_delay(self, value: PullDelay) -> None:
        self.images.pull_delay = value

    @property
    def fail_images(self) -> set[str]:
        """Glob patterns of references whose pull fails; mutate the set in place to change them."""
        return self.images.fail_images

    @property
    def fail_image_if(self) -> Callable[[str], bool] | None:
        return self.images.fail_image_if

    @fail_image_if.setter
    def fail_image_if(self, value: Callable[[str], bool] | None) -> None:
        self.images.fail_image_if = value

    async def pull_image(self, image: str, auth: Mapping[str, str] | None = None) -> str:
        """Pull ``image`` and return its image id (``sha256:<hex>``), as CRI PullImage does.

        ``auth`` is accepted for API parity; the fake has no registry that could reject it.
        """
        return (await self.images.pull(image)).id

    def preload(self, *images: str) -> list[str]:
        """Make images present at once (like a node image preloaded at boot); returns their ids."""
        return [self.images.add(parse_image(image)).id for image in images]

    def has_image(self, image: str) -> bool:
        return self.images.get(image) is not None

    def image_ref(self, image: str) -> str:
        """The image id of a present image; ``NotFoundError`` if it is absent."""
        return self.images.require(image).id

    def image_status(self, image: str) -> Image | None:
        """The image, or None when absent (containerd answers ImageStatus that way, not with an error)."""
        return self.images.get(image)

    def list_images(self, image: str | None = None) -> list[Image]:
        """All images, or only the one ``image`` names; ordered by id for stable output."""
        if image:
            record = self.images.get(image)
            return [record] if record else []
        return self.images.list()

    def remove_image(self, image: str) -> None:
        """Remove the image with all its names; removing an absent image succeeds."""
        self.images.remove(image)

    async def wait_images_changed(self, since: int) -> int:
        """Block until the image set changes after generation ``since``; returns the new generation.

        The kubelet uses it to refresh ``node.status.images`` when a CRI client pulls or removes
        an image: ``gen = await runtime.wait_images_changed(gen)`` (start from ``images.generation``).
        """
        return await self.images.wait_changed(since)

    # ---------------------------------------------------------------- sandboxes

    def run_pod_sandbox(
        self,
        name: str,
        namespace: str,
        uid: str,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        *,
        attempt: int = 0,
        ip: str = "",
        runtime_handler: str = "",
        kubelet_labels: bool = True,
    ) -> str:
        """Create a READY sandbox and return its id.

        With ``kubelet_labels`` (the default, as the kubelet does) the pod name/namespace/uid
        labels are added; the gRPC server passes False and keeps the caller's labels as given.
        """
        for field_name, value in (("metadata.name", name), ("metadata.namespace", namespace)):
            if not value:
                raise InvalidArgumentError(f"sandbox config must include {field_name}")
        for other in self._sandboxes.values():
            if (other.name, other.namespace, other.uid, other.attempt) == (name, namespace, uid, attempt):
                raise AlreadyExistsError(
                    f'failed to reserve sandbox name "{name}_{namespace}_{uid}_{attempt}": '
                    f'name "{name}_{namespace}_{uid}_{attempt}" is reserved for "{other.id}"'
                )
        all_labels = dict(labels or {})
        if kubelet_labels:
            all_labels.update({POD_NAME_LABEL: name, POD_NAMESPACE_LABEL: namespace, POD_UID_LABEL: uid})
        sandbox = PodSandbox(
            id=_new_id(),
            name=name,
            namespace=namespace,
            uid=uid,
            attempt=attempt,
            state=SandboxState.READY,
            created_at=self.clock(),
            labels=all_labels,
            annotations=dict(annotations or {}),
            runtime_handler=runtime_handler,
            ip=ip,
        )
        self._sandboxes[sandbox.id] = sandbox
        return sandbox.id

    def stop_pod_sandbox(self, sandbox_id: str, *, cause: str = CAUSE_KUBELET) -> None:
        """Kill the sandbox's running containers (exit 137) and mark it NOTREADY; idempotent."""
        sandbox = self.pod_sandbox(sandbox_id)
        for container in self._containers_of(sandbox.id):
            if container.state in (ContainerState.RUNNING, ContainerState.UNKNOWN):
                self._finish(container, KILLED_EXIT_CODE, cause)
        if sandbox.state != SandboxState.NOTREADY:
            self._sandboxes[sandbox.id] = replace(sandbox, state=SandboxState.NOTREADY)

    def remove_pod_sandbox(self, sandbox_id: str, *, cause: str = CAUSE_KUBELET) -> None:
        """Force-remove the sandbox and its containers; an unknown id succeeds (idempotent)."""
        resolved = _resolve(self._sandboxes, sandbox_id)
        if resolved is None:
            return
        for container in self._containers_of(resolved):
            self.remove_container(container.id, cause=cause)
        del self._sandboxes[resolved]

    def pod_sandbox(self, sandbox_id: str) -> PodSandbox:
        resolved = _resolve(self._sandboxes, sandbox_id)
        if resolved is None:
            raise NotFoundError(f'an error occurred when try to find sandbox "{sandbox_id}": not found')
        return self._sandboxes[resolved]

    def list_pod_sandboxes(
        self,
        *,
        id: str | None = None,
        state: SandboxState | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[PodSandbox]:
        """Sandboxes matching every given filter (``id`` may be a unique prefix), oldest first."""
        candidates = self._sandboxes.values()
        if id:
            resolved = _resolve(self._sandboxes, id)
            candidates = [self._sandboxes[resolved]] if resolved else []
        found = [
            s for s in candidates if (state is None or s.state == state) and _labels_match(s.labels, labels)
        ]
        return sorted(found, key=lambda s: (s.created_at, s.id))

    # --------------------------------------------------------------- containers

    def create_container(
        self,
        sandbox_id: str,
        name: str,
        image: str,
        attempt: int = 0,
        labels: Mapping[str, str] | None = None,
        annotations: Mapping[str, str] | None = None,
        *,
        command: Sequence[str] = (),
        args: Sequence[str] = (),
        log_path: str = "",
        envs: Iterable[tuple[str, str]] = (),
        resources: LinuxResources | None = None,
        kubelet_labels: bool = True,
        cause: str = CAUSE_KUBELET,
    ) -> str:
        """Create a CREATED container in a READY sandbox and return its id.

        The image must already be present (pull it first). With ``kubelet_labels`` the
        ``io.kubernetes.pod.*`` labels of the sandbox's pod and ``io.kubernetes.container.name``
        are added, exactly as the kubelet labels the containers it creates.
        """
        sandbox = self.pod_sandbox(sandbox_id)
        if not name:
            raise InvalidArgumentError("container config must include metadata.name")
        if not image:
            raise InvalidArgumentError("container config must include image.image")
        if sandbox.state != SandboxState.READY:
            raise FailedPreconditionError(f'sandbox container "{sandbox.id}" is not running')
        record = self.images.get(image)
        if record is None:
            raise NotFoundError(f'failed to resolve image "{image}": not found')
        reserved = f"{name}_{sandbox.name}_{sandbox.namespace}_{sandbox.uid}_{attempt}"
        for other in self._containers_of(sandbox.id):
            if (other.name, other.attempt) == (name, attempt):
                raise AlreadyExistsError(
                    f'failed to reserve container name "{reserved}": '
                    f'name "{reserved}" is reserved for "{other.id}"'
                )
        all_labels = dict(labels or {})
        if kubelet_labels:
            all_labels.update(
                {
                    POD_NAME_LABEL: sandbox.name,
                    POD_NAMESPACE_LABEL: sandbox.namespace,
                    POD_UID_LABEL: sandbox.uid,
                    CONTAINER_NAME_LABEL: name,
                }
            )
        container = Container(
            id=_new_id(),
            sandbox_id=sandbox.id,
            name=name,
            attempt=attempt,
            image=image,
            image_tag=record.repo_tags[0] if record.repo_tags else "",
            image_id=record.id,
            image_ref=record.repo_digests[0] if record.repo_digests else record.id,
            state=ContainerState.CREATED,
            created_at=self.clock(),
            labels=all_labels,
            annotations=dict(annotations or {}),
            command=tuple(command),
            args=tuple(args),
            log_path=log_path,
            envs=tuple((str(k), str(v)) for k, v in envs),
            resources=resources or LinuxResources(),
        )
        self._containers[container.id] = container
        self._publish(ContainerEventType.CREATED, container, cause)
        return container.id

    def start_container(self, container_id: str, *, cause: str = CAUSE_KUBELET) -> None:
        """CREATED -> RUNNING; any other state is a FAILED_PRECONDITION, as in containerd."""
        container = self.container(container_id)
        if container.state != ContainerState.CREATED:
            raise FailedPreconditionError(f"container is in {_cri_state_name(container.state)} state")
        started = replace(container, state=ContainerState.RUNNING, started_at=self.clock())
        self._containers[container.id] = started
        self._publish(ContainerEventType.STARTED, started, cause)

    def fail_start(self, container_id: str, message: str, *, cause: str = CAUSE_KUBELET) -> None:
        """A StartContainer runc could not carry out (the entry point is missing): the CREATED
        container is EXITED with 128, reason ``StartError`` and containerd's ``message``, never
        having started, as containerd leaves it."""
        container = self.container(container_id)
        if container.state != ContainerState.CREATED:
            raise FailedPreconditionError(f"container is in {_cri_state_name(container.state)} state")
        failed = replace(
            container,
            state=ContainerState.EXITED,
            finished_at=self.clock(),
            exit_code=START_ERROR_EXIT_CODE,
            reason="StartError",
            message=message,
        )
        self._containers[container.id] = failed
        self._publish(ContainerEventType.STOPPED, failed, cause)

    def update_container_resources(self, container_id: str, resources: LinuxResources) -> None:
        """An in-place resize: a CREATED or RUNNING container takes the new cgroup settings (the fake
        has no cgroups; the record keeps them, as containerd keeps them in the container's spec)."""
        container = self.container(container_id)
        if container.state not in (ContainerState.CREATED, ContainerState.RUNNING):
            raise FailedPreconditionError(
                f"container {container.id} is in {_cri_state_name(container.state)} state"
            )
        self._containers[container.id] = replace(container, resources=resources)

    def stop_container(
        self,
        container_id: str,
        timeout: int = 0,
        *,
        exit_code: int = 0,
        cause: str = CAUSE_KUBELET,
    ) -> None:
        """Stop a running container: EXITED with ``exit_code`` (reason Completed/Error).

        The exit the caller decided, recorded at once (its ``timeout``, the grace period in
        seconds, never elapses); an attached task is left to its owner, which learns of the stop
        from the STOPPED event. Stopping a CREATED or EXITED container is a no-op, like containerd.
        """
        if timeout < 0:
            raise InvalidArgumentError(f"timeout: must be >= 0, got {timeout}")
        container = self.container(container_id)
        if container.state in (ContainerState.RUNNING, ContainerState.UNKNOWN):
            self._finish(container, exit_code, cause)

    async def terminate_container(
        self, container_id: str, timeout: int = 0, *, cause: str = CAUSE_KUBELET
    ) -> None:
        """StopContainer as containerd serves it: a container with a task is stopped through it
        (SIGTERM, SIGKILL after ``timeout`` seconds) and exits with the process's real status; a
        simulated one exits at once with 0 (see the module docstring)."""
        if timeout < 0:
            raise InvalidArgumentError(f"timeout: must be >= 0, got {timeout}")
        container = self.container(container_id)
        task = self._tasks.get(container.id)
        if task is None or container.state not in (ContainerState.RUNNING, ContainerState.UNKNOWN):
            self.stop_container(container.id, timeout, cause=cause)
            return
        self._stop_causes.setdefault(container.id, cause)
        await task.kill(timeout)

    def attach_task(self, container_id: str, task: ContainerTask) -> None:
        """Back a RUNNING container with a real process (see ``ContainerTask``)."""
        container = self.container(container_id)
        if container.state != ContainerState.RUNNING:
            raise FailedPreconditionError(f"container is in {_cri_state_name(container.state)} state")
        self._tasks[container.id] = task

    def task_exited(self, container_id: str, exit_code: int) -> None:
        """The container's process is gone with ``exit_code``: the container exits with it (the
        cause is whoever asked the task to stop, else the kubelet). A container that already
        exited or was removed keeps what it has."""
        resolved = _resolve(self._containers, container_id)
        if resolved is None:
            return
        self._tasks.pop(resolved, None)
        cause = self._stop_causes.pop(resolved, CAUSE_KUBELET)
        container = self._containers[resolved]
        if container.state in (ContainerState.RUNNING, ContainerState.UNKNOWN):
            self._finish(container, exit_code, cause)

    def remove_container(self, container_id: str, *, cause: str = CAUSE_KUBELET) -> None:
        """Force-remove a container (stopping it first if running); unknown ids succeed."""
        resolved = _resolve(self._containers, container_id)
        if resolved is None:
            return
        container = self._containers[resolved]
        if container.state in (ContainerState.RUNNING, ContainerState.UNKNOWN):
            container = self._finish(container, KILLED_EXIT_CODE, cause)
        del self._containers[resolved]
        self._publish(ContainerEventType.DELETED, container, cause)

    def container(self, container_id: str) -> Container:
        resolved = _resolve(self._containers, container_id)
        if resolved is None:
            raise NotFoundError(f'an error occurred when try to find container "{container_id}": not found')
        return self._containers[resolved]

    def list_containers(
        self,
        *,
        id: str | None = None,
        sandbox_id: str | None = None,
        state: ContainerState | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> list[Container]:
        """Containers matching every given filter (ids may be unique prefixes), oldest first."""
        candidates = self._containers.values()
        if id:
            resolved = _resolve(self._containers, id)
            candidates = [self._containers[resolved]] if resolved else []
        if sandbox_id:
            resolved_sandbox = _resolve(self._sandboxes, sandbox_id)
            candidates = [c for c in candidates if c.sandbox_id == resolved_sandbox]
        found = [
            c for c in candidates if (state is None or c.state == state) and _labels_match(c.labels, labels)
        ]
        return sorted(found, key=lambda c: (c.created_at, c.id))

    def exec_sync(self, container_id: str, cmd: Sequence[str], timeout: int = 0) -> ExecResult:
        """Run ``cmd`` through ``exec_handler`` (see ``default_exec``); needs a RUNNING container."""
        container = self.container(container_id)
        if not cmd:
            raise InvalidArgumentError("cmd: must not be empty")
        if container.state != ContainerState.RUNNING:
            raise FailedPreconditionError(f"container is in {_cri_state_name(container.state)} state")
        return self.exec_handler(container, list(cmd))

    async def execute(self, container_id: str, cmd: Sequence[str], timeout: int = 0) -> ExecResult:
        """ExecSync as served over CRI: a container with a task runs ``cmd`` for real (its exit
        code and output, ``timeout`` seconds at most); a simulated one asks ``exec_handler``."""
        if timeout < 0:
            raise InvalidArgumentError(f"timeout: must be >= 0, got {timeout}")
        container = self.container(container_id)
        task = self._tasks.get(container.id)
        if task is None or not cmd or container.state != ContainerState.RUNNING:
            return self.exec_sync(container.id, cmd, timeout)
        return await task.exec(list(cmd), timeout)

    # ------------------------------------------------------------------- events

    def subscribe(self) -> Subscription:
        """Container events from now on; call ``close()`` (or use ``with``) when done."""
        return self._hub.subscribe()

    def _containers_of(self, sandbox_id: str) -> list[Container]:
        return [c for c in self._containers.values() if c.sandbox_id == sandbox_id]

    def _finish(self, container: Container, exit_code: int, cause: str) -> Container:
        self._tasks.pop(container.id, None)
        self._stop_causes.pop(container.id, None)
        finished = replace(
            container,
            state=ContainerState.EXITED,
            finished_at=self.clock(),
            exit_code=exit_code,
            reason=_exit_reason(exit_code),
        )
        self._containers[container.id] = finished
        self._publish(ContainerEventType.STOPPED, finished, cause)
        return finished

    def _publish(self, kind: ContainerEventType, container: Container, cause: str) -> None:
        self._hub.publish(ContainerEvent(type=kind, container=container, cause=cause, at=self.clock()))

    # ------------------------------------------------------------------ serving

    async def serve(self, socket_path: str) -> CriServer:
        """Serve this runtime over CRI gRPC on a unix socket; returns the started ``CriServer``."""
        from kruise.sandbox.cri.server import CriServer  # lazy: grpc is only needed to serve

        server = CriServer(self, socket_path)
        await server.start()
        return server


def _cri_state_name(state: ContainerState) -> str:
    return f"CONTAINER_{state.name}"
