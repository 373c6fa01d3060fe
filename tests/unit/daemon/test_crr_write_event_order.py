"""kruise-daemon's recreator when the watch event of its own status write arrives before or after
the write returns: either order must bring the request back, with no timed requeue to lean on.

The recreator runs on its real informers and workqueue; only the API (a fake that applies each
write's watch event when told) and the CRI are stand-ins, so each interleaving is exact."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from kruise.daemon.containerrecreate.recreator import ContainerRecreator
from kruise.kube.client import WatchEvent
from tests.kit.fakeapi import FakeApi
from tests.kit.runtime import FakeRuntimeClient

NODE = "node-1"
KEY = "default/crr-1"


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "victim", "namespace": "default", "uid": "pod-uid", "resourceVersion": "5"},
        "spec": {"nodeName": NODE, "containers": [{"name": "app"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [{"name": "app", "containerID": "cri://app-1", "restartCount": 0}],
        },
    }


def _crr() -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ContainerRecreateRequest",
        "metadata": {
            "name": "crr-1",
            "namespace": "default",
            "uid": "crr-uid",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {
                "crr.apps.kruise.io/node-name": NODE,
                "crr.apps.kruise.io/pod-uid": "pod-uid",
                "crr.apps.kruise.io/active": "true",
            },
        },
        "spec": {
            "podName": "victim",
            "containers": [
                {"name": "app", "statusContext": {"containerID": "cri://app-1", "restartCount": 0}}
            ],
            "strategy": {"failurePolicy": "Fail"},
        },
    }


@pytest.fixture
async def harness():
    api = FakeApi(_crr(), resource_version=10)
    runtime = FakeRuntimeClient()
    recreator = ContainerRecreator(
        api,  # type: ignore[arg-type]
        runtime,  # type: ignore[arg-type]
        NODE,
        clock=lambda: datetime(2026, 1, 1, 0, 1, tzinfo=UTC),
    )
    await recreator.requests._replace([copy.deepcopy(api.objects[KEY])], "10")
    await recreator.pods._replace([_pod()], "5")
    yield api, runtime, recreator
    await recreator.controller.stop(timeout=1)


def deliver(recreator: ContainerRecreator, obj: dict[str, Any]) -> None:
    """The informer receives the MODIFIED event of `obj` (cache update, then handlers)."""
    recreator.requests._apply(WatchEvent("MODIFIED", obj))


async def work_off(recreator: ContainerRecreator) -> int:
    """Run the worker loop until nothing is queued for now (timed requeues stay parked)."""
    queue, rounds = recreator.controller.queue, 0
    while len(queue):
        key = await queue.get()
        try:
            await recreator.controller.reconcile_handler(key)
        finally:
            queue.done(key)
        rounds += 1
    return rounds


def phases(api: FakeApi) -> list[str]:
    return [w["status"]["phase"] for w in api.written]


async def test_event_before_the_write_returns_brings_the_request_back(harness):
    api, runtime, recreator = harness
    api.deliver_during_write = lambda obj: deliver(recreator, obj)
    recreator.controller.queue.add(KEY)
    await work_off(recreator)
    # answered Recreating, came back on its own event (queued while it was processing), then killed
    assert phases(api)[:2] == ["Recreating", "Recreating"]
    assert runtime.stopped == ["app-1"]
    assert recreator.expectations.is_satisfied(recreator.requests.get(KEY))


async def test_event_after_the_write_returned_brings_the_request_back(harness):
    api, runtime, recreator = harness
    recreator.controller.queue.add(KEY)
    await work_off(recreator)
    assert phases(api) == ["Recreating"] and runtime.stopped == []
    deliver(recreator, copy.deepcopy(api.objects[KEY]))
    await work_off(recreator)
    assert runtime.stopped == ["app-1"]


async def test_a_wake_before_the_event_waits_and_the_event_resumes(harness):
    api, runtime, recreator = harness
    recreator.controller.queue.add(KEY)
    await work_off(recreator)
    # a pod update wakes the request while the cache still holds the pre-write version: it must not act
    pod = _pod()
    pod["metadata"]["resourceVersion"] = "6"
    recreator.pods._apply(WatchEvent("MODIFIED", pod))
    await work_off(recreator)
    assert phases(api) == ["Recreating"] and runtime.stopped == []
    deliver(recreator, copy.deepcopy(api.objects[KEY]))
    await work_off(recreator)
    assert runtime.stopped == ["app-1"]


async def test_a_conflicting_write_waits_for_its_own_event_not_the_foreign_one(harness):
    api, runtime, recreator = harness
    # the cache has not seen it yet
    foreign = api.foreign_write(KEY, annotations={"example.com/touched": "yes"})
    recreator.controller.queue.add(KEY)
    await work_off(recreator)
    assert phases(api) == ["Recreating"] and api.rv == 12  # conflicted at 10, re-read 11, wrote 12
    deliver(recreator, foreign)  # the other writer's event: newer than the cache, older than ours
    await work_off(recreator)
    assert phases(api) == ["Recreating"] and runtime.stopped == []  # no second answer, no kill
    deliver(recreator, copy.deepcopy(api.objects[KEY]))
    await work_off(recreator)
    assert runtime.stopped == ["app-1"]


async def test_a_kill_that_outlives_the_deadline_records_its_state_and_keeps_the_request_completed(harness):
    """upstream's "recreates containers with preStopHook" (activeDeadlineSeconds=3 with an 8 s preStop): the
    manager completes the request while the daemon is still killing; the daemon's later write records
    the kill (app Recreating, isKilled) but must not turn the completed request back into Recreating."""
    api, runtime, recreator = harness
    recreator.controller.queue.add(KEY)
    await work_off(recreator)
    deliver(recreator, copy.deepcopy(api.objects[KEY]))

    async def stop_while_the_manager_completes(container_id: str, timeout: int) -> None:
        runtime.stopped.append(container_id)
        api.foreign_write(KEY, status={"phase": "Completed", "completionTime": "2026-01-01T00:00:03Z"})

    runtime.stop_container = stop_while_the_manager_completes  # type: ignore[method-assign]
    await work_off(recreator)
    assert runtime.stopped == ["app-1"]
    assert api.objects[KEY]["status"]["phase"] == "Completed"
    assert api.objects[KEY]["status"]["completionTime"] == "2026-01-01T00:00:03Z"
    assert api.objects[KEY]["status"]["containerRecreateStates"] == [
        {"name": "app", "phase": "Recreating", "isKilled": True}
    ]


async def test_a_pre_stop_hook_that_times_out_still_stops_the_container(harness):
    """upstream's "recreates containers with preStopHook" (terminationGracePeriodSeconds=3 against an 8 s
    preStop): the runtime's ExecSync gives up at the grace period; the container is stopped anyway."""
    import grpc

    api, runtime, recreator = harness
    api.objects[KEY]["spec"]["containers"][0]["preStop"] = {"exec": {"command": ["sleep", "8"]}}
    api.objects[KEY]["spec"]["strategy"]["terminationGracePeriodSeconds"] = 3
    deliver(recreator, copy.deepcopy(api.objects[KEY]))
    hooks: list[tuple[list[str], int]] = []

    async def exec_times_out(container_id: str, command: list[str], timeout: int) -> None:
        hooks.append((command, timeout))
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.UNKNOWN, grpc.aio.Metadata(), grpc.aio.Metadata(), "timeout 3s exceeded"
        )

    runtime.exec_sync = exec_times_out  # type: ignore[method-assign]
    recreator.controller.queue.add(KEY)
    await work_off(recreator)
    deliver(recreator, copy.deepcopy(api.objects[KEY]))
    await work_off(recreator)
    assert runtime.stopped == ["app-1"], api.written
    assert hooks == [(["sleep", "8"], 3)]
    assert runtime.stopped == ["app-1"]
    assert api.objects[KEY]["status"]["containerRecreateStates"] == [
        {"name": "app", "phase": "Recreating", "isKilled": True}
    ]


async def test_a_request_completed_during_a_kill_kills_no_further_container(harness):
    """upstream's "recreates containers with preStopHook" (activeDeadlineSeconds=3): app's 8 s preStop
    outlives the deadline; the sidecar, not killed yet, stays Pending and running."""
    api, runtime, recreator = harness
    api.objects[KEY]["spec"]["containers"].append(
        {"name": "sidecar", "statusContext": {"containerID": "cri://sidecar-1", "restartCount": 0}}
    )
    deliver(recreator, copy.deepcopy(api.objects[KEY]))
    pod = _pod()
    pod["metadata"]["resourceVersion"] = "6"
    pod["spec"]["containers"].append({"name": "sidecar"})
    pod["status"]["containerStatuses"].append(
        {"name": "sidecar", "containerID": "cri://sidecar-1", "restartCount": 0}
    )
    recreator.pods._apply(WatchEvent("MODIFIED", pod))

    async def stop_while_the_manager_completes(container_id: str, timeout: int) -> None:
        runtime.stopped.append(container_id)
        api.foreign_write(KEY, status={"phase": "Completed", "completionTime": "2026-01-01T00:00:03Z"})
        deliver(recreator, copy.deepcopy(api.objects[KEY]))

    runtime.stop_container = stop_while_the_manager_completes  # type: ignore[method-assign]
    recreator.controller.queue.add(KEY)
    await work_off(recreator)
    deliver(recreator, copy.deepcopy(api.objects[KEY]))
    await work_off(recreator)
    assert runtime.stopped == ["app-1"]
    assert api.objects[KEY]["status"]["phase"] == "Completed"
    assert api.objects[KEY]["status"]["containerRecreateStates"] == [
        {"name": "app", "phase": "Recreating", "isKilled": True},
        {"name": "sidecar", "phase": "Pending"},
    ]
