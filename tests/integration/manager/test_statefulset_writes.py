"""How many API writes an Advanced StatefulSet pod costs (issue 18): counted, not timed.

The StatefulSet and pod-readiness controllers run as in kruise-manager, on one client; every non-GET
request it sends is recorded. The template carries `KruisePodReady` (kruise-webhook adds it to every
pod a kruise workload owns) and `InPlaceUpdateReady` (required for in-place updates). The counts are
the floor, asserted exactly (docs/benchmarks.md lists them beside CloneSet's):

- a new pod, 2 writes: the create and ONE status patch from the statefulset controller carrying
  `InPlaceUpdateReady=True` and `KruisePodReady=True` (the pod-readiness controller leaves the pod
  alone); created `Normal`, as upstream does without a preNormal hook, it has no state to move;
- an in-place update, 3 writes: `InPlaceUpdateReady=False`, one object write (images, revision
  label, state `Updating`), and `InPlaceUpdateReady=True` with the state back to `Normal` in one
  status patch.
"""

from __future__ import annotations

import copy

import pytest

from kruise.kube.resources import ADVANCED_STATEFULSETS
from kruise.manager.controllers import podreadiness, statefulset
from tests.integration.manager.test_statefulset_controller import get_sts, manifest, pods_of, settled
from tests.integration.manager.writelog import write_log  # noqa: F401  (fixture)

PODS_N = 6
STATUS = ("PATCH", "pods/status")


@pytest.fixture
def controller_setups():
    return [statefulset.SETUP, podreadiness.SETUP]


def gated_manifest():
    body = manifest(
        replicas=PODS_N,
        podManagementPolicy="Parallel",
        updateStrategy={"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%"}},
    )
    body["spec"]["template"]["spec"]["readinessGates"].append({"conditionType": "KruisePodReady"})
    return body


async def scaled_up(kruise_cluster):
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, gated_manifest())
    await settled(kruise_cluster, "web", PODS_N, availableReplicas=PODS_N)


async def test_scale_up_costs_two_pod_writes_per_pod(kruise_cluster, write_log):  # noqa: F811
    await scaled_up(kruise_cluster)

    assert write_log.pod_writes() == {("POST", "pods"): PODS_N, STATUS: PODS_N}
    assert write_log.pod_sequences() == {f"web-{i}": (STATUS,) for i in range(PODS_N)}
    for pod in (await pods_of(kruise_cluster, "web")).values():
        conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert conditions["InPlaceUpdateReady"] == conditions["KruisePodReady"] == "True"


async def test_in_place_update_costs_three_pod_writes_per_pod(kruise_cluster, write_log):  # noqa: F811
    await scaled_up(kruise_cluster)
    write_log.clear()

    body = copy.deepcopy(await get_sts(kruise_cluster, "web"))
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await kruise_cluster.client.update(ADVANCED_STATEFULSETS, body)
    await settled(kruise_cluster, "web", PODS_N, updatedReadyReplicas=PODS_N, availableReplicas=PODS_N)

    expected = (STATUS, ("PUT", "pods"), STATUS)  # False; update + Updating; True + -> Normal
    assert write_log.pod_sequences() == {f"web-{i}": expected for i in range(PODS_N)}
    assert write_log.count("POST", "pods") == 0
    pods = await pods_of(kruise_cluster, "web")
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in pods.values())
