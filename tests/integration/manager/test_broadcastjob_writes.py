"""How many API writes a BroadcastJob pod costs (issue 18): counted, not timed.

The BroadcastJob and pod-readiness controllers run as in kruise-manager, on one client; every
non-GET request it sends is recorded. The template carries `KruisePodReady` (kruise-webhook adds it
to every pod a kruise workload owns). The count is the floor, asserted exactly (docs/benchmarks.md
lists it beside CloneSet's):

- a pod run to completion, 2 writes: the create and `KruisePodReady=True`, written by the
  broadcastjob controller (the pod-readiness controller leaves the pod alone); the job's pods are
  neither updated nor deleted on completion.
"""

from __future__ import annotations

import pytest

from kruise.kube.resources import BROADCASTJOBS
from kruise.manager.controllers import broadcastjob, podreadiness
from tests.integration.manager.test_broadcastjob_controller import bcj, getter, job_pods, status
from tests.integration.manager.writelog import write_log  # noqa: F401  (fixture)

NODES = 3  # the simulator's nodes: one pod each


@pytest.fixture
def controller_setups():
    return [broadcastjob.SETUP, podreadiness.SETUP]


async def test_a_pod_run_to_completion_costs_two_writes(kruise_cluster, write_log):  # noqa: F811
    client = kruise_cluster.client
    job = bcj("pi", completionPolicy={"type": "Always"})
    job["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    await client.create(BROADCASTJOBS, job)
    await kruise_cluster.until(getter(client, "pi"), lambda j: status(j).get("phase") == "completed")
    pods = await job_pods(client, "pi")

    assert len(pods) == NODES
    assert write_log.pod_writes() == {("POST", "pods"): NODES, ("PATCH", "pods/status"): NODES}
    assert write_log.pod_sequences() == {p["metadata"]["name"]: (("PATCH", "pods/status"),) for p in pods}
