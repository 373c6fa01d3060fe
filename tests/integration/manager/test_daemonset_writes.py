"""How many API writes an Advanced DaemonSet pod costs (issue 18): counted, not timed.

The DaemonSet and pod-readiness controllers run as in kruise-manager, on one client; every non-GET
request it sends is recorded. The template carries `KruisePodReady` (kruise-webhook adds it); the
controller adds `InPlaceUpdateReady` itself for `InPlaceIfPossible`. The counts are the floor,
asserted exactly (docs/benchmarks.md lists them beside CloneSet's):

- a new pod, 2 writes: the create and ONE status patch from the daemonset controller carrying
  `InPlaceUpdateReady=True` and `KruisePodReady=True` (the pod-readiness controller leaves the pod
  alone; upstream creates DaemonSet pods without a lifecycle state);
- an in-place update, 3 writes: `InPlaceUpdateReady=False`, one object write (images, revision
  label), `InPlaceUpdateReady=True` (a DaemonSet pod has no lifecycle label to move back).
"""

from __future__ import annotations

import copy

import pytest

from kruise.kube.resources import ADVANCED_DAEMONSETS
from kruise.manager.controllers import daemonset, podreadiness
from tests.integration.manager.test_daemonset_controller import get_ds, live_pods, manifest, settled
from tests.integration.manager.writelog import write_log  # noqa: F401  (fixture)

NODES = 3  # the simulator's nodes: one pod each
STATUS = ("PATCH", "pods/status")


@pytest.fixture
def controller_setups():
    return [daemonset.SETUP, podreadiness.SETUP]


def gated_manifest():
    rolling = {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": "100%"}
    body = manifest(updateStrategy={"type": "RollingUpdate", "rollingUpdate": rolling})
    body["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    return body


async def test_scale_up_costs_two_pod_writes_per_pod(kruise_cluster, write_log):  # noqa: F811
    await kruise_cluster.client.create(ADVANCED_DAEMONSETS, gated_manifest())
    await settled(kruise_cluster, NODES)
    pods = await live_pods(kruise_cluster)

    assert write_log.pod_writes() == {("POST", "pods"): NODES, STATUS: NODES}
    assert write_log.pod_sequences() == {p["metadata"]["name"]: (STATUS,) for p in pods}
    for pod in pods:
        conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert conditions["InPlaceUpdateReady"] == conditions["KruisePodReady"] == "True"


async def test_in_place_update_costs_three_pod_writes_per_pod(kruise_cluster, write_log):  # noqa: F811
    await kruise_cluster.client.create(ADVANCED_DAEMONSETS, gated_manifest())
    await settled(kruise_cluster, NODES)
    write_log.clear()

    body = copy.deepcopy(await get_ds(kruise_cluster))
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await kruise_cluster.client.update(ADVANCED_DAEMONSETS, body)
    await settled(kruise_cluster, NODES, timeout=60.0)
    pods = await live_pods(kruise_cluster)

    expected = (STATUS, ("PUT", "pods"), STATUS)  # InPlaceUpdateReady False, update, True
    assert write_log.pod_sequences() == {p["metadata"]["name"]: expected for p in pods}
    assert write_log.count("POST", "pods") == 0
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in pods)
