"""How many API writes a CloneSet pod costs (issue 18): counted, not timed.

The CloneSet and pod-readiness controllers run as in kruise-manager, on one client; every non-GET
request that client sends is recorded. The template carries the `KruisePodReady` gate, as
kruise-webhook would add it. The counts asserted are upstream's sequence at its floor:

- a new pod: the create (as `PreparingNormal`, as upstream creates it) and ONE pods/status patch
  carrying both readiness-gate conditions and the move to `Normal` (kube-apiserver's pod status
  strategy stores labels and annotations written there);
- an in-place update: `InPlaceUpdateReady=False`, one object write (images, revision labels, state
  `Updating`), and `InPlaceUpdateReady=True` with the state back to `Normal` in one status patch.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

import pytest

from kruise.kube.resources import CLONESETS
from kruise.manager.controllers import cloneset, podreadiness
from tests.integration.manager.test_cloneset_controller import get_cs, manifest, pods_of, settled

NS = "default"
PODS_N = 10
POD_PATH = re.compile(r"/api/v1/namespaces/[^/]+/pods(/[^/]+)?(/status)?$")
CLONESET_PATH = re.compile(r"/apis/apps\.kruise\.io/v1alpha1/namespaces/[^/]+/clonesets/[^/]+(/status)?$")


@pytest.fixture
def controller_setups():
    return [cloneset.SETUP, podreadiness.SETUP]


class WriteLog:
    """Non-GET requests of the shared client as (method, what) where what is `pods`, `pods/status`,
    `clonesets`, `clonesets/status` or the raw path (events and anything else)."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str]] = []

    def record(self, method: str, path: str) -> None:
        if method == "GET":
            return
        if match := POD_PATH.search(path):
            self.writes.append((method, "pods/status" if match.group(2) else "pods"))
        elif match := CLONESET_PATH.search(path):
            self.writes.append((method, "clonesets/status" if match.group(1) else "clonesets"))
        else:
            self.writes.append((method, path))

    def pod_writes(self) -> Counter[tuple[str, str]]:
        return Counter(w for w in self.writes if w[1] in ("pods", "pods/status"))

    def status_writes(self) -> int:
        return sum(1 for w in self.writes if w[1] == "clonesets/status")

    def clear(self) -> None:
        self.writes.clear()


@pytest.fixture
def write_log(kruise_cluster, monkeypatch) -> WriteLog:
    log = WriteLog()
    client = kruise_cluster.client
    send = client._send

    async def recording(method: str, path: str, **kwargs: Any):  # type: ignore[no-untyped-def]
        log.record(method, path)
        return await send(method, path, **kwargs)

    monkeypatch.setattr(client, "_send", recording)
    return log


def gated_manifest() -> dict[str, Any]:
    body = manifest(replicas=PODS_N, updateStrategy={"type": "InPlaceIfPossible", "maxUnavailable": "100%"})
    body["spec"]["template"]["spec"]["readinessGates"] = [{"conditionType": "KruisePodReady"}]
    return body


async def all_pods_normal(kruise_cluster, revision: str | None = None) -> list[dict[str, Any]]:
    def done(pods: list[dict[str, Any]]) -> bool:
        return len(pods) == PODS_N and all(
            p["metadata"]["labels"].get("lifecycle.apps.kruise.io/state") == "Normal"
            and (revision is None or p["metadata"]["labels"].get("controller-revision-hash") == revision)
            for p in pods
        )

    return await kruise_cluster.until(lambda: pods_of(kruise_cluster, "cs-demo"), done)


async def test_scale_up_costs_two_pod_writes_per_pod(kruise_cluster, write_log):
    await kruise_cluster.client.create(CLONESETS, gated_manifest())
    await settled(kruise_cluster, "cs-demo", PODS_N, availableReplicas=PODS_N)
    pods = await all_pods_normal(kruise_cluster)

    assert write_log.pod_writes() == {
        ("POST", "pods"): PODS_N,
        ("PATCH", "pods/status"): PODS_N,  # InPlaceUpdateReady, KruisePodReady, PreparingNormal -> Normal
    }
    for pod in pods:
        conditions = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert conditions["InPlaceUpdateReady"] == conditions["KruisePodReady"] == "True"
    # no more status writes than reconcile passes could make, and far fewer than pods
    assert 1 <= write_log.status_writes() < PODS_N


async def test_in_place_update_costs_three_pod_writes_per_pod(kruise_cluster, write_log):
    await kruise_cluster.client.create(CLONESETS, gated_manifest())
    await settled(kruise_cluster, "cs-demo", PODS_N, availableReplicas=PODS_N)
    await all_pods_normal(kruise_cluster)
    write_log.clear()

    body = copy.deepcopy(await get_cs(kruise_cluster, "cs-demo"))
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await kruise_cluster.client.update(CLONESETS, body)
    cs = await settled(kruise_cluster, "cs-demo", PODS_N, updatedReadyReplicas=PODS_N)
    pods = await all_pods_normal(kruise_cluster, cs["status"]["updateRevision"])

    assert write_log.pod_writes() == {
        ("PATCH", "pods/status"): 2 * PODS_N,  # InPlaceUpdateReady False; then True with Updating -> Normal
        ("PUT", "pods"): PODS_N,  # images + revision labels + state Updating, one write
    }
    assert all(p["spec"]["containers"][0]["image"] == "nginx:1.26" for p in pods)
