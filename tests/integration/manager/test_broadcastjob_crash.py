"""BroadcastJob across a kruise-manager crash: nothing is lost and nothing happens twice.

Each test stops the controller mid-job (`kruise_cluster.restart_manager`: caches, queue and
expectations go with it) and lets a fresh one take over. Pod creations are counted from a pods watch
opened before the job exists, so a pod created and gone between two polls is still counted.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from kruise.control.broadcastjob.pods import assigned_node
from kruise.kube.clock import FakeClock
from kruise.kube.resources import BROADCASTJOBS, EVENTS, PODS
from kruise.kube.resources import NODES as NODE_RESOURCE
from kruise.manager.controllers import broadcastjob
from kruise.sandbox.simulator.timing import EXIT_CODE_ANNOTATION, RUN_SECONDS_ANNOTATION
from tests.integration.manager.test_broadcastjob_controller import NS, bcj, getter, job_pods, status

NODES = 5


@pytest.fixture
def controller_setups():
    return [broadcastjob.SETUP]


@pytest.fixture
def simulator_nodes() -> int:
    return NODES


class PodCreations:
    """Every pod of one job the API server ever added (uid -> node), read from a watch."""

    def __init__(self, client, job: str) -> None:
        self.client = client
        self.job = job
        self.added: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        listing = await self.client.list(PODS, NS, label_selector={"broadcastjob-name": self.job})
        for pod in listing["items"]:
            self._add(pod)
        self._task = asyncio.create_task(self._watch(listing["metadata"]["resourceVersion"]))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _add(self, pod: dict[str, Any]) -> None:
        self.added[pod["metadata"]["uid"]] = assigned_node(pod)

    async def _watch(self, version: str) -> None:
        async for event in self.client.watch(
            PODS, NS, resource_version=version, label_selector={"broadcastjob-name": self.job}
        ):
            if event.type == "ADDED":
                self._add(event.object)

    def per_node(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for node in self.added.values():
            counts[node] = counts.get(node, 0) + 1
        return counts


@contextlib.asynccontextmanager
async def pod_creations(client, job: str) -> AsyncIterator[PodCreations]:
    creations = PodCreations(client, job)
    await creations.start()
    try:
        yield creations
    finally:
        await creations.stop()


def phase(pod: dict[str, Any]) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def deleting(pod: dict[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


async def events_of(cluster, name: str, reason: str) -> int:
    """How many times `reason` was recorded for the job (an aggregated event counts its `count`)."""
    for recorder in cluster.context.recorders:
        await recorder.flush()
    events = (await cluster.client.list(EVENTS, NS))["items"]
    return sum(
        e.get("count") or 1
        for e in events
        if e["involvedObject"].get("name") == name and e["reason"] == reason
    )


async def created_events(cluster, name: str) -> dict[str, int]:
    """pod name → how many times `SuccessfulCreate` ("Created pod: X") was recorded for it on the job."""
    for recorder in cluster.context.recorders:
        await recorder.flush()
    counts: dict[str, int] = {}
    for e in (await cluster.client.list(EVENTS, NS))["items"]:
        if e["involvedObject"].get("name") == name and e["reason"] == "SuccessfulCreate":
            pod = e["message"].removeprefix("Created pod: ")
            counts[pod] = counts.get(pod, 0) + (e.get("count") or 1)
    return counts


async def all_seen(cluster, creations: PodCreations, name: str) -> list[dict[str, Any]]:
    """The job's pods once the watch has seen every one of them."""
    return await cluster.until(
        lambda: job_pods(cluster.client, name),
        lambda pods: {p["metadata"]["uid"] for p in pods} <= creations.added.keys(),
    )


@pytest.mark.parametrize("hard", [False, True], ids=["gentle", "hard"])
async def test_manager_crash_mid_job_creates_one_pod_per_node_and_completes_once(kruise_cluster, hard):
    """Parallelism 2 over 5 nodes; the manager crashes once a pod has succeeded while others still
    run: the fresh manager creates only the missing pods, and the job completes exactly once. `hard`
    kills the in-flight pass wherever it is awaiting (a pod created, its event not yet sent)."""
    client = kruise_cluster.client
    job = bcj(
        "wave",
        annotations={RUN_SECONDS_ANNOTATION: "100"},
        parallelism=2,
        completionPolicy={"type": "Always"},
    )
    history: list[dict[str, Any]] = []

    async def observe():
        current = await getter(client, "wave")()
        history.append(status(current))
        return current, await job_pods(client, "wave")

    def mid_job(seen) -> bool:
        _, pods = seen
        phases = [phase(p) for p in pods]
        return phases.count("Succeeded") >= 1 and "Running" in phases and len(pods) < NODES

    async with pod_creations(client, "wave") as creations:
        await client.create(BROADCASTJOBS, job)
        await kruise_cluster.until(observe, mid_job, timeout=60)
        fresh = await kruise_cluster.restart_manager([broadcastjob.SETUP], hard=hard)
        assert fresh is kruise_cluster.context
        done, _ = await kruise_cluster.until(
            observe, lambda seen: status(seen[0]).get("phase") == "completed", timeout=60
        )
        pods = await all_seen(kruise_cluster, creations, "wave")

    st = status(done)
    assert (st["desired"], st["active"], st["succeeded"], st["failed"]) == (NODES, 0, NODES, 0)
    assert st["completionTime"]
    [condition] = st["conditions"]
    assert (condition["type"], condition["status"]) == ("Complete", "True")
    assert condition["message"] == f"Job completed, {NODES} pods succeeded, 0 pods failed"
    nodes = {n["metadata"]["name"] for n in (await client.list(NODE_RESOURCE))["items"]}
    assert creations.per_node() == dict.fromkeys(nodes, 1)
    assert {p["metadata"]["uid"] for p in pods} == creations.added.keys()
    assert all(phase(p) == "Succeeded" for p in pods)
    completions = {s.get("completionTime") for s in history if s.get("completionTime")}
    assert completions == {st["completionTime"]}, "completionTime is written once"
    assert all(s.get("active", 0) <= 2 for s in history)
    assert await events_of(kruise_cluster, "wave", "JobComplete") == 1
    created = await created_events(kruise_cluster, "wave")
    assert set(created) <= {p["metadata"]["name"] for p in pods} and set(created.values()) == {1}, created
    if not hard:  # a killed pass may lose the event of a pod it created, never record one twice
        assert len(created) == NODES, created


FAIL_FAST = pytest.param(
    {
        "annotations": {RUN_SECONDS_ANNOTATION: "50", EXIT_CODE_ANNOTATION: "1"},
        "restart_policy": "OnFailure",
        "failurePolicy": {"type": "FailFast", "restartLimit": 1},
    },
    "failed",
    id="fail-fast-after-restart-limit",
)
CONTINUE = pytest.param(
    {
        "annotations": {RUN_SECONDS_ANNOTATION: "50", EXIT_CODE_ANNOTATION: "1"},
        "restart_policy": "Never",
        "failurePolicy": {"type": "Continue"},
    },
    "completed",
    id="continue-past-failed-pods",
)


@pytest.mark.parametrize(("spec", "outcome"), [FAIL_FAST, CONTINUE])
async def test_manager_crash_while_pods_fail_keeps_the_failure_policy_and_counts(
    kruise_cluster, spec, outcome
):
    """Failing pods (exit code 1) under FailFast with a restart limit, or under Continue; the
    manager crashes while the first pods run: the job ends as the policy says, every pod ever
    created is counted failed exactly once, and no node got a second pod."""
    client = kruise_cluster.client
    job = bcj("flaky", parallelism=2, completionPolicy={"type": "Always"}, **spec)

    async def pods():
        return await job_pods(client, "flaky")

    async with pod_creations(client, "flaky") as creations:
        await client.create(BROADCASTJOBS, job)
        await kruise_cluster.until(pods, lambda ps: any(phase(p) == "Running" for p in ps), timeout=60)
        await kruise_cluster.restart_manager([broadcastjob.SETUP])
        ended = await kruise_cluster.until(
            getter(client, "flaky"), lambda j: status(j).get("phase") == outcome, timeout=60
        )
        # FailFast deletes the pods still active: wait for them to go, then for the watch to catch up
        await kruise_cluster.until(pods, lambda ps: not any(deleting(p) for p in ps))
        await all_seen(kruise_cluster, creations, "flaky")

    st = status(ended)
    per_node = creations.per_node()
    assert set(per_node.values()) == {1}, per_node
    assert st["succeeded"] == 0
    assert st["active"] == 0
    assert st["failed"] == len(creations.added), "each created pod is one failure, none counted twice"
    assert st["completionTime"]
    [condition] = st["conditions"]
    if outcome == "failed":
        assert condition["type"] == "Failed"
        assert condition["message"] == "failure policy is FailurePolicyTypeFailFast and failed pod is found"
        assert 1 <= st["failed"] <= 2  # parallelism 2: no pod is created once one has failed
        assert await events_of(kruise_cluster, "flaky", "failed pod is found") >= 1
    else:
        assert condition["type"] == "Complete"
        assert condition["message"] == f"Job completed, 0 pods succeeded, {NODES} pods failed"
        assert st["desired"] == st["failed"] == NODES
        assert await events_of(kruise_cluster, "flaky", "JobComplete") == 1


class TestDeadlineAndTtlAcrossCrashes:
    """Time is the manager's fake clock: the deadline and the TTL must fire from the fresh manager's
    own requeues, with no pod or job event to wake it."""

    @pytest.fixture
    def manager_clock(self):
        return FakeClock(wall_start=datetime.now(UTC))

    @pytest.fixture
    def simulator_nodes(self) -> int:
        return 3

    async def test_deadline_then_ttl_fire_after_each_restart(self, kruise_cluster, manager_clock):
        client = kruise_cluster.client
        job = bcj(
            "timed",
            annotations={RUN_SECONDS_ANNOTATION: "100000"},
            completionPolicy={"type": "Always", "activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 120},
        )
        await client.create(BROADCASTJOBS, job)
        await kruise_cluster.until(
            lambda: job_pods(client, "timed"),
            lambda ps: len(ps) == 3 and all(phase(p) == "Running" for p in ps),
            timeout=60,
        )
        running = await kruise_cluster.until(getter(client, "timed"), lambda j: status(j).get("active") == 3)
        assert status(running)["phase"] == "running"

        # crash before the deadline; the fresh manager settles on the running job first
        await kruise_cluster.restart_manager([broadcastjob.SETUP])
        await self.idle(kruise_cluster)
        manager_clock.step(30)
        await self.idle(kruise_cluster)
        assert status(await getter(client, "timed")()).get("phase") == "running"
        manager_clock.step(31)
        failed = await kruise_cluster.until(
            getter(client, "timed"), lambda j: status(j).get("phase") == "failed"
        )
        [condition] = status(failed)["conditions"]
        assert condition["type"] == "Failed"
        assert condition["message"] == "Job default/timed was active longer than specified deadline"
        assert status(failed)["completionTime"]
        await kruise_cluster.until(lambda: job_pods(client, "timed"), lambda ps: not ps)

        # crash again while the finished job waits out its TTL
        await kruise_cluster.restart_manager([broadcastjob.SETUP])
        await self.idle(kruise_cluster)
        manager_clock.step(60)
        await self.idle(kruise_cluster)
        assert status(await getter(client, "timed")()).get("phase") == "failed", "the TTL has not passed yet"
        manager_clock.step(61)
        await kruise_cluster.until(getter(client, "timed"), lambda j: j is None)
        assert await events_of(kruise_cluster, "timed", "DeadlineExceeded") == 1

    @staticmethod
    async def idle(cluster) -> None:
        """Until the controller has worked off every key it was given (its delayed requeues wait on
        the fake clock and do not count)."""

        async def queue():
            [controller] = cluster.controllers
            return controller.queue

        await cluster.until(queue, lambda q: len(q) == 0 and not q.processing())
