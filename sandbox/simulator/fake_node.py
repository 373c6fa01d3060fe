"""``FakeNodeRuntime``: the ``NodeRuntime`` of a simulated node, over its in-memory ``FakeRuntime``.

The kubelet's view of the fake runtime, with what a real node gives for free done here:

- pod IPs come from the node's ``IPPool`` (given back when the sandbox stops or is removed);
- containers of configured process images (``processes``, ``process_runner``) run as real
  local processes: ``create_container`` prepares the launch (env, volumes - ``ConfigMissing``
  and ``MountFailed`` come from there), ``start_container`` spawns it with its output as the
  container log and attaches it to the runtime container as its task (``process_task``), so a
  CRI StopContainer or ExecSync from anyone reaches it. Its exit is the container's exit;
- every other container is *simulated*: no process, a two-line synthetic log (started with
  which image and command; exited with which code), and the kubelet scripts its end; one whose
  executable its image lacks (``imagecommands``) fails its start as runc's would (exit 128,
  reason ``StartError``);
- a container record ended while its process still runs (a CRI client stopped or removed it)
  gets its process stopped too, with the pod's termination grace;
- ``close`` gives each process at most ``STOP_GRACE_ON_SHUTDOWN`` real seconds.

Grace periods are simulated seconds, divided by the node's speed like every duration.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.sandbox.cri import (
    CAUSE_KUBELET,
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    Container,
    ContainerEventType,
    CriError,
    ExecResult,
    FakeRuntime,
    LinuxResources,
)
from kruise.sandbox.simulator import imagecommands
from kruise.sandbox.simulator.cgroups import linux_resources
from kruise.sandbox.simulator.containers import kubelet_annotations
from kruise.sandbox.simulator.ippool import IPPool
from kruise.sandbox.simulator.logs import ContainerLogs
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
    StreamingUnsupported,
    StreamOptions,
)
from kruise.sandbox.simulator.podenv import simulated_env
from kruise.sandbox.simulator.process_runner import Launch, ProcessRunner
from kruise.sandbox.simulator.process_task import ProcessTask
from kruise.sandbox.simulator.processes import ContainerProcess, ProcessImage, StartError
from kruise.sandbox.simulator.timing import Timing

STOP_GRACE_ON_SHUTDOWN = 2.0  # real seconds a process gets when the simulator itself stops


@dataclass
class _Plan:
    """What a created container needs at its start."""

    pod: Obj
    spec: Mapping[str, Any]
    attempt: int
    rule: ProcessImage | None = None
    launch: Launch | None = None
    start_error: str = ""

    @property
    def uid(self) -> str:
        return str(self.pod["metadata"]["uid"])


@dataclass
class _SandboxRecord:
    """Per-sandbox bookkeeping: the pod uid and the pool IP it still holds ("" = none)."""

    uid: str
    ip: str = ""


def _exit_of(record: Container) -> ContainerExit | None:
    labels = record.labels
    if POD_NAMESPACE_LABEL not in labels or POD_NAME_LABEL not in labels:
        return None
    return ContainerExit(
        container_id=record.id,
        pod_namespace=labels[POD_NAMESPACE_LABEL],
        pod_name=labels[POD_NAME_LABEL],
        pod_uid=labels.get(POD_UID_LABEL, ""),
        container_name=labels.get(CONTAINER_NAME_LABEL, record.name),
    )


async def _kill_after(process: ContainerProcess, seconds: float) -> None:
    """SIGKILL ``process`` if it is still running ``seconds`` from now."""
    try:
        await asyncio.wait_for(process.wait(), timeout=seconds)
    except TimeoutError:
        process.signal(signal.SIGKILL)
        await process.wait()


class FakeNodeRuntime:
    """``NodeRuntime`` over ``runtime`` (see the module docstring)."""

    def __init__(
        self,
        runtime: FakeRuntime,
        node: NodeSpec,
        timing: Timing,
        logs: ContainerLogs | None = None,
        processes: ProcessRunner | None = None,
        configmap: Callable[[str, str], Mapping[str, Any] | None] | None = None,
    ) -> None:
        self.runtime = runtime
        self.configmap = configmap if configmap is not None else (lambda _namespace, _name: None)
        self.node = node
        self.timing = timing
        self.logs = logs if logs is not None else ContainerLogs()
        self.processes = processes
        self.ips = IPPool(node.pod_cidr)
        self.live: dict[str, ContainerProcess] = {}  # container id -> its running process
        self._sandboxes: dict[str, _SandboxRecord] = {}
        self._plans: dict[str, _Plan] = {}  # container id -> how it was created
        self._on_exit: Callable[[ContainerExit], None] = lambda _exit: None
        self._events: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------- lifecycle

    async def start(self, on_exit: Callable[[ContainerExit], None]) -> None:
        self._on_exit = on_exit
        self._events = asyncio.create_task(self._watch(), name=f"runtime {self.node.name} events")

    async def close(self) -> None:
        if self._events is not None:
            self._events.cancel()
            await asyncio.gather(self._events, return_exceptions=True)
        for process in list(self.live.values()):
            shutdown_grace = min(process.grace, STOP_GRACE_ON_SHUTDOWN)
            if process.stopping:  # already got SIGTERM from a longer stop: cut it short
                self._background(_kill_after(process, shutdown_grace), f"shutdown {process.pid}")
            self._stop_process(process, shutdown_grace)
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _background(self, work: Coroutine[Any, Any, Any], name: str) -> None:
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _stop_process(self, process: ContainerProcess, grace: float | None = None) -> None:
        """SIGTERM now, SIGKILL after ``grace`` real seconds, in the background; idempotent."""
        if process.alive and not process.stopping:
            process.stopping = True
            wait = process.grace if grace is None else grace
            self._background(process.stop(wait), f"stop process {process.pid}")

    async def _watch(self) -> None:
        with self.runtime.subscribe() as events:
            async for event in events:
                record = event.container
                live = self.live.get(record.id)
                ended = event.type in (ContainerEventType.STOPPED, ContainerEventType.DELETED)
                if live is not None and ended:
                    self._stop_process(live)  # stopped through the runtime: end the real process too
                if event.type == ContainerEventType.STOPPED and live is None:
                    self._log_exit(record)
                if event.type == ContainerEventType.DELETED:
                    self._plans.pop(record.id, None)
                if event.cause == CAUSE_KUBELET or event.type != ContainerEventType.STOPPED:
                    continue
                exited = _exit_of(record)
                if exited is not None:
                    self._on_exit(exited)

    def _log_exit(self, record: Container) -> None:
        labels = record.labels
        if POD_UID_LABEL in labels and CONTAINER_NAME_LABEL in labels:
            self.logs.exited(
                labels[POD_UID_LABEL],
                labels[CONTAINER_NAME_LABEL],
                record.attempt,
                f'[sandbox] container "{record.name}" exited with code {record.exit_code} ({record.reason})',
            )

    # ---------------------------------------------------------------- images

    async def image_present(self, image: str) -> bool:
        return self.runtime.has_image(image)

    async def image_status(self, image: str) -> ImageInfo | None:
        record = self.runtime.image_status(image)
        if record is None:
            return None
        return ImageInfo(record.id, record.size, record.repo_tags, record.repo_digests)

    async def pull_image(self, image: str, auth: RegistryAuth | None = None) -> str:
        credentials = {k: v for k, v in vars(auth).items() if v} if auth is not None else None
        return await self.runtime.pull_image(image, credentials)

    # ------------------------------------------------------------- sandboxes

    async def run_pod_sandbox(self, pod: Obj) -> Sandbox:
        meta = pod["metadata"]
        sandbox_id = self.runtime.run_pod_sandbox(
            meta["name"], meta["namespace"], meta["uid"], meta.get("labels"), meta.get("annotations")
        )
        node = self._sandboxes[sandbox_id] = _SandboxRecord(uid=meta["uid"])
        if (pod.get("spec") or {}).get("hostNetwork"):
            return Sandbox(sandbox_id, self.node.internal_ip)
        node.ip = self.ips.take()
        return Sandbox(sandbox_id, node.ip)

    def _release_ip(self, sandbox_id: str) -> None:
        node = self._sandboxes.get(sandbox_id)
        if node is not None and node.ip:
            self.ips.release(node.ip)
            node.ip = ""

    async def stop_pod_sandbox(self, sandbox_id: str) -> None:
        self.runtime.stop_pod_sandbox(sandbox_id)
        self._release_ip(sandbox_id)

    async def remove_pod_sandbox(self, sandbox_id: str) -> None:
        self.runtime.remove_pod_sandbox(sandbox_id)
        self._release_ip(sandbox_id)
        node = self._sandboxes.pop(sandbox_id, None)
        if node is None:
            return
        if self.processes is not None:
            self.processes.forget(node.uid)
        self.logs.forget(node.uid)

    # ------------------------------------------------------------ containers

    async def create_container(
        self, sandbox: Sandbox, pod: Obj, container: Mapping[str, Any], attempt: int
    ) -> str:
        image = container.get("image", "")
        plan = _Plan(pod, container, attempt)
        plan.rule = self.processes.match(image) if self.processes is not None else None
        if plan.rule is not None:
            assert self.processes is not None
            try:
                plan.launch = await self.processes.prepare(
                    pod,
                    container,
                    plan.rule,
                    pod_ip=sandbox.ip,
                    host_ip=self.node.internal_ip,
                    node=self.node.name,
                )
            except StartError as error:  # the start fails, as runc's would
                plan.start_error = str(error)
        if plan.launch is not None:
            envs = plan.launch.env
        else:
            envs = await simulated_env(
                pod, container, self.configmap, pod_ip=sandbox.ip, host_ip=self.node.internal_ip
            )
        container_id = self.runtime.create_container(
            sandbox.id,
            container["name"],
            image,
            attempt=attempt,
            annotations=kubelet_annotations(pod, container, attempt),
            command=container.get("command") or (),
            args=container.get("args") or (),
            envs=envs.items(),
            resources=linux_resources(container.get("resources")),
        )
        self._plans[container_id] = plan
        return container_id

    async def start_container(self, container_id: str) -> None:
        plan = self._plans.get(container_id)
        if plan is not None and plan.rule is not None:
            await self._spawn(container_id, plan)
            return
        verdict = imagecommands.outcome(plan.spec) if plan is not None else None
        if isinstance(verdict, imagecommands.StartFails):
            self.runtime.fail_start(container_id, verdict.message)
            raise StartFailed(verdict.message)
        self.runtime.start_container(container_id)
        if plan is None:
            return
        spec = plan.spec
        command = " ".join([*(spec.get("command") or ()), *(spec.get("args") or ())])
        self.logs.started(
            plan.uid,
            spec["name"],
            plan.attempt,
            f'[sandbox] container "{spec["name"]}" started on {self.node.name} '
            f'(image "{spec.get("image", "")}", restart {plan.attempt})'
            + (f"; command: {command}" if command else ""),
        )

    async def _spawn(self, container_id: str, plan: _Plan) -> None:
        """Run the container's process with its output as the container log and attach it as
        the container's task; ``StartFailed`` (the container exited with 128) if it cannot run."""
        instance = self.logs.open(plan.uid, plan.spec["name"], plan.attempt)
        meta = plan.pod["metadata"]
        exit_event = ContainerExit(container_id, meta["namespace"], meta["name"], plan.uid, plan.spec["name"])

        def exited(code: int) -> None:
            instance.close()
            self.live.pop(container_id, None)
            self.runtime.task_exited(container_id, code)
            self._on_exit(exit_event)

        process = None
        start_error = plan.start_error
        if plan.launch is not None:
            try:
                process = await ContainerProcess.spawn(
                    plan.launch.argv, plan.launch.env, plan.launch.cwd, instance.append, exited
                )
            except StartError as error:
                start_error = str(error)
        if process is None:
            instance.close()
            self.runtime.fail_start(container_id, start_error)
            raise StartFailed(start_error)
        grace = (plan.pod.get("spec") or {}).get("terminationGracePeriodSeconds")
        process.container_id = container_id
        process.grace = self.timing.scaled(float(30 if grace is None else grace))
        self.live[container_id] = process
        # RUNNING and its task in one step, with no await between: a CRI call (ExecSync, StopContainer)
        # arriving while the process was still being spawned found a RUNNING container without a task
        # and was answered as for a simulated one. The process cannot have exited yet: its watcher task
        # has not run.
        try:
            self.runtime.start_container(container_id)
        except Exception:
            process.signal(signal.SIGKILL)  # removed while spawning: the process must not outlive it
            raise
        if plan.launch is not None and plan.rule is not None:
            self.runtime.attach_task(
                container_id, ProcessTask(process, plan.rule, plan.launch, self.timing.scaled)
            )

    async def update_container_resources(self, container_id: str, resources: LinuxResources) -> None:
        self.runtime.update_container_resources(container_id, resources)

    async def stop_container(self, container_id: str, grace: int) -> None:
        process = self.live.get(container_id)
        if process is None:
            await self.runtime.terminate_container(container_id, grace)
            return
        if process.stopping:
            await process.wait()
            return
        process.stopping = True
        with contextlib.suppress(CriError):  # its container was removed meanwhile
            await self.runtime.terminate_container(container_id, grace)
        if process.alive:  # no task (its container had already exited): stop it directly
            await process.stop(self.timing.scaled(float(grace)))

    async def finish_simulated(self, container_id: str, exit_code: int) -> None:
        self.runtime.stop_container(container_id, exit_code=exit_code)

    async def remove_container(self, container_id: str) -> None:
        self.runtime.remove_container(container_id)

    async def container_status(self, container_id: str) -> ContainerStatus | None:
        try:
            record = self.runtime.container(container_id)
        except CriError:
            return None
        plan = self._plans.get(record.id)
        return ContainerStatus(
            id=record.id,
            name=record.name,
            attempt=record.attempt,
            state=record.state,
            requested_image=record.image,
            image=record.image_tag or record.image,
            image_ref=record.image_ref,
            created_at=record.created_at,
            started_at=record.started_at,
            finished_at=record.finished_at,
            exit_code=record.exit_code,
            reason=record.reason,
            message=record.message,
            log_path=record.log_path,
            simulated=plan is None or plan.rule is None,
        )

    async def task_alive(self, container_id: str) -> bool:
        process = self.live.get(container_id)
        return process is not None and process.alive

    async def exec(self, container_id: str, command: Sequence[str], timeout: int) -> ExecResult:
        return await self.runtime.execute(container_id, command, timeout)

    async def exec_stream(self, container_id: str, command: Sequence[str], options: StreamOptions) -> str:
        self.runtime.container(container_id)  # an unknown container is NOT_FOUND first, as over CRI
        raise StreamingUnsupported("exec is not supported by the fake runtime; use --runtime containerd")

    async def attach_stream(self, container_id: str, options: StreamOptions) -> str:
        self.runtime.container(container_id)
        raise StreamingUnsupported("attach is not supported by the fake runtime; use --runtime containerd")

    def open_log(self, pod_uid: str, container: str, previous: bool) -> LogReader:
        instance = self.logs.instance(pod_uid, container, previous)
        return lambda options: self.logs.read(instance, options)
