"""BroadcastJob controller on the emulator: a pod per node, completion, ttl, deadline, failure policies."""

from __future__ import annotations

import pytest

from kruise.kube.errors import NotFound
from kruise.kube.resources import BROADCASTJOBS, EVENTS, PODS
from kruise.manager.controllers import broadcastjob

NS = "default"
LONG = {"sandbox.kruise.io/run-seconds": "100000"}


@pytest.fixture
def controller_setups():
    return [broadcastjob.SETUP]


def bcj(name, *, annotations=None, restart_policy="Never", **spec):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "BroadcastJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "template": {
                "metadata": {"annotations": annotations or {}},
                "spec": {
                    "containers": [{"name": "pi", "image": "perl:5.34"}],
                    "restartPolicy": restart_policy,
                },
            },
            **spec,
        },
    }


def getter(client, name):
    async def get():
        try:
            return await client.get(BROADCASTJOBS, name, NS)
        except NotFound:
            return None

    return get


def status(job):
    return (job or {}).get("status") or {}


async def job_pods(client, name):
    return (await client.list(PODS, NS, label_selector={"broadcastjob-name": name}))["items"]


async def event_reasons(client, name):
    events = (await client.list(EVENTS, NS))["items"]
    return {e["reason"] for e in events if e["involvedObject"].get("name") == name}


async def test_always_runs_one_pod_per_node_then_completes_and_expires(kruise_cluster):
    client = kruise_cluster.client
    await client.create(
        BROADCASTJOBS, bcj("pi", completionPolicy={"type": "Always", "ttlSecondsAfterFinished": 1})
    )

    async def job_and_pods():
        # read together: one second after completion the TTL deletes the job and its pods go with it
        return await getter(client, "pi")(), await job_pods(client, "pi")

    done, pods = await kruise_cluster.until(
        job_and_pods, lambda seen: status(seen[0]).get("phase") == "completed" and len(seen[1]) == 3
    )
    st = status(done)
    assert (st["desired"], st["succeeded"], st["active"], st["failed"]) == (3, 3, 0, 0)
    [condition] = st["conditions"]
    assert (condition["type"], condition["reason"]) == ("Complete", "Complete")
    assert condition["message"] == "Job completed, 3 pods succeeded, 0 pods failed"
    assert sorted(p["spec"]["nodeName"] for p in pods) == sorted({p["spec"]["nodeName"] for p in pods})
    assert len(pods) == 3
    await kruise_cluster.until(
        lambda: event_reasons(client, "pi"), lambda r: {"SuccessfulCreate", "JobComplete"} <= r
    )
    await kruise_cluster.until(getter(client, "pi"), lambda j: j is None, timeout=15)


async def test_parallelism_limits_active_pods(kruise_cluster):
    client = kruise_cluster.client
    await client.create(BROADCASTJOBS, bcj("one-by-one", parallelism=1))
    seen_active = []

    async def observe():
        pods = await job_pods(client, "one-by-one")
        seen_active.append(
            sum(1 for p in pods if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        )
        return await getter(client, "one-by-one")()

    done = await kruise_cluster.until(observe, lambda j: status(j).get("phase") == "completed")
    assert status(done)["succeeded"] == 3
    assert max(seen_active) <= 1


async def test_active_deadline_fails_the_job_and_deletes_active_pods(kruise_cluster):
    client = kruise_cluster.client
    job = bcj("slow", annotations=LONG, completionPolicy={"type": "Always", "activeDeadlineSeconds": 1})
    await client.create(BROADCASTJOBS, job)
    failed = await kruise_cluster.until(getter(client, "slow"), lambda j: status(j).get("phase") == "failed")
    [condition] = status(failed)["conditions"]
    assert condition["type"] == "Failed"
    assert condition["message"] == "Job default/slow was active longer than specified deadline"
    await kruise_cluster.until(lambda: event_reasons(client, "slow"), lambda r: "DeadlineExceeded" in r)
    await kruise_cluster.until(lambda: job_pods(client, "slow"), lambda pods: not pods)


async def test_never_keeps_running_after_all_pods_succeed(kruise_cluster):
    client = kruise_cluster.client
    await client.create(BROADCASTJOBS, bcj("keep", completionPolicy={"type": "Never"}))
    job = await kruise_cluster.until(getter(client, "keep"), lambda j: status(j).get("succeeded") == 3)
    assert status(job)["phase"] == "running"
    assert "conditions" not in status(job)


async def test_fail_fast_fails_on_a_failed_pod(kruise_cluster):
    client = kruise_cluster.client
    job = bcj("bad", annotations={"sandbox.kruise.io/exit-code": "1"}, failurePolicy={"type": "FailFast"})
    await client.create(BROADCASTJOBS, job)
    failed = await kruise_cluster.until(getter(client, "bad"), lambda j: status(j).get("phase") == "failed")
    assert status(failed)["conditions"][0]["message"] == (
        "failure policy is FailurePolicyTypeFailFast and failed pod is found"
    )


async def test_pause_policy_pauses_on_a_failed_pod(kruise_cluster):
    client = kruise_cluster.client
    job = bcj("pausing", annotations={"sandbox.kruise.io/exit-code": "1"}, failurePolicy={"type": "Pause"})
    await client.create(BROADCASTJOBS, job)
    paused = await kruise_cluster.until(
        getter(client, "pausing"), lambda j: status(j).get("phase") == "paused"
    )
    assert status(paused)["failed"] >= 1
    await kruise_cluster.until(lambda: event_reasons(client, "pausing"), lambda r: "Paused" in r)
