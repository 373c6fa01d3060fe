"""kruise-daemon's recreator and kruise-manager's ContainerRecreateRequest controller together:
a request with `strategy.unreadyGracePeriodSeconds` (the seed tutorial's example) is a hand-off
between the two, so only running both shows whether it ever recreates (issue 11 bug 5).

The protocol, as upstream runs it: the daemon answers a request by moving it to phase `Recreating`;
the manager then takes the pod out of service (not-ready key + `unready-acquired` stamp); the daemon
waits the grace period from that stamp and only then kills containers.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from kruise.daemon.containerrecreate.recreator import ContainerRecreator
from kruise.daemon.cri.client import RuntimeClient
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS
from kruise.manager.controllers.containerrecreaterequest.controller import metadata_changed, requests_of_pod
from kruise.manager.controllers.containerrecreaterequest.reconciler import ContainerRecreateRequestReconciler
from tests.kit.daemon_node import NODE, NS, crr_request, simulated_node
from tests.kit.polling import until_fetched

UNREADY = "crr.apps.kruise.io/unready-acquired"


@pytest.fixture
async def cluster(emulator):
    """A simulated node with kruise-daemon's recreator, and the manager's CRR controller."""
    async with simulated_node(emulator, "crr-grace-") as (simulator, client):
        runtime = RuntimeClient(simulator.socket_path(NODE))
        runtime.open()
        recreator = ContainerRecreator(client, runtime, NODE)
        requests = SharedInformer(client, CONTAINER_RECREATE_REQUESTS, None)
        pods = SharedInformer(client, PODS, None)
        manager = Controller(
            "containerrecreaterequest",
            ContainerRecreateRequestReconciler(
                client, requests=requests, pods=pods, wall=lambda: datetime.now(UTC)
            ),
        )
        manager.watch(requests)
        manager.watch(pods, lambda pod: requests_of_pod(requests, pod), update_filter=metadata_changed)
        recreator.start()
        requests.start()
        pods.start()
        manager.start()
        try:
            yield client
        finally:
            await manager.stop()
            await requests.stop()
            await pods.stop()
            await recreator.stop()
            await runtime.close()


def condition(pod, kind):
    return next((c for c in pod.get("status", {}).get("conditions", []) if c["type"] == kind), {})


async def served_pod(client, name):
    """A running pod behind the KruisePodReady gate, set True as the pod-readiness controller would."""
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "nodeName": NODE,
            "terminationGracePeriodSeconds": 2,
            "readinessGates": [{"conditionType": "KruisePodReady"}],
            "containers": [{"name": "app", "image": "nginx:alpine"}],
        },
    }
    await client.create(PODS, body)
    await until_fetched(
        lambda: client.get(PODS, name, NS), lambda p: p.get("status", {}).get("containerStatuses")
    )
    await client.patch(
        PODS, name, {"status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]}}, NS,
        patch_type="application/strategic-merge-patch+json", subresource="status",
    )  # fmt: skip
    return await until_fetched(
        lambda: client.get(PODS, name, NS), lambda p: condition(p, "Ready").get("status") == "True"
    )


async def test_unready_grace_request_takes_the_pod_out_then_recreates(cluster):
    client = cluster
    pod = await served_pod(client, "graceful")
    await client.create(
        CONTAINER_RECREATE_REQUESTS, crr_request(pod, "crr-grace", ["app"], unreadyGracePeriodSeconds=1)
    )
    acquired = await until_fetched(
        lambda: client.get(CONTAINER_RECREATE_REQUESTS, "crr-grace", NS),
        lambda c: (
            UNREADY in (c["metadata"].get("annotations") or {}) or c.get("status", {}).get("completionTime")
        ),
    )
    assert acquired["status"].get("message") is None, acquired["status"]
    assert acquired["status"]["phase"] == "Recreating"
    out = await client.get(PODS, "graceful", NS)
    assert condition(out, "KruisePodReady")["status"] == "False"
    assert json.loads(condition(out, "KruisePodReady")["message"]) == [
        {"userAgent": "ContainerRecreateRequest", "key": f"{NS}/crr-grace"}
    ]

    done = await until_fetched(
        lambda: client.get(CONTAINER_RECREATE_REQUESTS, "crr-grace", NS),
        lambda c: c.get("status", {}).get("phase") == "Completed" and not c["metadata"].get("finalizers"),
    )
    assert done["status"].get("message") is None
    assert [s["phase"] for s in done["status"]["containerRecreateStates"]] == ["Succeeded"]
    back = await until_fetched(
        lambda: client.get(PODS, "graceful", NS),
        lambda p: condition(p, "KruisePodReady").get("status") == "True",
    )
    assert back["status"]["containerStatuses"][0]["restartCount"] == 1
    # Nothing was killed before the stamp plus the grace period. Read from the container's own exit
    # time, not from a restart count sampled "soon after" the stamp: that window is only the grace
    # (the stamp has whole seconds, so at most 1 s here) and a loaded machine polls past it.
    stamp = datetime.fromisoformat(acquired["metadata"]["annotations"][UNREADY])
    finished = back["status"]["containerStatuses"][0]["lastState"]["terminated"]["finishedAt"]
    assert datetime.fromisoformat(finished) >= stamp + timedelta(seconds=1), (stamp, finished)
    assert back["metadata"]["uid"] == pod["metadata"]["uid"]
