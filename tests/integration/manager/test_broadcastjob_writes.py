"""How many API writes a BroadcastJob pod costs (issue 18): counted, not timed.

The BroadcastJob and pod-readiness controllers run as in kruise-manager, on one client; every
non-GET request it sends is recorded. The template carries `KruisePodReady` (kruise-webhook adds it
to every pod a kruise workload owns). The count is the floor, asserted exactly (docs/benchmarks.md
lists it beside CloneSet's):

- a pod run to completion, 2 writes: the create and `KruisePodReady=True`, written by the
  broadcastjob controller (the pod-readiness controller leaves the pod alone); the job's pods are
  neither updated nor deleted on completion.

The pods run a real process that waits for the test's release file: each pod is surely seen live
(and so written) before it finishes, whatever the machine's load — a pod that finished before the
controller ever saw it running would rightly get no write at all.
"""

from __future__ import annotations

import pytest

from kruise.kube.resources import BROADCASTJOBS
from kruise.manager.controllers import broadcastjob, podreadiness
from kruise.sandbox.simulator.processes import ProcessImage
from tests.integration.manager.test_broadcastjob_controller import bcj, getter, job_pods, status
from tests.integration.manager.writelog import write_log  # noqa: F401  (fixture)

NODES = 3  # the simulator's nodes: one pod each
HELD_IMAGE = "held:1"  # its containers run /bin/sh as a local process


def kruise_pod_ready(pod):
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "KruisePodReady" and c.get("status") == "True" for c in conditions)


@pytest.fixture
def simulator_process_images():
    return (ProcessImage("held:*", {"sh": ["/bin/sh"]}, "sh"),)


@pytest.fixture
def controller_setups():
    return [broadcastjob.SETUP, podreadiness.SETUP]


async def test_a_pod_run_to_completion_costs_two_writes(kruise_cluster, write_log, tmp_path):  # noqa: F811
    client = kruise_cluster.client
    release = tmp_path / "release"
    job = bcj("pi", completionPolicy={"type": "Always"})
    spec = job["spec"]["template"]["spec"]
    spec["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    wait = f"until [ -e {release} ]; do sleep 0.02; done"
    spec["containers"] = [{"name": "pi", "image": HELD_IMAGE, "command": ["sh", "-c", wait]}]
    await client.create(BROADCASTJOBS, job)
    await kruise_cluster.until(
        lambda: job_pods(client, "pi"), lambda pods: len(pods) == NODES and all(map(kruise_pod_ready, pods))
    )
    release.touch()
    await kruise_cluster.until(getter(client, "pi"), lambda j: status(j).get("phase") == "completed")
    pods = await job_pods(client, "pi")

    assert len(pods) == NODES
    assert {(p.get("status") or {}).get("phase") for p in pods} == {"Succeeded"}
    assert write_log.pod_writes() == {("POST", "pods"): NODES, ("PATCH", "pods/status"): NODES}
    assert write_log.pod_sequences() == {p["metadata"]["name"]: (("PATCH", "pods/status"),) for p in pods}
