"""A simulated kubelet: runs the pods bound to one node through that node's ``NodeRuntime``.

Each pod is reconciled level-triggered from the pod (watched with ``spec.nodeName=<node>``),
ConfigMaps (for env blocking) and the runtime's container exits (a container stopped by anyone
else is restarted per restartPolicy). The containers are real runtime containers, so
kruise-daemon sees what the kubelet runs. A container with a process (a process image of the
fake runtime, every container of a real one) has its output as the container log, its exit as
the container's exit and probes that connect to it; every stop the kubelet itself decides
(failed liveness/startup probe, changed image, resize with RestartContainer, pod deletion, a
pod gone from the API or in a terminal phase) is a StopContainer with the grace period the
real kubelet uses there (``killgrace``): it blocks until the process is gone, so it runs in
the background, the container stays running meanwhile and its exit requeues the pod. A
*simulated* container (the fake's, no process) is ended by the kubelet itself with the exit it
decides (see ``noderuntime``): when its command ends by itself (``imagecommands``: `sh` without
stdin, `ls <missing>`, `false`, ...) as that command does, whatever the restartPolicy (a `sleep N`
only under Never/OnFailure and in init containers: under Always it stands for a server); else it
runs until stopped, or, under Never/OnFailure, for the pod's run time. Status is written
through pods/status with the pod's resourceVersion; a conflict just retries from fresher state.

With a ``RelistGate`` (real nodes, whose hooks and processes run in real seconds) a pod is synced as a
real kubelet's pod worker syncs it (see ``pleg``): a sync starts at the first relist after the previous
one ended, and writes the status the runtime showed when it started; what it changed is reported by a
follow-up sync at the next relist.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import math
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from kruise.sandbox.cri import ContainerState, CriError, ExecResult
from kruise.sandbox.simulator import (
    admission,
    ephemeral,
    hooks,
    imagecommands,
    killgrace,
    pullsecrets,
    resize,
)
from kruise.sandbox.simulator.cgroups import linux_resources
from kruise.sandbox.simulator.client import ApiError, Client, Obj, resource_path
from kruise.sandbox.simulator.containers import (
    ConfigMapLookup,
    config_error,
    container_status,
    pull_policy,
    qos_class,
    rfc3339_ns,
    terminated_state,
)
from kruise.sandbox.simulator.events import Recorder, now_rfc3339
from kruise.sandbox.simulator.informer import Informer
from kruise.sandbox.simulator.liveprobe import check as live_check
from kruise.sandbox.simulator.node import NodeSpec
from kruise.sandbox.simulator.noderuntime import (
    ContainerExit,
    ContainerStatus,
    NodeRuntime,
    Sandbox,
    StartFailed,
)
from kruise.sandbox.simulator.pleg import RelistGate
from kruise.sandbox.simulator.podenv import ConfigMissing
from kruise.sandbox.simulator.podstatus import (
    KUBELET_CONDITIONS,
    ContainerView,
    kubelet_conditions,
    merge_conditions,
    pod_phase,
)
from kruise.sandbox.simulator.podvolumes import MountFailed
from kruise.sandbox.simulator.probes import ContainerProbes, Prober
from kruise.sandbox.simulator.timing import Timing, annotated_exit_code, pod_exit_code, pod_run_seconds
from kruise.sandbox.simulator.workqueue import WorkQueue

log = logging.getLogger(__name__)
PreStop = Callable[[int], Awaitable[int]]
"""A container's preStop hook, given the grace period; the whole simulated seconds it took."""

SIGTERM_EXIT_CODE = 0  # a simulated container stopped by the kubelet exits cleanly
PROBE_KILL_EXIT_CODE = 137  # ... except after a failed probe, which it "ignored"
STOP_RECHECK_SECONDS = 2.0  # the least wait before a deleted pod's stopping processes are looked at again
BASE_BACKOFF_SECONDS = 10.0
MAX_BACKOFF_SECONDS = 300.0


@dataclass
class Slot:
    """The kubelet's memory of one container of the pod spec across restarts."""

    name: str
    container_id: str = ""
    restart_count: int = 0
    ready_at: float = 0.0
    run_until: float | None = None
    waiting: tuple[str, str] | None = None
    retry_at: float = 0.0
    last_terminated: Obj | None = None
    done: bool = False
    crash_delay: float = 0.0
    backoff_until: float = 0.0
    probes: ContainerProbes | None = None  # regular containers; init containers use ready_at
    task_id: str = ""  # the latest instance that runs a process (its id outlives _retire)
    exit_code: int | None = None  # a simulated instance's at run_until (None: the pod's annotation, or 0)
    # Set when the kubelet stops the slot's process to restart it: the exit that follows is
    # retired and replaced at once (image change, resize), or restarted unless the policy is
    # Never, whatever its code (failed liveness/startup probe).
    replace_on_exit: bool = False
    restart_on_exit: bool = False


@dataclass
class PodRun:
    """A pod this kubelet is running: its sandbox, IP and container slots."""

    uid: str
    sandbox_id: str
    ip: str
    start_time: str
    slots: dict[str, Slot] = field(default_factory=dict)
    stop_at: float | None = None
    kill_at: float | None = None  # when live processes get SIGKILL during deletion
    stopped: bool = False
    released: bool = False
    allocated: dict[str, Obj] = field(default_factory=dict)  # container -> resources admitted
    actuated: dict[str, Obj] = field(default_factory=dict)  # container -> resources applied
    resize_pending: tuple[str, str] | None = None  # (Infeasible|Deferred, message)
    resize_until: float | None = None  # when the resize being applied is done
    termination_grace: int = killgrace.DEFAULT_TERMINATION_GRACE  # the spec's, for a force deletion

    def slot(self, name: str) -> Slot:
        return self.slots.setdefault(name, Slot(name))


def _pod_key(pod: Obj) -> str:
    meta = pod["metadata"]
    return f"{meta['namespace']}/{meta['name']}"


class Kubelet:
    """Runs one node's pods. ``configmap`` answers ``(namespace, name) -> ConfigMap | None``."""

    def __init__(
        self,
        client: Client,
        node: NodeSpec,
        runtime: NodeRuntime,
        timing: Timing,
        configmap: ConfigMapLookup,
        relist: RelistGate | None = None,
    ) -> None:
        self.client = client
        self.relist = relist
        self.node = node
        self.runtime = runtime
        self.timing = timing
        self.configmap = configmap
        self._stopping: set[asyncio.Task[Any]] = set()
        self._stops: dict[str, asyncio.Task[None]] = {}  # container id -> its StopContainer in flight
        self.recorder = Recorder(client, "kubelet", node.name)
        self.pods = Informer(client, resource_path("v1", "pods"), field_selector=f"spec.nodeName={node.name}")
        self.pods.add_handler(lambda kind, pod: self.queue.add(_pod_key(pod)))
        self.queue = WorkQueue(f"kubelet {node.name}", self._reconcile_guarded, workers=8)
        self.runs: dict[str, PodRun] = {}
        self._admitting: dict[str, Obj] = {}  # pods past the admission check, their sandbox not yet up
        self._rejected: dict[str, tuple[str, admission.Rejection]] = {}  # key -> (uid, why), decided once

    async def start(self) -> None:
        self.queue.start()
        self.pods.start()
        await self.runtime.start(self._container_exited)

    async def stop(self) -> None:
        await self.pods.stop()
        await self.queue.stop()
        await self.runtime.close()
        await asyncio.gather(*self._stopping, return_exceptions=True)
        await self.recorder.drain()

    def _container_exited(self, exited: ContainerExit) -> None:
        self.queue.add(exited.pod_key)

    def _background(self, work: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.create_task(work, name=name)
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        return task

    async def _stop_in_background(self, container_id: str, grace: int, before: PreStop | None = None) -> bool:
        """StopContainer (``grace``: simulated seconds, see ``killgrace``) for a container with a
        process, in the background: it blocks until the process is gone, and the exit requeues
        the pod. ``before`` is the container's preStop hook, run first within the grace period
        (see ``_pre_stop``). True while the process is (still) stopping; False if it is already
        gone. Idempotent."""
        if not await self.runtime.task_alive(container_id):
            return False
        if container_id not in self._stops:
            work = self._stop(container_id, grace, before)
            task = self._background(work, f"stop container {container_id[:12]}")
            self._stops[container_id] = task
            task.add_done_callback(lambda _task: self._stops.pop(container_id, None))
        return True

    async def _stop(self, container_id: str, grace: int, before: PreStop | None = None) -> None:
        if before is not None and grace > 0:
            # as killContainer: the hook's whole seconds come off the grace period, which never
            # drops under the kubelet's minimal shutdown window
            grace = max(grace - await before(grace), killgrace.MINIMUM_KILL_GRACE)
        with contextlib.suppress(CriError):  # its container was removed meanwhile
            await self.runtime.stop_container(container_id, grace)

    def _pre_stop(
        self, pod: Obj, run: PodRun, spec: Mapping[str, Any] | None, container_id: str
    ) -> PreStop | None:
        """The container's preStop hook as the kubelet's ``executePreStopHook`` runs it: started,
        then waited for at most the grace period (a hook still running then goes on by itself
        while the container is stopped); a failure is the Warning ``FailedPreStopHook`` with the
        kubelet's bare ``PreStopHook failed`` (it keeps the hook's output out of events). Returns
        the whole simulated seconds it took. None when the container has no preStop hook."""
        handler = hooks.handler_of(spec or {}, "preStop")
        if handler is None or spec is None:
            return None
        field_path = self._path_of(pod, spec.get("name", ""))

        async def execute(command: list[str], timeout: int) -> ExecResult:
            return await self.runtime.exec(container_id, command, timeout)

        async def hook() -> None:
            problem = await hooks.run(
                handler, pod=pod, container=spec, pod_ip=run.ip, execute=execute, scaled=self.timing.scaled
            )
            if problem is not None:
                log.info("preStop hook failed: %s", problem)
                self.recorder.event(
                    pod, "Warning", "FailedPreStopHook", "PreStopHook failed", field_path=field_path
                )

        async def before(grace: int) -> int:
            started = time.monotonic()
            task = self._background(hook(), f"preStop {container_id[:12]}")
            await asyncio.wait({task}, timeout=self.timing.scaled(float(grace)))
            return int((time.monotonic() - started) * self.timing.speed)

        return before

    async def _kill(
        self, slot: Slot, record: ContainerStatus, grace: int, exit_code: int, before: PreStop | None = None
    ) -> bool:
        """The kubelet stops a running container: one with a process through StopContainer, its
        preStop hook (``before``) first (True: still stopping, its exit requeues the pod); a
        simulated one exits at once with ``exit_code`` (False)."""
        if not record.simulated and await self._stop_in_background(record.id, grace, before):
            return True
        await self.runtime.finish_simulated(record.id, exit_code)
        return False

    async def _stopping_container(self, container_id: str) -> bool:
        """Whether the kubelet is already stopping the container (its Killing event was sent)."""
        return container_id in self._stops and await self.runtime.task_alive(container_id)

    def configmaps_changed(self) -> None:
        """Re-check pods with a container blocked on a ConfigMap."""
        for key, run in self.runs.items():
            if any(
                slot.waiting and slot.waiting[0] == "CreateContainerConfigError"
                for slot in run.slots.values()
            ):
                self.queue.add(key)

    # ---------------------------------------------------------------- reconcile

    async def _reconcile_guarded(self, key: str) -> float | None:
        if self.relist is not None:
            wait = self.relist.wait(key, time.monotonic())
            if wait > 0:
                return wait
        try:
            return await self._reconcile(key)
        except ApiError as error:
            if error.not_found:
                return None
            raise
        finally:
            if self.relist is not None and self.pods.get(key) is None:
                self.relist.forget(key)
            elif self.relist is not None:
                self.relist.synced(key, time.monotonic())

    async def _reconcile(self, key: str) -> float | None:
        pod = self.pods.get(key)
        run = self.runs.get(key)
        if pod is None or self._rejected.get(key, ("",))[0] != pod["metadata"]["uid"]:
            self._rejected.pop(key, None)
        if pod is None:
            if run is not None:
                await self._teardown(key, run)
            return None
        uid = pod["metadata"]["uid"]
        if run is not None and run.uid != uid:
            await self._teardown(key, run)
            run = None
        if pod["metadata"].get("deletionTimestamp"):
            return await self._terminate(key, pod, run)
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed") and run is None:
            return None
        if run is None:
            rejection = await self._admission(key, pod)
            if rejection is not None:
                await self._reject(key, pod, rejection)
                return None
            try:
                run = await self._admit(pod)
            finally:
                self._admitting.pop(key, None)
            self.runs[key] = run
        wake: list[float] = []
        now = time.monotonic()
        # with a relist gate: the status of the runtime as this sync found it (see ``pleg``)
        seen = await self.build_status(pod, run) if self.relist is not None else None
        if phase not in ("Succeeded", "Failed"):
            await self._resize(pod, run, now, wake)
            await self._sync_containers(pod, run, now, wake)
        reported = await self._write_status(key, pod, run, seen)
        if seen is not None and not _same_status(seen, await self.build_status(pod, run)):
            wake.append(0.0)  # the next relist shows what this sync changed
        if reported in ("Succeeded", "Failed"):
            await self._release(run, pod)
        return max(min(wake), 0.001) if wake else None

    async def _admission(self, key: str, pod: Obj) -> admission.Rejection | None:
        """The kubelet's admission of a pod it has not started: decided once per pod (uid)
        against the pods it runs (see ``admission``). An admitted pod is held in ``_admitting``
        from the check on, with no await in between, so two pods checked at once see each other."""
        decided = self._rejected.get(key)
        if decided is not None:
            return decided[1]
        node = await self._node_for(pod)
        if isinstance(node, admission.Rejection):
            rejection: admission.Rejection | None = node
        else:
            rejection = admission.admit(pod, node, self._admitted_pods(key))
        if rejection is None:
            self._admitting[key] = pod
            return None
        self._rejected[key] = (pod["metadata"]["uid"], rejection)
        self.recorder.event(pod, "Warning", rejection.reason, rejection.message)
        return rejection

    async def _node_for(self, pod: Obj) -> Obj | admission.Rejection:
        """The Node as admission reads it: allocatable as this kubelet registers it; labels as the
        API has them now when the pod selects nodes by label (they may have changed since)."""
        node = {"metadata": {"name": self.node.name, "labels": {}}, **self._node_allocatable()}
        if admission.needs_node_labels(pod):
            try:
                current = await self.client.get(resource_path("v1", "nodes", None, self.node.name))
            except ApiError as error:
                if not error.not_found:
                    raise
                return admission.Rejection("InvalidNodeInfo", "Kubelet cannot get node info.")
            node["metadata"] = current.get("metadata") or node["metadata"]
        return node

    def _admitted_pods(self, key: str) -> list[Obj]:
        """The node's other active pods, with the resources allocated to them: running or still
        stopping, and those being started."""
        pods = [
            resize.with_allocation(other, other_run.allocated)
            for other_key, other_run in self.runs.items()
            if other_key != key
            and not (other_run.stopped or other_run.released)
            and (other := self.pods.get(other_key)) is not None
            and other["metadata"]["uid"] == other_run.uid
        ]
        pods.extend(other for other_key, other in self._admitting.items() if other_key != key)
        return pods

    async def _reject(self, key: str, pod: Obj, rejection: admission.Rejection) -> None:
        """Write a rejected pod's status as the kubelet's ``rejectPod`` does: phase Failed with the
        predicate's reason and message, QoS class and start time; no containers, no IP, and none of
        the kubelet's own conditions (others, such as PodScheduled, stay)."""
        current = pod.get("status") or {}
        status = copy.deepcopy(current)
        status["conditions"] = [
            c for c in current.get("conditions") or [] if c.get("type") not in KUBELET_CONDITIONS
        ]
        if not status["conditions"]:
            del status["conditions"]
        status["phase"] = "Failed"
        status["reason"] = rejection.reason
        status["message"] = rejection.status_message
        status.setdefault("qosClass", qos_class(pod))
        status.setdefault("startTime", now_rfc3339())
        if _same_status(current, status):
            return
        meta = pod["metadata"]
        written = await self.client.replace(
            resource_path("v1", "pods", meta["namespace"], meta["name"], "status"), {**pod, "status": status}
        )
        _remember(self.pods, key, written)

    async def _admit(self, pod: Obj) -> PodRun:
        meta = pod["metadata"]
        sandbox = await self.runtime.run_pod_sandbox(pod)
        start = (pod.get("status") or {}).get("startTime") or now_rfc3339()
        allocated = resize.desired(pod)
        return PodRun(
            uid=meta["uid"],
            sandbox_id=sandbox.id,
            ip=sandbox.ip,
            start_time=start,
            allocated=allocated,
            actuated=copy.deepcopy(allocated),
            termination_grace=killgrace.spec_termination_grace(pod),
        )

    async def _release(self, run: PodRun, pod: Obj) -> None:
        """A finished pod keeps its status.podIP but, as with a real CNI, gives the address back
        (the runtime does, when its sandbox stops).

        A terminal phase the API reports can leave containers running: the kubelet kills them
        (those with a process through StopContainer, with the pod's grace period) before it
        stops the sandbox; their exits requeue the pod, which writes their status.
        """
        if run.released:
            return
        live = await self._live_tasks(run)
        if live:
            grace = killgrace.pod_termination_grace(pod)
            for container_id in live:
                await self._stop_in_background(container_id, grace)
            return
        run.released = True
        await self.runtime.stop_pod_sandbox(run.sandbox_id)
        self._retry_deferred_resizes()

    async def _live_tasks(self, run: PodRun) -> list[str]:
        """The pod's containers whose process still runs."""
        return [
            slot.task_id
            for slot in run.slots.values()
            if slot.task_id and await self.runtime.task_alive(slot.task_id)
        ]

    async def _teardown(self, key: str, run: PodRun) -> None:
        """The pod is gone from the API (or replaced by a new uid): stop what still runs, as the
        kubelet does for a force-deleted pod (the spec's grace period), then remove its sandbox
        (which gives back its IP and files) once its processes are gone."""
        self.runs.pop(key, None)
        live = await self._live_tasks(run)
        if not live:
            await self._dismantle(run)
            return
        for container_id in live:
            await self._stop_in_background(container_id, run.termination_grace)
        stops = [self._stops[container_id] for container_id in live if container_id in self._stops]
        self._background(self._dismantle_after(run, stops), f"teardown {key}")

    async def _dismantle_after(self, run: PodRun, stops: list[asyncio.Task[None]]) -> None:
        try:
            await asyncio.gather(*stops, return_exceptions=True)
        finally:
            await self._dismantle(run)

    async def _dismantle(self, run: PodRun) -> None:
        await self.runtime.remove_pod_sandbox(run.sandbox_id)
        self._retry_deferred_resizes()

    # ------------------------------------------------------------------ resize

    async def _resize(self, pod: Obj, run: PodRun, now: float, wake: list[float]) -> None:
        """Follow an in-place resize of the pod's spec resources, as the kubelet does.

        A changed spec is first admitted against the node (else ``PodResizePending`` and nothing
        changes), then applied over ``resize_seconds`` (``PodResizeInProgress``); at the end,
        containers whose resizePolicy says RestartContainer for a changed resource are stopped
        (``_ensure`` starts them again, restartCount + 1), the others keep running.
        """
        wanted = resize.desired(pod)
        if resize.same(wanted, run.allocated):
            run.resize_pending = None
        else:
            others = [
                resize.with_allocation(other, other_run.allocated)
                for other_key, other_run in self.runs.items()
                if other_run is not run
                and not other_run.released
                and (other := self.pods.get(other_key)) is not None
            ]
            run.resize_pending = resize.pending(pod, self._node_allocatable(), others)
            if run.resize_pending is None:
                run.allocated = wanted
                run.resize_until = now + self.timing.scaled(self.timing.resize_seconds)
        if resize.same(run.allocated, run.actuated):
            run.resize_until = None
            return
        if run.resize_until is None:
            run.resize_until = now + self.timing.scaled(self.timing.resize_seconds)
        if now < run.resize_until:
            wake.append(run.resize_until - now)
            return
        spec = pod.get("spec") or {}
        for container in resize.resizable_containers(spec):
            name = container["name"]
            changed = resize.changed_resources(run.actuated.get(name, {}), run.allocated.get(name, {}))
            slot = run.slots.get(name)
            if slot is None or not changed:
                continue
            record = await self._record(slot)
            if record is None or record.state != ContainerState.RUNNING:
                continue
            if not resize.needs_restart(container, changed):
                # NotRequired: the running container's cgroup takes the new settings
                await self._update_resources(pod, record.id, run.allocated.get(name))
                continue
            if await self._stopping_container(record.id):
                continue
            self.recorder.event(
                pod,
                "Normal",
                "Killing",
                f"Container {name} resize requires restart",
                field_path=self._path_of(pod, name),
            )
            grace = killgrace.container_kill_grace(pod, container)
            before = self._pre_stop(pod, run, container, record.id)
            if await self._kill(slot, record, grace, SIGTERM_EXIT_CODE, before):
                slot.replace_on_exit = True  # _ensure restarts it once the process is gone
            else:
                await self._retire(slot)
        run.actuated = copy.deepcopy(run.allocated)
        run.resize_until = None

    async def _update_resources(self, pod: Obj, container_id: str, allocated: Obj | None) -> None:
        """CRI UpdateContainerResources; a container gone meanwhile (NOT_FOUND, or no longer
        running) gets the new resources when it is created again, so that failure is only logged."""
        try:
            await self.runtime.update_container_resources(container_id, linux_resources(allocated))
        except CriError as error:
            log.info("pod %s: resize of container %s: %s", _pod_key(pod), container_id[:12], error)

    def _node_allocatable(self) -> Obj:
        """This node's allocatable, shaped as the Node object reports it."""
        allocatable = {"cpu": self.node.cpu, "memory": self.node.memory, "pods": str(self.node.pods)}
        return {"status": {"allocatable": allocatable}}

    def _retry_deferred_resizes(self) -> None:
        """A pod left the node: a resize deferred for lack of room may fit now."""
        for key, run in self.runs.items():
            if run.resize_pending is not None and run.resize_pending[0] == resize.DEFERRED:
                self.queue.add(key)

    # --------------------------------------------------------------- containers

    async def _sync_containers(self, pod: Obj, run: PodRun, now: float, wake: list[float]) -> None:
        spec = pod.get("spec") or {}
        policy = spec.get("restartPolicy") or "Always"
        for init in spec.get("initContainers") or []:
            slot = run.slot(init["name"])
            sidecar = init.get("restartPolicy") == "Always"
            if slot.done and not sidecar:
                continue
            await self._ensure(
                pod, run, slot, init, "Always" if sidecar else "OnFailure", now, wake, init=True
            )
            record = await self._record(slot)
            if sidecar:
                if record is None or record.state != ContainerState.RUNNING:
                    return
                continue
            if record is not None and record.state == ContainerState.RUNNING:
                if slot.run_until is not None and now >= slot.run_until:
                    code = slot.exit_code or 0
                    await self.runtime.finish_simulated(record.id, code)
                    if code != 0:  # failed: _ensure restarts it (with back-off)
                        wake.append(0.0)
                        return
                    slot.done = True
                    continue
                if slot.run_until is not None:
                    wake.append(slot.run_until - now)
                return
            if record is not None and record.state == ContainerState.EXITED and record.exit_code == 0:
                slot.done = True
                continue
            return
        exit_code = pod_exit_code(pod)
        for container in spec.get("containers") or []:
            slot = run.slot(container["name"])
            await self._ensure(pod, run, slot, container, policy, now, wake, init=False)
            record = await self._record(slot)
            if record is None or record.state != ContainerState.RUNNING:
                continue
            if slot.run_until is not None:
                if now >= slot.run_until:
                    code = exit_code if slot.exit_code is None else slot.exit_code
                    await self.runtime.finish_simulated(record.id, code)
                    if policy == "Always" or (policy == "OnFailure" and code != 0):
                        wake.append(0.0)  # _ensure restarts it
                else:
                    wake.append(slot.run_until - now)
            if slot.ready_at > now:
                wake.append(slot.ready_at - now)
            if slot.probes is not None:
                await self._probe(pod, run, container, slot, record, now, wake)
        await self._sync_ephemeral(pod, run, now, wake)

    async def _sync_ephemeral(self, pod: Obj, run: PodRun, now: float, wake: list[float]) -> None:
        """Start each ephemeral container once; a simulated one exits after its run time (see
        ``ephemeral``); none is ever restarted."""
        for spec in (pod.get("spec") or {}).get("ephemeralContainers") or []:
            slot = run.slot(spec["name"])
            record = await self._record(slot)
            if record is None and not slot.done:
                if slot.retry_at > now:
                    wake.append(slot.retry_at - now)
                    continue
                path = ephemeral.field_path(spec["name"])
                await self._create(pod, run, slot, spec, now, wake, path, init=False)
                record = await self._record(slot)
                if record is None:
                    continue
                slot.done = True  # started: never again, whatever its exit
                slot.probes = None
                slot.run_until = None
                if record.simulated:
                    seconds = ephemeral.run_seconds(pod, spec, self.timing.run_seconds)
                    slot.run_until = time.monotonic() + self.timing.scaled(seconds)
            if record is not None and record.state == ContainerState.RUNNING and slot.run_until is not None:
                if now >= slot.run_until:
                    await self.runtime.finish_simulated(record.id, ephemeral.exit_code(pod, spec))
                else:
                    wake.append(slot.run_until - now)

    async def _probe(
        self,
        pod: Obj,
        run: PodRun,
        spec: Mapping[str, Any],
        slot: Slot,
        record: ContainerStatus,
        now: float,
        wake: list[float],
    ) -> None:
        """Run the container's due probes; kill it when liveness or startup failed for good."""
        assert slot.probes is not None
        if await self._stopping_container(record.id):
            return  # being killed: no more probes, its exit requeues the pod
        field_path = f"spec.containers{{{slot.name}}}"

        async def execute(command: list[str], timeout: int) -> tuple[bool, str]:
            try:
                result = await self.runtime.exec(record.id, command, timeout)
            except CriError as error:
                return False, str(error)
            return result.exit_code == 0, (result.stdout + result.stderr).decode(errors="replace").strip()

        async def ask(prober: Prober) -> tuple[bool, str]:
            if not record.simulated:
                return await live_check(prober.spec, spec, run.ip, execute)
            if prober.is_exec:  # the only probe a simulated container can fail (see ``probes``)
                return await execute(list(prober.spec["exec"]["command"]), 0)
            return True, ""

        outcomes = await slot.probes.run_due_live(now, ask)
        for outcome in outcomes:
            if not outcome.ok:
                kind = outcome.prober.kind.capitalize()
                self.recorder.event(
                    pod,
                    "Warning",
                    "Unhealthy",
                    f"{kind} probe failed: {outcome.output}",
                    field_path=field_path,
                )
        failed = slot.probes.killing()
        if failed is not None:
            self.recorder.event(
                pod,
                "Normal",
                "Killing",
                f"Container {slot.name} failed {failed.kind} probe, will be restarted",
                field_path=field_path,
            )
            grace = killgrace.container_kill_grace(pod, spec, failed.kind)
            before = self._pre_stop(pod, run, spec, record.id)
            if await self._kill(slot, record, grace, PROBE_KILL_EXIT_CODE, before):
                slot.restart_on_exit = True
            else:
                wake.append(0.0)
            return
        next_at = slot.probes.next_wake()
        if next_at is not None:
            wake.append(max(next_at - now, 0.0))

    async def _record(self, slot: Slot) -> ContainerStatus | None:
        if not slot.container_id:
            return None
        return await self.runtime.container_status(slot.container_id)

    async def _ensure(
        self,
        pod: Obj,
        run: PodRun,
        slot: Slot,
        spec: Mapping[str, Any],
        policy: str,
        now: float,
        wake: list[float],
        *,
        init: bool,
    ) -> None:
        """Make the container's runtime state follow its spec: restart on image change or exit."""
        record = await self._record(slot)
        field_path = f"spec.{'initContainers' if init else 'containers'}{{{spec['name']}}}"
        if record is not None and record.requested_image != spec.get("image") and not (init and slot.done):
            if record.state == ContainerState.RUNNING:
                if await self._stopping_container(record.id):
                    return  # its exit requeues the pod
                self.recorder.event(
                    pod,
                    "Normal",
                    "Killing",
                    f"Container {spec['name']} definition changed, will be restarted",
                    field_path=field_path,
                )
                grace = killgrace.container_kill_grace(pod, spec)
                before = self._pre_stop(pod, run, spec, record.id)
                if await self._kill(slot, record, grace, SIGTERM_EXIT_CODE, before):
                    return
            await self._retire(slot)
            record = None
        elif record is not None and record.state == ContainerState.EXITED and slot.replace_on_exit:
            await self._retire(slot)
            record = None
        elif record is not None and record.state == ContainerState.EXITED:
            failed = record.exit_code != 0 or slot.restart_on_exit
            restart = policy == "Always" or (policy == "OnFailure" and failed)
            if not restart or self._backing_off(pod, slot, record, now, wake, field_path):
                return
            await self._retire(slot)
            record = None
        if record is not None:
            return
        if slot.retry_at > now:
            wake.append(slot.retry_at - now)
            return
        await self._create(pod, run, slot, spec, now, wake, field_path, init=init)

    def _backing_off(
        self, pod: Obj, slot: Slot, record: ContainerStatus, now: float, wake: list[float], field_path: str
    ) -> bool:
        """Whether an exited container must wait before its restart (the kubelet's crash back-off).

        The first restart is immediate; another exit soon after waits 10 s, doubling up to 300 s.
        A container that ran for 600 s before exiting starts over without delay.
        """
        ran = (record.finished_at - record.started_at) / 1e9
        if ran >= self.timing.scaled(2 * MAX_BACKOFF_SECONDS):
            slot.crash_delay = 0.0
        if slot.crash_delay <= 0:
            slot.crash_delay = BASE_BACKOFF_SECONDS
            return False
        if slot.backoff_until == 0.0:
            meta = pod["metadata"]
            who = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
            delay = slot.crash_delay
            slot.backoff_until = now + self.timing.scaled(delay)
            slot.waiting = (
                "CrashLoopBackOff",
                f"back-off {int(delay)}s restarting failed container={slot.name} pod={who}",
            )
            self.recorder.event(
                pod,
                "Warning",
                "BackOff",
                f"Back-off restarting failed container {slot.name} in pod {who}",
                field_path=field_path,
            )
        if now < slot.backoff_until:
            wake.append(slot.backoff_until - now)
            return True
        slot.crash_delay = min(slot.crash_delay * 2, MAX_BACKOFF_SECONDS)
        slot.backoff_until = 0.0
        return False

    async def _retire(self, slot: Slot) -> None:
        """Forget the slot's dead (or killed) container: it becomes lastState and the count goes up."""
        record = await self._record(slot)
        if record is not None:
            slot.last_terminated = terminated_state(record)
            await self.runtime.remove_container(record.id)
        slot.container_id = ""
        slot.restart_count += 1
        slot.run_until = None
        slot.replace_on_exit = slot.restart_on_exit = False

    async def _create(
        self,
        pod: Obj,
        run: PodRun,
        slot: Slot,
        spec: Mapping[str, Any],
        now: float,
        wake: list[float],
        field_path: str,
        *,
        init: bool,
    ) -> None:
        image = spec.get("image", "")
        name = spec["name"]
        policy = pull_policy(spec)
        present = await self.runtime.image_present(image)
        if policy == "Never" and not present:
            slot.waiting = (
                "ErrImageNeverPull",
                f'Container image "{image}" is not present with pull policy of Never',
            )
            self.recorder.event(pod, "Warning", "ErrImageNeverPull", slot.waiting[1], field_path=field_path)
            return
        if policy == "Always" or not present:
            self.recorder.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', field_path=field_path)
            started = time.monotonic()
            try:
                ref = await self._pull(pod, image, field_path)
            except CriError as error:
                slot.waiting = ("ErrImagePull", str(error))
                slot.retry_at = now + self.timing.scaled(self.timing.image_pull_backoff_seconds)
                wake.append(slot.retry_at - now)
                self.recorder.event(
                    pod,
                    "Warning",
                    "Failed",
                    f'Failed to pull image "{image}": {error}',
                    field_path=field_path,
                )
                return
            took = time.monotonic() - started
            pulled = await self.runtime.image_status(ref)
            size = pulled.size if pulled is not None else 0
            self.recorder.event(
                pod,
                "Normal",
                "Pulled",
                f'Successfully pulled image "{image}" in {took:.3f}s ({took:.3f}s including waiting). '
                f"Image size: {size} bytes.",
                field_path=field_path,
            )
        else:
            self.recorder.event(
                pod,
                "Normal",
                "Pulled",
                f'Container image "{image}" already present on machine',
                field_path=field_path,
            )
        namespace = pod["metadata"]["namespace"]
        problem = config_error(namespace, spec, self.configmap)
        if problem is not None:
            if slot.waiting != ("CreateContainerConfigError", problem):
                self.recorder.event(pod, "Warning", "Failed", f"Error: {problem}", field_path=field_path)
            slot.waiting = ("CreateContainerConfigError", problem)
            return
        if slot.task_id and await self.runtime.task_alive(slot.task_id):
            return  # the previous instance is still stopping; its exit requeues the pod
        try:
            # a new instance starts with what the kubelet has allocated, which a pending resize
            # (Infeasible, Deferred) has not changed yet
            allocated = run.allocated.get(name)
            created_spec = {**spec, "resources": allocated} if allocated is not None else spec
            container_id = await self.runtime.create_container(
                Sandbox(run.sandbox_id, run.ip), pod, created_spec, slot.restart_count
            )
        except ConfigMissing as error:
            if slot.waiting != ("CreateContainerConfigError", str(error)):
                self.recorder.event(pod, "Warning", "Failed", f"Error: {error}", field_path=field_path)
            slot.waiting = ("CreateContainerConfigError", str(error))
            slot.retry_at = now + self.timing.scaled(self.timing.image_pull_backoff_seconds)
            wake.append(slot.retry_at - now)
            return
        except MountFailed as error:
            self.recorder.event(pod, "Warning", "FailedMount", f"MountVolume.SetUp failed: {error}")
            slot.retry_at = now + self.timing.scaled(self.timing.image_pull_backoff_seconds)
            wake.append(slot.retry_at - now)
            return
        self.recorder.event(pod, "Normal", "Created", f"Created container: {name}", field_path=field_path)
        try:
            await self.runtime.start_container(container_id)
        except StartFailed as error:
            self.recorder.event(pod, "Warning", "Failed", f"Error: {error}", field_path=field_path)
            slot.container_id = container_id
            slot.waiting = None
            wake.append(0.0)
            return
        started = await self.runtime.container_status(container_id)
        live = started is not None and not started.simulated
        if live:
            slot.task_id = container_id
        self.recorder.event(pod, "Normal", "Started", f"Started container {name}", field_path=field_path)
        if live and not await self._post_start(pod, run, slot, spec, container_id, field_path):
            wake.append(0.0)
            return
        started_at = time.monotonic()
        slot.container_id = container_id
        slot.waiting = None
        slot.retry_at = 0.0
        if init:
            probe = spec.get("readinessProbe") or {}
            slot.ready_at = started_at + self.timing.scaled(float(probe.get("initialDelaySeconds") or 0))
            slot.probes = None
        else:
            slot.ready_at = 0.0
            slot.probes = ContainerProbes.create(spec, started_at, self.timing.scaled, live=live)
        restart_policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        sidecar = init and spec.get("restartPolicy") == "Always"
        ends = None if live or sidecar else imagecommands.outcome(spec)
        if (
            isinstance(ends, imagecommands.Exits)
            and ends.seconds > 0
            and restart_policy == "Always"
            and not init
        ):
            # a service container's `sleep N` stands for a server, as before: the speed factor would
            # make even `sleep 3600` end (and restart) within a test
            ends = None
        slot.exit_code = None
        if live:
            slot.run_until = None  # a real process runs until it exits
        elif isinstance(ends, imagecommands.Exits):  # a command that ends by itself
            slot.run_until = started_at + self.timing.scaled(ends.seconds)
            annotated = None if init else annotated_exit_code(pod)
            slot.exit_code = ends.code if annotated is None else annotated
            wake.append(slot.run_until - now)
            if ends.seconds <= 0:  # gone before any status shows it running (or ready)
                await self.runtime.finish_simulated(container_id, slot.exit_code)
        elif init and not sidecar:
            slot.run_until = started_at + self.timing.scaled(self.timing.init_seconds)
            wake.append(slot.run_until - now)
        elif not init and restart_policy != "Always":
            seconds = pod_run_seconds(pod, self.timing.run_seconds)
            slot.run_until = started_at + self.timing.scaled(seconds)
            wake.append(slot.run_until - now)
        else:
            slot.run_until = None

    async def _pull(self, pod: Obj, image: str, field_path: str) -> str:
        """PullImage with each credential the pod's ``imagePullSecrets`` have for the image's registry,
        in turn (see ``pullsecrets``), until one works; with none, without credentials."""
        found = pullsecrets.credentials(image, await self._pull_secrets(pod, field_path))
        if not found:
            return await self.runtime.pull_image(image, None)
        errors: list[CriError] = []
        for auth in found:
            try:
                return await self.runtime.pull_image(image, auth)
            except CriError as error:
                errors.append(error)
        if len(errors) == 1:
            raise errors[0]
        raise CriError("[" + ", ".join(str(error) for error in errors) + "]")

    async def _pull_secrets(self, pod: Obj, field_path: str) -> list[Obj]:
        """The pod's pull Secrets as they are now; missing ones are reported, as the kubelet does."""
        namespace = pod["metadata"]["namespace"]
        found, missing = [], []
        for ref in (pod.get("spec") or {}).get("imagePullSecrets") or []:
            name = ref.get("name") or ""
            try:
                found.append(await self.client.get(resource_path("v1", "secrets", namespace, name)))
            except ApiError as error:
                if not error.not_found:
                    raise
                missing.append(name)
        if missing:
            self.recorder.event(
                pod,
                "Warning",
                "FailedToRetrieveImagePullSecret",
                f"Unable to retrieve some image pull secrets ({', '.join(missing)}); "
                "attempting to pull the image may not succeed.",
            )
        return found

    async def _post_start(
        self, pod: Obj, run: PodRun, slot: Slot, spec: Mapping[str, Any], container_id: str, field_path: str
    ) -> bool:
        """Run the container's postStart hook, holding the pod's sync meanwhile (see ``hooks``).
        False when it failed: the container is being killed, and its exit restarts it per policy."""
        handler = hooks.handler_of(spec, "postStart")
        if handler is None:
            return True

        async def execute(command: list[str], timeout: int) -> ExecResult:
            return await self.runtime.exec(container_id, command, timeout)

        problem = await hooks.run(
            handler, pod=pod, container=spec, pod_ip=run.ip, execute=execute, scaled=self.timing.scaled
        )
        if problem is None:
            return True
        self.recorder.event(pod, "Warning", "FailedPostStartHook", problem, field_path=field_path)
        self.recorder.event(pod, "Normal", "Killing", "FailedPostStartHook", field_path=field_path)
        slot.container_id = container_id
        slot.waiting = None
        slot.probes = None
        slot.ready_at = math.inf  # never ready: it is on its way out
        slot.restart_on_exit = True
        await self._stop_in_background(container_id, killgrace.container_kill_grace(pod, spec))
        return False

    # ------------------------------------------------------------------ delete

    async def _terminate(self, key: str, pod: Obj, run: PodRun | None) -> float | None:
        now = time.monotonic()
        if run is not None and not run.stopped:
            running = [
                (name, record)
                for name, slot in run.slots.items()
                if (record := await self._record(slot)) is not None and record.state == ContainerState.RUNNING
            ]
            processes = await self._live_tasks(run)
            if run.stop_at is None:
                grace = pod["metadata"].get("deletionGracePeriodSeconds")
                if grace is None:
                    grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
                seconds = min(float(grace), self.timing.termination_seconds)
                run.stop_at = now + self.timing.scaled(seconds)
                kill_grace = killgrace.pod_termination_grace(pod)
                run.kill_at = now + self.timing.scaled(float(kill_grace))
                for name, slot in run.slots.items():
                    if slot.task_id in processes:  # its exit requeues the pod
                        before = self._pre_stop(pod, run, self._spec_named(pod, name), slot.task_id)
                        await self._stop_in_background(slot.task_id, kill_grace, before)
                for name, _record in running:
                    self.recorder.event(
                        pod,
                        "Normal",
                        "Killing",
                        f"Stopping container {name}",
                        field_path=self._path_of(pod, name),
                    )
            if processes:  # the runtime sends SIGKILL at kill_at; the exits requeue the pod
                assert run.kill_at is not None
                return max(run.kill_at - now, STOP_RECHECK_SECONDS)
            fake = [(name, record) for name, record in running if record.simulated]
            if fake and now < run.stop_at:
                return run.stop_at - now
            for _name, record in fake:
                await self.runtime.finish_simulated(record.id, SIGTERM_EXIT_CODE)
            run.stopped = True
            try:
                await self._write_status(key, pod, run)
            except ApiError as error:
                if not (error.conflict or error.not_found):
                    raise
        meta = pod["metadata"]
        try:
            await self.client.delete(
                resource_path("v1", "pods", meta["namespace"], meta["name"]),
                grace_period_seconds=0,
                uid=meta["uid"],
            )
        except ApiError as error:
            if not (error.not_found or error.conflict):
                raise
        return None

    @staticmethod
    def _spec_named(pod: Obj, name: str) -> Mapping[str, Any] | None:
        spec = pod.get("spec") or {}
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            if container.get("name") == name:
                return container
        return None

    @staticmethod
    def _path_of(pod: Obj, name: str) -> str:
        spec = pod.get("spec") or {}
        if any(c.get("name") == name for c in spec.get("initContainers") or []):
            return f"spec.initContainers{{{name}}}"
        if any(c.get("name") == name for c in spec.get("ephemeralContainers") or []):
            return ephemeral.field_path(name)
        return f"spec.containers{{{name}}}"

    # ------------------------------------------------------------------ status

    async def _views(
        self, run: PodRun, specs: list[Obj], now: float
    ) -> tuple[list[ContainerView], list[Obj]]:
        views: list[ContainerView] = []
        statuses: list[Obj] = []
        for spec in specs:
            slot = run.slots.get(spec["name"]) or Slot(spec["name"])
            record = await self._record(slot)
            running = record is not None and record.state == ContainerState.RUNNING
            terminated = record is not None and record.state == ContainerState.EXITED
            started = running and (slot.probes is None or slot.probes.started())
            probed_ready = slot.probes.ready() if slot.probes is not None else now >= slot.ready_at
            ready = started and probed_ready and not run.stopped
            views.append(
                ContainerView(
                    name=spec["name"],
                    ready=ready,
                    started=started,
                    terminated=terminated,
                    exit_code=record.exit_code if record is not None and terminated else 0,
                )
            )
            last_terminated = slot.last_terminated
            if terminated and slot.waiting and slot.waiting[0] == "CrashLoopBackOff":
                last_terminated = terminated_state(record)
            statuses.append(
                container_status(
                    spec,
                    record,
                    restart_count=slot.restart_count,
                    ready=ready,
                    started=started,
                    waiting=slot.waiting,
                    last_terminated=last_terminated,
                    allocated=run.allocated.get(spec["name"], resize.container_resources(spec)),
                    actuated=run.actuated.get(spec["name"], resize.container_resources(spec)),
                )
            )
        return views, statuses

    async def build_status(self, pod: Obj, run: PodRun) -> Obj:
        now = time.monotonic()
        spec = pod.get("spec") or {}
        policy = spec.get("restartPolicy") or "Always"
        inits = spec.get("initContainers") or []
        init_views, init_statuses = await self._views(run, inits, now)
        regular_inits = [
            v for v, c in zip(init_views, inits, strict=True) if c.get("restartPolicy") != "Always"
        ]
        sidecars = [v for v, c in zip(init_views, inits, strict=True) if c.get("restartPolicy") == "Always"]
        for slot_view, status in zip(init_views, init_statuses, strict=True):
            slot = run.slots.get(slot_view.name)
            if slot is not None and slot.done and status["state"].get("terminated") is None:
                status["state"] = {
                    "terminated": slot.last_terminated or {"exitCode": 0, "reason": "Completed"}
                }
        views, statuses = await self._views(run, spec.get("containers") or [], now)
        initialized = all(run.slots.get(v.name, Slot(v.name)).done for v in regular_inits) and all(
            v.started for v in sidecars
        )
        if not initialized:
            for status in statuses:
                if (
                    "waiting" in status["state"]
                    and status["state"]["waiting"]["reason"] == "ContainerCreating"
                ):
                    status["state"] = {"waiting": {"reason": "PodInitializing"}}
        for status, init_spec in zip(init_statuses, inits, strict=True):
            waiting = status["state"].get("waiting")
            if (
                waiting
                and waiting["reason"] == "ContainerCreating"
                and run.slots.get(init_spec["name"]) is None
            ):
                status["state"] = {"waiting": {"reason": "PodInitializing"}}
        phase = pod_phase(policy, initialized=initialized, init_failed=False, containers=views)
        if run.stopped and phase == "Running":
            phase = "Succeeded" if all(v.exit_code == 0 for v in views) and policy != "Always" else phase
        reported = (pod.get("status") or {}).get("phase")
        if reported in ("Succeeded", "Failed"):
            phase = reported  # terminal is final: the kubelet forces the API's terminal phase back
        done_inits = [
            ContainerView(v.name, False, False, terminated=run.slots.get(v.name, Slot(v.name)).done)
            for v in regular_inits
        ]
        status = copy.deepcopy(pod.get("status") or {})
        owned = kubelet_conditions(
            pod,
            sandbox_ready=not run.stopped,
            init_containers=done_inits,
            containers=[*sidecars, *views],
            phase=phase,
        )
        resizing = resize.conditions(
            run.resize_pending, not run.stopped and not resize.same(run.allocated, run.actuated)
        )
        stamp = now_rfc3339()
        merged = merge_conditions(status.get("conditions") or [], [*owned, *resizing], stamp)
        current = {c["type"] for c in resizing}
        status["conditions"] = [
            c for c in merged if c.get("type") not in resize.RESIZE_CONDITIONS or c.get("type") in current
        ]
        status["phase"] = phase
        status["hostIP"] = self.node.internal_ip
        status["hostIPs"] = [{"ip": self.node.internal_ip}]
        status["podIP"] = run.ip
        status["podIPs"] = [{"ip": run.ip}]
        status["startTime"] = run.start_time
        status.setdefault("qosClass", qos_class(pod))
        status["containerStatuses"] = sorted(statuses, key=lambda s: s["name"])
        if inits:
            status["initContainerStatuses"] = init_statuses
        ephemerals = spec.get("ephemeralContainers") or []
        if ephemerals:
            _views, ephemeral_statuses = await self._views(run, ephemerals, now)
            for entry in ephemeral_statuses:
                entry["ready"] = False  # never ready, and no startup probe to report on
                entry.pop("started", None)
            status["ephemeralContainerStatuses"] = ephemeral_statuses
        return status

    async def _write_status(self, key: str, pod: Obj, run: PodRun, status: Obj | None = None) -> str:
        """Write the pod's status (``status``, else as it is now) if it changed; returns its phase."""
        if status is None:
            status = await self.build_status(pod, run)
        current = pod.get("status") or {}
        if _same_status(current, status):
            return status["phase"]
        body = {**pod, "status": status}
        meta = pod["metadata"]
        written = await self.client.replace(
            resource_path("v1", "pods", meta["namespace"], meta["name"], "status"), body
        )
        _remember(self.pods, key, written)
        return status["phase"]


def _strip_times(conditions: list[Obj]) -> list[tuple[Any, ...]]:
    return sorted((c.get("type"), c.get("status"), c.get("reason"), c.get("message")) for c in conditions)


def _same_status(old: Obj, new: Obj) -> bool:
    """Equal apart from condition timestamps (which only move on transitions anyway)."""
    if _strip_times(old.get("conditions") or []) != _strip_times(new.get("conditions") or []):
        return False
    keys = set(old) | set(new)
    keys.discard("conditions")
    return all(old.get(k) == new.get(k) for k in keys)


def _remember(informer: Informer, key: str, written: Obj) -> None:
    """Put our own write into the cache if it is newer, so the next pass does not start stale."""
    cached = informer.get(key)
    try:
        newer = cached is None or int(written["metadata"]["resourceVersion"]) > int(
            cached["metadata"]["resourceVersion"]
        )
    except (KeyError, ValueError):
        return
    if newer and cached is not None:
        informer.store[key] = written


__all__ = ["Kubelet", "PodRun", "Slot", "rfc3339_ns"]
