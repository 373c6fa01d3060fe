"""PersistentVolumeClaim expansion end to end (emulator + simulator), as Kubernetes 1.33 does it:
a bound claim of an expandable class grows (Resizing, then FileSystemResizePending while a running
pod mounts it, then capacity follows); shrinking and classes without allowVolumeExpansion are refused.
Driven through kruise's client and the kubernetes-asyncio client."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config
from kubernetes_asyncio.client.exceptions import ApiException
from simulator_testkit import Cluster, condition, is_ready, pod_manifest

from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Forbidden, Invalid
from kruise.kube.resources import PVCS, STORAGE_CLASSES
from kruise.sandbox.simulator import Timing
from kruise.sandbox.simulator.volumes import PROVISIONER

RESIZE_RULE = (
    "only dynamically provisioned pvc can be resized and "
    "the storageclass that provisions the pvc must support resize"
)


@pytest.fixture
def simulator_options() -> dict[str, Any]:
    # half a real second per resize step at the test speed, so each step is observable
    timing = Timing(run_seconds=20.0, volume_resize_seconds=50.0, filesystem_resize_seconds=50.0)
    return {"nodes": 1, "timing": timing}


@pytest.fixture
async def kclient(sandbox_emulator):
    async with await Client.from_kubeconfig(sandbox_emulator.kubeconfig) as c:
        yield c


def _class(name: str, expandable: bool | None) -> dict[str, Any]:
    sc: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass"}
    sc |= {"metadata": {"name": name}, "provisioner": PROVISIONER}
    if expandable is not None:
        sc["allowVolumeExpansion"] = expandable
    return sc


def _claim(name: str, sc: str, storage: str = "1Gi") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": sc,
            "resources": {"requests": {"storage": storage}},
        },
    }


def _storage(claim: dict[str, Any], group: str) -> Any:
    return ((claim.get("status") or {}).get(group) or {}).get("storage")


async def _bound(cluster: Cluster, name: str) -> dict[str, Any]:
    return await cluster.wait_for(
        "persistentvolumeclaims", name, lambda c: c["status"].get("phase") == "Bound"
    )


async def _grow(kclient: Client, name: str, storage: str) -> dict[str, Any]:
    body = {"spec": {"resources": {"requests": {"storage": storage}}}}
    return await kclient.patch(PVCS, name, body, namespace="default", patch_type=PatchType.MERGE)


async def test_bound_claim_grows_and_capacity_follows(cluster: Cluster, kclient: Client):
    await kclient.create(STORAGE_CLASSES, _class("expandable", True))
    await kclient.create(PVCS, _claim("data", "expandable"), namespace="default")
    claim = await _bound(cluster, "data")
    assert claim["spec"]["volumeName"] == f"pvc-{claim['metadata']['uid']}"
    assert _storage(claim, "capacity") == "1Gi"
    assert claim["status"]["accessModes"] == ["ReadWriteOnce"]
    volume = {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
    await cluster.create(pod_manifest("user", volumes=[volume]))
    await cluster.wait_for("pods", "user", is_ready)

    grown = await _grow(kclient, "data", "3Gi")
    assert grown["spec"]["resources"]["requests"]["storage"] == "3Gi"
    resizing = await cluster.wait_for("persistentvolumeclaims", "data", lambda c: condition(c, "Resizing"))
    assert _storage(resizing, "allocatedResourceStatuses") == "ControllerResizeInProgress"
    assert _storage(resizing, "allocatedResources") == "3Gi"
    assert _storage(resizing, "capacity") == "1Gi"
    pending = await cluster.wait_for(
        "persistentvolumeclaims", "data", lambda c: condition(c, "FileSystemResizePending")
    )
    assert condition(pending, "Resizing") is None
    assert _storage(pending, "allocatedResourceStatuses") in ("NodeResizePending", "NodeResizeInProgress")
    done = await cluster.wait_for(
        "persistentvolumeclaims", "data", lambda c: _storage(c, "capacity") == "3Gi"
    )
    assert "conditions" not in done["status"]
    assert "allocatedResourceStatuses" not in done["status"]
    assert _storage(done, "allocatedResources") == "3Gi"

    with pytest.raises(Invalid) as refused:
        await _grow(kclient, "data", "2Gi")
    assert "spec.resources.requests.storage: Forbidden: field can not be less than status.capacity" in str(
        refused.value
    )


async def test_claim_no_pod_mounts_waits_for_the_file_system_resize(cluster: Cluster, kclient: Client):
    await kclient.create(STORAGE_CLASSES, _class("expandable", True))
    await kclient.create(PVCS, _claim("idle", "expandable"), namespace="default")
    await _bound(cluster, "idle")
    await _grow(kclient, "idle", "2Gi")
    pending = await cluster.wait_for(
        "persistentvolumeclaims",
        "idle",
        lambda c: _storage(c, "allocatedResourceStatuses") == "NodeResizePending",
    )
    assert condition(pending, "FileSystemResizePending")["message"].startswith(
        "Waiting for user to (re-)start"
    )
    assert _storage(pending, "capacity") == "1Gi"
    volume = {"name": "data", "persistentVolumeClaim": {"claimName": "idle"}}
    await cluster.create(pod_manifest("late", volumes=[volume]))
    await cluster.wait_for("persistentvolumeclaims", "idle", lambda c: _storage(c, "capacity") == "2Gi")


@pytest.mark.parametrize("expandable", [False, None])
async def test_class_without_expansion_refuses_growth(cluster: Cluster, kclient: Client, expandable):
    await kclient.create(STORAGE_CLASSES, _class("fixed", expandable))
    await kclient.create(PVCS, _claim("pinned", "fixed"), namespace="default")
    await _bound(cluster, "pinned")
    with pytest.raises(Forbidden) as refused:
        await _grow(kclient, "pinned", "2Gi")
    assert f'persistentvolumeclaims "pinned" is forbidden: {RESIZE_RULE}' in str(refused.value)


async def test_pending_claim_spec_is_immutable(kclient: Client):
    # no class the simulator provisions: the claim stays Pending
    await kclient.create(PVCS, _claim("waiting", "nobody"), namespace="default")
    with pytest.raises(Invalid) as refused:
        await _grow(kclient, "waiting", "2Gi")
    assert (
        "spec: Forbidden: spec is immutable after creation except resources.requests and "
        "volumeAttributesClassName for bound claims" in str(refused.value)
    )


async def test_kubernetes_asyncio_resize_calls(cluster: Cluster, sandbox_emulator):
    cfg = k8s.Configuration()
    await config.load_kube_config(config_file=str(sandbox_emulator.kubeconfig), client_configuration=cfg)
    async with k8s.ApiClient(cfg) as api:
        storage, core = k8s.StorageV1Api(api), k8s.CoreV1Api(api)
        await storage.create_storage_class(_class("expandable", True))
        await storage.create_storage_class(_class("fixed", False))
        await core.create_namespaced_persistent_volume_claim("default", _claim("a", "expandable"))
        await core.create_namespaced_persistent_volume_claim("default", _claim("b", "fixed"))
        await _bound(cluster, "a")
        await _bound(cluster, "b")
        grow = {"spec": {"resources": {"requests": {"storage": "5Gi"}}}}
        await core.patch_namespaced_persistent_volume_claim("a", "default", grow)
        await cluster.wait_for(
            "persistentvolumeclaims", "a", lambda c: _storage(c, "allocatedResources") == "5Gi"
        )
        with pytest.raises(ApiException) as forbidden:
            await core.patch_namespaced_persistent_volume_claim("b", "default", grow)
        assert forbidden.value.status == 403
        assert RESIZE_RULE in forbidden.value.body
        shrink = {"spec": {"resources": {"requests": {"storage": "512Mi"}}}}
        with pytest.raises(ApiException) as invalid:
            await core.patch_namespaced_persistent_volume_claim("b", "default", shrink)
        assert invalid.value.status == 422
        assert "field can not be less than status.capacity" in invalid.value.body


async def test_a_claim_naming_no_class_binds_through_the_default_class(cluster: Cluster, kclient: Client):
    """The DefaultStorageClass admission plugin: upstream's StatefulSet claim templates name no class and
    bind on kind through its default `standard`; `""` keeps a claim classless (and unbound)."""
    default = _class("standard", False)
    default["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    await kclient.create(STORAGE_CLASSES, default)
    classless = _claim("datadir-ss-0", "")
    del classless["spec"]["storageClassName"]
    created = await kclient.create(PVCS, classless, namespace="default")
    assert created["spec"]["storageClassName"] == "standard"
    await _bound(cluster, "datadir-ss-0")
    none = await kclient.create(PVCS, _claim("no-class", ""), namespace="default")
    assert none["spec"]["storageClassName"] == ""
