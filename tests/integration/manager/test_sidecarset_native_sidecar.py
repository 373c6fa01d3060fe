"""SidecarSet with a native sidecar (an initContainer with `restartPolicy: Always`), as upstream 1.9.

Upstream never upgrades native sidecars in place: its validating webhook refuses such a SidecarSet
unless `updateStrategy.type` is `NotUpdate` (openkruise/kruise#1671 closed as wontfix). A new sidecar
image therefore reaches only pods created afterwards; the running pods keep theirs and stop counting
as updated, and the controller neither touches nor marks them.
"""

from __future__ import annotations

import copy

import pytest

from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.control.sidecarset.injection import inject
from kruise.kube.resources import PODS, SIDECARSETS
from kruise.manager.controllers.sidecarset import SETUP
from tests.kit.pods import pod

NS = "default"
NAME = "native-sidecarset"


@pytest.fixture
def controller_setups():
    return [SETUP]


def native_sidecarset():
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "SidecarSet",
        "metadata": {"name": NAME},
        "spec": {
            "selector": {"matchLabels": {"app": "nginx"}},
            "updateStrategy": {"type": "NotUpdate"},
            "initContainers": [{"name": "proxy", "image": "busybox:1.34", "command": ["sleep", "999d"],
                                "restartPolicy": "Always"}],
        },
    }  # fmt: skip
    set_hash_annotations(body)  # what kruise-webhook's SidecarSet mutation adds
    return body


def injected_pod(name, sidecar_set):
    """An nginx pod with a setup init container, as kruise-webhook admits it on CREATE: with
    `sidecar_set` injected."""
    body = pod(
        name,
        namespace=NS,
        labels={"app": "nginx"},
        initContainers=[{"name": "setup", "image": "busybox:1.36"}],
        containers=[{"name": "nginx", "image": "nginx:1.7.9"}],
        typed=True,
    )
    assert inject(body, [sidecar_set])  # what kruise-webhook does on pod CREATE
    return body


def init_container(p, name):
    return next(c for c in p["spec"]["initContainers"] if c["name"] == name)


def init_status(p, name):
    return next(s for s in p["status"]["initContainerStatuses"] if s["name"] == name)


def condition(p, kind):
    return next((c for c in (p.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


async def test_native_sidecar_is_injected_run_and_never_upgraded_in_place(kruise_cluster):
    client = kruise_cluster.client
    created = await client.create(SIDECARSETS, native_sidecarset())
    for name in ("n-1", "n-2"):
        await client.create(PODS, injected_pod(name, created))

    async def status():
        return (await client.get(SIDECARSETS, NAME)).get("status") or {}

    await kruise_cluster.until(
        status,
        lambda s: s.get("matchedPods") == 2 and s.get("updatedPods") == 2 and s.get("readyPods") == 2,
    )
    before = {n: await client.get(PODS, n, NS) for n in ("n-1", "n-2")}
    for p in before.values():
        # after the pod's own init containers; kubelet keeps it running next to the app
        assert [c["name"] for c in p["spec"]["initContainers"]] == ["setup", "proxy"]
        assert init_container(p, "proxy")["restartPolicy"] == "Always"
        assert "running" in init_status(p, "proxy")["state"]
        assert init_status(p, "setup")["state"]["terminated"]["reason"] == "Completed"

    changed = copy.deepcopy(await client.get(SIDECARSETS, NAME))
    changed["spec"]["initContainers"][0]["image"] = "busybox:1.35.0"
    set_hash_annotations(changed)
    generation = (await client.update(SIDECARSETS, changed))["metadata"]["generation"]
    outdated = await kruise_cluster.until(
        status, lambda s: s.get("observedGeneration") == generation and s.get("updatedPods") == 0
    )
    assert outdated["matchedPods"] == 2 and outdated["readyPods"] == 2 and outdated["updatedReadyPods"] == 0
    for name, old in before.items():
        now = await client.get(PODS, name, NS)
        assert now["metadata"]["uid"] == old["metadata"]["uid"]
        assert init_container(now, "proxy")["image"] == "busybox:1.34"
        assert init_status(now, "proxy")["restartCount"] == 0
        assert condition(now, "SidecarSetUpgradable") is None  # NotUpdate: the controller only counts
        assert "kruise.io/sidecarset-inplace-update-state" not in now["metadata"]["annotations"]

    fresh = await client.create(PODS, injected_pod("n-3", await client.get(SIDECARSETS, NAME)))
    assert init_container(fresh, "proxy")["image"] == "busybox:1.35.0"
    final = await kruise_cluster.until(
        status,
        lambda s: s.get("matchedPods") == 3 and s.get("updatedPods") == 1 and s.get("updatedReadyPods") == 1,
    )
    assert final["readyPods"] == 3
