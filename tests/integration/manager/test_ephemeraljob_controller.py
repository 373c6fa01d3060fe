"""EphemeralJob controller on the emulator with the simulated kubelet: ephemeral containers added to
the selected pods through pods/ephemeralcontainers, `parallelism` at a time, run to completion by the
kubelet; status, failure, a refused injection (CreateFailed), TTL deletion."""

from __future__ import annotations

import pytest

from kruise.api.keys import FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP
from kruise.kube.errors import NotFound
from kruise.kube.resources import EPHEMERALJOBS, EVENTS, PODS
from kruise.manager.controllers import ephemeraljob

NS = "default"


@pytest.fixture
def controller_setups():
    return [ephemeraljob.SETUP]


def pod(name, **annotations):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": {"app": "web"}, "annotations": annotations},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
    }


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


async def test_containers_added_with_parallelism_until_the_job_succeeds(kruise_cluster):
    kc = kruise_cluster
    for name in ("a", "b", "c"):
        await kc.client.create(PODS, pod(name))
    await running_pods(kc, 3)
    await kc.client.create(EPHEMERALJOBS, ejob(parallelism=2, replicas=3))

    seen_running: list[int] = []

    async def watch_status():
        # how many pods run the debug container at each poll: never more than parallelism
        pods = (await kc.client.list(PODS, NS))["items"]
        seen_running.append(
            sum(
                1
                for p in pods
                for st in p["status"].get("ephemeralContainerStatuses") or []
                if "running" in st["state"]
            )
        )
        return await job_status(kc)

    finished = await kc.until(watch_status, lambda s: s.get("phase") == "Succeeded")
    assert max(seen_running) <= 2
    assert (finished["match"], finished["succeeded"], finished["failed"]) == (3, 3, 0)
    assert finished["completionTime"] and finished["startTime"]
    assert {c["type"] for c in finished["conditions"]} == {"Initialized", "JobSucceeded"}
    job = await kc.client.get(EPHEMERALJOBS, "debug", NS)
    assert FINALIZER_EPHEMERAL_CONTAINERS_CLEANUP in job["metadata"]["finalizers"]

    for name in ("a", "b", "c"):
        p = await kc.client.get(PODS, name, NS)
        (ec,) = p["spec"]["ephemeralContainers"]
        assert ec["name"] == "dbg" and ec["command"] == ["sleep", "10"]
        assert {"name": "KRUISE_EJOB_ID", "value": job["metadata"]["uid"]} in ec["env"]
        (st,) = p["status"]["ephemeralContainerStatuses"]
        assert st["state"]["terminated"]["exitCode"] == 0


async def test_failed_container_fails_the_job_and_ttl_deletes_it(kruise_cluster):
    kc = kruise_cluster
    await kc.client.create(PODS, pod("broken", **{"sandbox.kruise.io/exit-code": "4"}))
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
    await kc.client.create(PODS, pod("target"))
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
