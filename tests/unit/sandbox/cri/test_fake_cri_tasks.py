"""FakeRuntime with a ContainerTask attached: StopContainer and ExecSync go to the task, the exit
code is whatever the task reports, and simulated containers keep their documented answers."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from kruise.sandbox.cri import (
    CAUSE_CRI,
    CAUSE_KUBELET,
    ContainerEventType,
    ContainerState,
    ExecResult,
    FailedPreconditionError,
    FakeRuntime,
    InvalidArgumentError,
)


class ScriptedTask:
    """Stands for a real process: ``kill`` reports ``exit_code`` to the runtime, as the kubelet's
    process exit callback does; ``exec`` echoes the command."""

    def __init__(self, runtime: FakeRuntime, container_id: str, exit_code: int) -> None:
        self.runtime = runtime
        self.container_id = container_id
        self.exit_code = exit_code
        self.kills: list[int] = []

    async def kill(self, timeout: int) -> None:
        self.kills.append(timeout)
        self.runtime.task_exited(self.container_id, self.exit_code)

    async def exec(self, cmd: Sequence[str], timeout: int) -> ExecResult:
        return ExecResult(exit_code=5, stdout=f"{' '.join(cmd)} within {timeout}".encode())


@pytest.fixture
def runtime() -> FakeRuntime:
    return FakeRuntime("node-a", speed=1000.0)


async def running(runtime: FakeRuntime) -> str:
    runtime.preload("app:1")
    sandbox_id = runtime.run_pod_sandbox("web-0", "default", "uid-1")
    container_id = runtime.create_container(sandbox_id, "app", "app:1")
    runtime.start_container(container_id)
    return container_id


@pytest.mark.parametrize(("code", "reason"), [(143, "Error"), (137, "Error"), (0, "Completed"), (7, "Error")])
async def test_terminate_records_the_status_the_task_reports_with_the_cri_cause(
    runtime: FakeRuntime, code: int, reason: str
) -> None:
    container_id = await running(runtime)
    task = ScriptedTask(runtime, container_id, code)
    runtime.attach_task(container_id, task)
    with runtime.subscribe() as events:
        await runtime.terminate_container(container_id[:12], 30, cause=CAUSE_CRI)
        event = await events.get()
    assert task.kills == [30]
    assert (event.type, event.cause) == (ContainerEventType.STOPPED, CAUSE_CRI)
    record = runtime.container(container_id)
    assert (record.state, record.exit_code, record.reason) == (ContainerState.EXITED, code, reason)


async def test_a_simulated_container_stops_at_once_with_exit_code_zero(runtime: FakeRuntime) -> None:
    container_id = await running(runtime)
    await runtime.terminate_container(container_id, 30, cause=CAUSE_CRI)
    record = runtime.container(container_id)
    assert (record.state, record.exit_code, record.reason) == (ContainerState.EXITED, 0, "Completed")


async def test_terminating_an_exited_container_leaves_its_status(runtime: FakeRuntime) -> None:
    container_id = await running(runtime)
    task = ScriptedTask(runtime, container_id, 143)
    runtime.attach_task(container_id, task)
    runtime.task_exited(container_id, 3)  # the process ended by itself
    await runtime.terminate_container(container_id, 30, cause=CAUSE_CRI)
    assert task.kills == []
    assert runtime.container(container_id).exit_code == 3


async def test_an_exit_without_a_stop_is_the_kubelets(runtime: FakeRuntime) -> None:
    container_id = await running(runtime)
    runtime.attach_task(container_id, ScriptedTask(runtime, container_id, 0))
    with runtime.subscribe() as events:
        runtime.task_exited(container_id, 2)
        event = await events.get()
    assert (event.cause, event.container.exit_code) == (CAUSE_KUBELET, 2)
    runtime.task_exited("f" * 64, 1)  # a removed container: nothing to record


async def test_a_stop_the_caller_decides_detaches_the_task(runtime: FakeRuntime) -> None:
    container_id = await running(runtime)
    task = ScriptedTask(runtime, container_id, 143)
    runtime.attach_task(container_id, task)
    runtime.stop_container(container_id, exit_code=137)  # the kubelet's own stop (liveness kill)
    runtime.task_exited(container_id, 143)  # the process ends later: the recorded exit stays
    assert runtime.container(container_id).exit_code == 137
    with pytest.raises(FailedPreconditionError, match="CONTAINER_EXITED"):
        await runtime.execute(container_id, ["true"])


async def test_execute_goes_to_the_task_and_exec_sync_stays_scripted(runtime: FakeRuntime) -> None:
    container_id = await running(runtime)
    runtime.attach_task(container_id, ScriptedTask(runtime, container_id, 0))
    assert await runtime.execute(container_id, ["cat", "/ready"], 3) == ExecResult(
        exit_code=5, stdout=b"cat /ready within 3"
    )
    runtime.exec_handler = lambda container, cmd: ExecResult(exit_code=1)
    assert runtime.exec_sync(container_id, ["true"]) == ExecResult(exit_code=1)
    with pytest.raises(InvalidArgumentError, match="cmd: must not be empty"):
        await runtime.execute(container_id, [])
    with pytest.raises(InvalidArgumentError, match="timeout: must be >= 0, got -1"):
        await runtime.execute(container_id, ["true"], -1)


async def test_execute_on_a_simulated_container_asks_the_handler(runtime: FakeRuntime) -> None:
    container_id = await running(runtime)
    runtime.exec_handler = lambda container, cmd: ExecResult(exit_code=2, stderr=b"no")
    assert await runtime.execute(container_id, ["probe"]) == ExecResult(exit_code=2, stderr=b"no")


async def test_a_task_attaches_only_to_a_running_container(runtime: FakeRuntime) -> None:
    runtime.preload("app:1")
    sandbox_id = runtime.run_pod_sandbox("web-0", "default", "uid-1")
    container_id = runtime.create_container(sandbox_id, "app", "app:1")
    with pytest.raises(FailedPreconditionError, match="CONTAINER_CREATED"):
        runtime.attach_task(container_id, ScriptedTask(runtime, container_id, 0))
