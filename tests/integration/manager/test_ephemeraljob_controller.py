"""EphemeralJob controller on the emulator with the simulated kubelet: ephemeral containers added to
the selected pods through pods/ephemeralcontainers, `parallelism` at a time, run to completion by the
kubelet; status, failure, a refused injection (CreateFailed), TTL deletion."""

from __future__ import annotations

import pytest

from kruise.api.keys import FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP
from kruise.kube.errors import NotFound
from kruise.kube.resources import EPHEMERALJOBS, EVENTS, PODS
from kruise.manager.controllers import ephemeraljob
from tests.kit.pods import pod

NS = "default"


@pytest.fixture
def controller_setups():
    return [ephemeraljob.SETUP]


def web_pod(name, **annotations):
    """A web pod; `annotations` script what the fake runtime does with it."""
    return pod(
        name,
        namespace=NS,
        labels={"app": "web"},
        annotations=annotations,
        containers=[{"name": "main", "image": "nginx:1.25"}],
        typed=True,
    )


def ejob(name="debug", container=None, **spec):
    container = container or {
        "name": "dbg",
        "image": "busybox:1.36",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File",
        "command": ["sleep", "10"],
    }
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "EphemeralJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"ephemeralContainers": [container]},
            **spec,
        },
    }


async def running_pods(kc, n):
    async def fetch():
        return (await kc.client.list(PODS, NS))["items"]

    return await kc.until(fetch, lambda items: sum(p["status"].get("phase") == "Running" for p in items) == n)


async def job_status(kc, name="debug"):
    return (await kc.client.get(EPHEMERALJOBS, name, NS)).get("status") or {}


def debug_states(pods: list[dict]) -> dict[str, str]:
    """pod name -> the state of its debug container (`running`, `waiting`, `terminated`)."""
    states = {}
    for p in pods:
        for st in p["status"].get("ephemeralContainerStatuses") or []:
            states[p["metadata"]["name"]] = next(iter(st["state"]))
    return states


async def test_containers_added_with_parallelism_until_the_job_succeeds(kruise_cluster):
    """parallelism 2, replicas 3: a and b get the container first; c, created while both run theirs,
    waits until neither runs (upstream's `min(parallelism, pods without it) - running`, counting
    containers already running — so c's pass sees a and b running: the pod events come in order)."""
    kc = kruise_cluster
    for name in ("a", "b"):  # their debug containers run 100 cluster seconds (2 s at speed 50)
        await kc.client.create(PODS, web_pod(name, **{"sandbox.kruise.io/run-seconds": "100"}))
    await running_pods(kc, 2)
    debug = {"name": "dbg", "image": "busybox:1.36", "imagePullPolicy": "IfNotPresent", "command": ["date"]}
    await kc.client.create(EPHEMERALJOBS, ejob(container=debug, parallelism=2, replicas=3))

    async def pods() -> list[dict]:
        return (await kc.client.list(PODS, NS))["items"]

    both = await kc.until(pods, lambda items: debug_states(items) == {"a": "running", "b": "running"})
    assert len(both) == 2
    await kc.client.create(PODS, web_pod("c", **{"sandbox.kruise.io/run-seconds": "1"}))

    held_while_both_ran = 0

    async def watch_status():
        nonlocal held_while_both_ran
        states = debug_states(await pods())
        if states.get("a") == "running" and states.get("b") == "running":
            assert "c" not in states, "c got its container while a and b both ran theirs"
            held_while_both_ran += 1
        return await job_status(kc)

    finished = await kc.until(watch_status, lambda s: s.get("phase") == "Succeeded")
    assert held_while_both_ran > 0, "c existed while a and b ran: the gate was exercised"
    assert (finished["match"], finished["succeeded"], finished["failed"]) == (3, 3, 0)
    assert finished["completionTime"] and finished["startTime"]
    assert {c["type"] for c in finished["conditions"]} == {"Initialized", "JobSucceeded"}
    job = await kc.client.get(EPHEMERALJOBS, "debug", NS)
    assert FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP in job["metadata"]["finalizers"]

    for name in ("a", "b", "c"):
        p = await kc.client.get(PODS, name, NS)
        (ec,) = p["spec"]["ephemeralContainers"]
        assert ec["name"] == "dbg" and ec["command"] == ["date"]
        assert {"name": "KRUISE_EJOB_ID", "value": job["metadata"]["uid"]} in ec["env"]
        (st,) = p["status"]["ephemeralContainerStatuses"]
        assert st["state"]["terminated"]["exitCode"] == 0


async def test_failed_container_fails_the_job_and_ttl_deletes_it(kruise_cluster):
    kc = kruise_cluster
    await kc.client.create(PODS, web_pod("broken", **{"sandbox.kruise.io/exit-code": "4"}))
    await running_pods(kc, 1)
    await kc.client.create(EPHEMERALJOBS, ejob(ttlSecondsAfterFinished=1))
    failed = await kc.until(lambda: job_status(kc), lambda s: s.get("phase") == "Failed")
    assert failed["failed"] == 1 and failed["completionTime"]
    assert {c["type"]: c["reason"] for c in failed["conditions"]}["JobFailed"] in (
        "JobFailed",
        "CreateFailed",
    )

    async def gone():
        try:
            await kc.client.get(EPHEMERALJOBS, "debug", NS)
        except NotFound:
            return True
        return False

    assert await kc.until(gone, bool)


async def test_a_refused_container_is_reported(kruise_cluster):
    kc = kruise_cluster
    await kc.client.create(PODS, web_pod("target"))
    await running_pods(kc, 1)
    bad = {
        "name": "dbg",
        "image": "busybox",
        "imagePullPolicy": "IfNotPresent",
        "terminationMessagePolicy": "File",
        "targetContainerName": "nope",
    }
    await kc.client.create(EPHEMERALJOBS, ejob(container=bad))

    async def warnings():
        events = (await kc.client.list(EVENTS, NS))["items"]
        return [e for e in events if e["involvedObject"]["name"] == "debug" and e["reason"] == "CreateFailed"]

    (event, *_) = await kc.until(warnings, bool)
    assert event["type"] == "Warning"
    assert "failed to create ephemeral container in pod default/target" in event["message"]
    assert "targetContainerName" in event["message"]
    status = await job_status(kc)
    assert status["match"] == 1 and status["phase"] in ("Unknown", "Waiting")
