"""kruise-daemon's containermeta reporter against the emulator and the simulated node's fake CRI: it writes
``apps.kruise.io/runtime-containers-meta`` from the runtime's containers (env read with ``ExecSync env``),
leaves a running pod alone when only its metadata changes, and restarts the container with a stale env
hash once the pod is being updated in place (InPlaceUpdateReady False), as kruise-manager then expects."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.control.common.inplace.containerhash import kubelet_container_hash
from kruise.daemon.containermeta.controller import ContainerMetaController
from kruise.daemon.cri.client import RuntimeClient
from kruise.kube.client import PatchType
from kruise.kube.resources import PODS, object_key
from tests.kit.daemon_node import NODE, NS, ready, simulated_node
from tests.kit.polling import until_fetched

KEY = "apps.kruise.io/runtime-containers-meta"
# Upstream's hashes of [{"name":"TEST_ENV","value":"foo"|"bar"}] (see test_control_inplace_envhash.py).
HASH_FOO, HASH_BAR = 27323935, 3944769931


class RecordingController(ContainerMetaController):
    """Remembers each pod resourceVersion a reconcile finished with, so a test can wait for the
    daemon to have looked at a change instead of hoping it has."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[tuple[str, int]] = []

    async def reconcile(self, key: str):  # type: ignore[override]
        pod = self.pods.get(key)
        result = await super().reconcile(key)
        if pod is not None:
            self.seen.append((key, int(pod["metadata"]["resourceVersion"])))
        return result


@pytest.fixture
async def node(emulator):
    async with simulated_node(emulator, "cmeta-cri-") as (simulator, client):
        runtime = RuntimeClient(simulator.socket_path(NODE))
        runtime.open()
        meta = RecordingController(client, runtime, NODE)
        meta.start()
        try:
            yield client, meta
        finally:
            await meta.stop()
            await runtime.close()


def report(pod: dict[str, Any]) -> dict[str, Any] | None:
    raw = (pod["metadata"].get("annotations") or {}).get(KEY)
    return json.loads(raw)["containers"][0] if raw else None


def reported_current(env_hash: int):
    def check(pod: dict[str, Any]) -> bool:
        entry, status = report(pod), pod["status"]["containerStatuses"][0]
        return (
            entry is not None
            and entry["containerID"] == status["containerID"]
            and entry["hashes"].get("extractedEnvFromMetadataHash") == env_hash
        )

    return check


async def env_pod(client) -> dict[str, Any]:
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "env-pod",
            "namespace": NS,
            # SidecarSet-injected pods are reported like pods of Kruise workloads.
            "annotations": {"test-env": "foo", "kruise.io/sidecarset-hash": "{}"},
        },
        "spec": {
            "nodeName": NODE,
            "terminationGracePeriodSeconds": 2,
            "containers": [
                {
                    "name": "main",
                    "image": "nginx:alpine",
                    "env": [
                        {
                            "name": "TEST_ENV",
                            "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['test-env']"}},
                        }
                    ],
                }
            ],
        },
    }
    await client.create(PODS, body)
    return await until_fetched(lambda: client.get(PODS, "env-pod", NS), ready, 30.0)


async def test_report_then_restart_only_for_an_in_place_update(node):
    client, meta = node
    await env_pod(client)
    first = await until_fetched(lambda: client.get(PODS, "env-pod", NS), reported_current(HASH_FOO))
    entry = report(first)
    assert entry is not None and entry["name"] == "main" and entry["restartCount"] == 0
    # the simulated kubelet labels the container with kubelet 1.31+'s hash (name and image), as a real one
    (spec,) = first["spec"]["containers"]
    assert entry["hashes"]["plainHash"] == kubelet_container_hash(spec)

    # A label/annotation edit on a running pod restarts nothing.
    edited = await client.patch(
        PODS, "env-pod", {"metadata": {"annotations": {"test-env": "bar"}}}, NS, patch_type=PatchType.MERGE
    )
    edited_rv = int(edited["metadata"]["resourceVersion"])
    await until_fetched(
        lambda: _seen(meta, edited), lambda seen: any(rv >= edited_rv for rv in seen), timeout=30.0
    )
    assert meta.restarter.controller.queue.waiting() == 0
    still = await client.get(PODS, "env-pod", NS)
    assert still["status"]["containerStatuses"][0]["containerID"] == entry["containerID"]
    assert report(still) == entry

    # kruise-manager starts an in-place update: InPlaceUpdateReady False. The stale container restarts and
    # the new one is reported with the hash of the values it now has.
    await client.patch(
        PODS,
        "env-pod",
        {"status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "False", "reason": "Start"}]}},
        NS,
        patch_type=PatchType.STRATEGIC,
        subresource="status",
    )
    done = await until_fetched(
        lambda: client.get(PODS, "env-pod", NS), reported_current(HASH_BAR), timeout=60.0
    )
    status = done["status"]["containerStatuses"][0]
    assert status["restartCount"] == 1 and status["containerID"] != entry["containerID"]
    assert done["metadata"]["uid"] == first["metadata"]["uid"]
    assert report(done)["restartCount"] == 1


async def _seen(meta: RecordingController, pod: dict[str, Any]) -> list[int]:
    return [rv for key, rv in meta.seen if key == object_key(pod)]


async def test_pods_of_other_controllers_get_no_report(node):
    client, meta = node
    body = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "plain", "namespace": NS},
        "spec": {"nodeName": NODE, "containers": [{"name": "main", "image": "nginx:alpine"}]},
    }
    await client.create(PODS, body)
    running = await until_fetched(lambda: client.get(PODS, "plain", NS), ready, 30.0)
    running_rv = int(running["metadata"]["resourceVersion"])

    async def cached_rv() -> int:
        cached = meta.pods.get(f"{NS}/plain")
        return int(cached["metadata"]["resourceVersion"]) if cached else 0

    # The daemon's cache (and so its event handlers) has every change up to the running pod ...
    await until_fetched(cached_rv, lambda rv: rv >= running_rv)
    # ... and none of them queued the pod: it is nobody's in Kruise.
    assert meta.controller.queue.ready_at(f"{NS}/plain") is None and len(meta.controller.queue) == 0
    assert all(key != f"{NS}/plain" for key, _ in meta.seen)
    assert report(await client.get(PODS, "plain", NS)) is None
    # Once it counts as SidecarSet-injected, its next change gets it reported.
    await client.patch(PODS, "plain", {"metadata": {"annotations": {"kruise.io/sidecarset-hash": "{}"}}}, NS)
    await until_fetched(lambda: client.get(PODS, "plain", NS), lambda p: report(p) is not None)
