"""SidecarTerminator end to end: emulator + kruise-webhook (fills the request's labels) + the simulated
node running the sidecar as a real process + kruise-daemon's container recreator stopping it through
the node's CRI. A Job-like pod whose main container has finished completes once its sidecar is
stopped; with the gate off nothing happens and the pod keeps running."""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.daemon.containerrecreate.recreator import ContainerRecreator
from kruise.daemon.cri.client import RuntimeClient
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, EVENTS, PODS
from kruise.manager.controllers import containerrecreaterequest, sidecarterminator
from kruise.sandbox.simulator import RUN_SECONDS_ANNOTATION
from kruise.sandbox.simulator.processes import ProcessImage

NS = "default"
NODE = "node-1"
SIDECAR_IMAGE = "sidecar-proc:1"
GRACEFUL = "trap 'exit 0' TERM; while :; do sleep 0.05; done"  # exits 0 on SIGTERM
STUBBORN = "while :; do sleep 0.05; done"  # no trap: dies of SIGTERM, exit code 143


@pytest.fixture
def controller_setups():
    return [sidecarterminator.SETUP, containerrecreaterequest.SETUP]


@pytest.fixture
def feature_gates(request):
    return FeatureGates({"SidecarTerminator": getattr(request, "param", True)}, env={})


@pytest.fixture
def simulator_nodes():
    return 1


@pytest.fixture
def simulator_process_images():
    return (ProcessImage("sidecar-proc:*", {"sh": ["/bin/sh"]}, "sh"),)


@pytest.fixture
async def daemon(kruise_cluster, webhook):
    """kruise-daemon's container recreator on the only node."""
    runtime = RuntimeClient(kruise_cluster.simulator.socket_path(NODE))
    runtime.open()
    recreator = ContainerRecreator(kruise_cluster.client, runtime, NODE)
    recreator.start()
    try:
        yield kruise_cluster
    finally:
        await recreator.stop()
        await runtime.close()


def job_pod(name, script, *, extra_env=()):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "annotations": {RUN_SECONDS_ANNOTATION: "5"}},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 2,
            "containers": [
                {"name": "main", "image": "busybox:1.36"},
                {
                    "name": "proxy",
                    "image": SIDECAR_IMAGE,
                    "command": ["sh", "-c", script],
                    "env": [{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT", "value": "true"}, *extra_env],
                },
            ],
        },
    }


def state(pod, name):
    status = next(s for s in pod["status"].get("containerStatuses") or [] if s["name"] == name)
    return status["state"]


async def events_of(cluster, pod):
    items = (await cluster.client.list(EVENTS, NS))["items"]
    return [
        e
        for e in items
        if e["involvedObject"].get("uid") == pod["metadata"]["uid"] and e["reason"] == "SidecarTerminator"
    ]


async def test_sidecar_is_stopped_and_the_pod_succeeds(daemon):
    cluster = daemon
    await cluster.client.create(PODS, job_pod("job-a", GRACEFUL))
    finished = await cluster.until(
        lambda: cluster.client.get(PODS, "job-a", NS),
        lambda p: p.get("status", {}).get("phase") in ("Succeeded", "Failed"),
    )
    assert finished["status"]["phase"] == "Succeeded"
    assert state(finished, "main")["terminated"]["exitCode"] == 0
    assert state(finished, "proxy")["terminated"]["exitCode"] == 0
    crr = await cluster.client.get(
        CONTAINER_RECREATE_REQUESTS, f"sidecar-termination-{finished['metadata']['uid']}", NS
    )
    assert crr["spec"]["podName"] == "job-a"
    assert [c["name"] for c in crr["spec"]["containers"]] == ["proxy"]
    assert crr["spec"]["strategy"]["forceRecreate"] is True
    assert crr["spec"]["strategy"]["failurePolicy"] == "Ignore"
    owner = crr["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("Pod", finished["metadata"]["uid"], True)
    events = await cluster.until(lambda: events_of(cluster, finished), bool)
    assert events[0]["type"] == "Normal"
    assert events[0]["message"] == "Kruise SidecarTerminator is trying to terminate sidecar [proxy] using crr"


async def test_ignore_exit_code_marks_the_pod_succeeded_first(daemon):
    cluster = daemon
    ignore = ({"name": "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE", "value": "true"},)
    await cluster.client.create(PODS, job_pod("job-c", STUBBORN, extra_env=ignore))
    finished = await cluster.until(
        lambda: cluster.client.get(PODS, "job-c", NS),
        lambda p: (
            p.get("status", {}).get("phase") in ("Succeeded", "Failed") and "terminated" in state(p, "proxy")
        ),
    )
    assert finished["status"]["phase"] == "Succeeded"
    condition = next(c for c in finished["status"]["conditions"] if c["type"] == "SidecarTerminated")
    assert condition["status"] == "True" and condition["message"] == "Terminated by Sidecar Terminator"


async def test_a_sidecar_that_dies_of_sigterm_fails_the_pod(daemon):
    cluster = daemon
    await cluster.client.create(PODS, job_pod("job-e", STUBBORN))
    finished = await cluster.until(
        lambda: cluster.client.get(PODS, "job-e", NS),
        lambda p: p.get("status", {}).get("phase") in ("Succeeded", "Failed"),
    )
    terminated = state(finished, "proxy")["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (143, "Error")  # killed by SIGTERM
    assert finished["status"]["phase"] == "Failed"


@pytest.mark.parametrize("feature_gates", [False], indirect=True)
async def test_gate_off_leaves_the_pod_running(daemon):
    cluster = daemon
    assert [c.name for c in cluster.controllers] == ["containerrecreaterequest"]
    await cluster.client.create(PODS, job_pod("job-d", GRACEFUL))
    main_done = await cluster.until(
        lambda: cluster.client.get(PODS, "job-d", NS),
        lambda p: "terminated" in state(p, "main") if p.get("status", {}).get("containerStatuses") else False,
    )
    assert main_done["status"]["phase"] == "Running"
    assert "running" in state(main_done, "proxy")
    assert (await cluster.client.list(CONTAINER_RECREATE_REQUESTS, NS))["items"] == []
    assert await events_of(cluster, main_done) == []
