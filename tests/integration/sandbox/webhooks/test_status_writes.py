"""Conformance: writes to pods/status change status and metadata, never spec or owners.

kube-apiserver's podStatusStrategy.PrepareForUpdate copies the stored spec and ownerReferences
over the body (after mutating admission, so a webhook cannot change them either), backfills the
immutable QoS class, and ValidatePodStatusUpdate never looks at the spec. Whatever spec the body
or a webhook carries is ignored, never refused.
"""

from __future__ import annotations

import copy

import pytest
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

from kruise.sandbox.simulator.client import MERGE_PATCH, ApiError, Client
from tests.kit.webhook_server import patch_response

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
PODS = "/api/v1/namespaces/default/pods"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STAMP = "lifecycle.apps.kruise.io/timestamp"


def app_pod(name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            # an owner of a kind nobody serves: the garbage collector cannot look it up and leaves the
            # pod alone (a ConfigMap owner that does not exist would have the pod collected)
            "ownerReferences": [
                {"apiVersion": "example.com/v1", "kind": "Owner", "name": "owner", "uid": "1111-2222"}
            ],
        },
        "spec": {
            "containers": [{"name": "main", "image": "nginx:1.25", "resources": {"requests": {"cpu": "10m"}}}]
        },
    }


@pytest.fixture
async def client(sandbox):
    c = Client(sandbox.kubeconfig)
    yield c
    await c.close()


@pytest.fixture
async def core(sandbox):
    cfg = k8s.Configuration()
    await k8s_config.load_kube_config(config_file=str(sandbox.kubeconfig), client_configuration=cfg)
    async with k8s.ApiClient(cfg) as api:
        yield k8s.CoreV1Api(api)


async def test_update_status_ignores_spec_and_owner_references(client):
    created = await client.create(PODS, app_pod("web"))
    body = copy.deepcopy(created)
    body["spec"]["containers"] = []  # invalid as a spec; must not matter
    body["spec"]["activeDeadlineSeconds"] = 5
    body["metadata"]["ownerReferences"] = []
    body["metadata"]["labels"] = {"seen": "kubelet"}
    body["status"] = {"phase": "Running", "podIP": "10.0.0.7"}
    updated = await client.replace(f"{PODS}/web/status", body)
    stored = await client.get(f"{PODS}/web")
    for obj in (updated, stored):
        assert obj["spec"] == created["spec"]
        assert obj["metadata"]["ownerReferences"] == created["metadata"]["ownerReferences"]
        assert obj["metadata"]["labels"] == {"seen": "kubelet"}
        assert obj["status"]["phase"] == "Running" and obj["status"]["podIP"] == "10.0.0.7"
        assert obj["status"]["qosClass"] == "Burstable", "QoS class is backfilled from the stored pod"


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        (
            MERGE_PATCH,
            {"spec": {"containers": None, "nodeName": "elsewhere"}, "status": {"phase": "Running"}},
        ),
        (
            STRATEGIC,
            {
                "spec": {"containers": [{"name": "extra", "image": "busybox"}]},
                "status": {"phase": "Running"},
            },
        ),
        (
            JSON_PATCH,
            [
                {"op": "replace", "path": "/spec/containers/0/name", "value": "renamed"},
                {"op": "add", "path": "/status/phase", "value": "Running"},
            ],
        ),
    ],
    ids=["merge", "strategic", "json"],
)
async def test_patch_status_ignores_spec(client, content_type, patch):
    created = await client.create(PODS, app_pod("web"))
    patched = await client.patch(f"{PODS}/web/status", patch, content_type)
    assert patched["spec"] == created["spec"]
    assert patched["status"]["phase"] == "Running"
    assert (await client.get(f"{PODS}/web"))["spec"] == created["spec"]


async def test_webhook_patching_spec_on_status_is_ignored(server, certificates, client):
    """Mutating admission precedes PrepareForUpdate, so a spec patch on pods/status is dropped."""
    server.routes["/status"] = lambda req: patch_response(
        [
            {"op": "add", "path": "/spec/containers/-", "value": {"name": "late", "image": "busybox"}},
            {"op": "add", "path": "/status/message", "value": "mutated"},
        ]
    )
    await client.create(
        MUTATING,
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "status"},
            "webhooks": [
                {
                    "name": "status.kruise.io",
                    "clientConfig": {
                        "service": {"namespace": "kruise-system", "name": "hooks", "path": "/status"},
                        "caBundle": certificates.ca_bundle,
                    },
                    "rules": [
                        {
                            "operations": ["UPDATE"],
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": ["pods/status"],
                        }
                    ],
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                }
            ],
        },
    )
    created = await client.create(PODS, app_pod("web"))
    patched = await client.patch(f"{PODS}/web/status", {"status": {"phase": "Running"}}, MERGE_PATCH)
    assert server.received["/status"], "the webhook was called"
    assert patched["spec"] == created["spec"]
    assert patched["status"]["message"] == "mutated"


async def test_kubernetes_asyncio_status_writes(client, core):
    created = await client.create(PODS, app_pod("web"))
    pod = await core.read_namespaced_pod_status("web", "default")
    pod.spec.containers[0].image = "nginx:9.9"
    pod.status.phase = "Running"
    replaced = await core.replace_namespaced_pod_status("web", "default", pod)
    assert replaced.spec.containers[0].image == "nginx:1.25"
    assert replaced.status.phase == "Running"
    patched = await core.patch_namespaced_pod_status(
        "web",
        "default",
        {"spec": {"containers": [{"name": "main", "image": "nginx:8.8"}]}, "status": {"phase": "Succeeded"}},
    )
    assert patched.spec.containers[0].image == "nginx:1.25"
    assert patched.status.phase == "Succeeded"
    assert (await client.get(f"{PODS}/web"))["spec"] == created["spec"]


async def test_patch_status_persists_labels_and_annotations(client):
    """podStatusStrategy resets only spec, deletionTimestamp and ownerReferences: a controller can
    move a lifecycle label in the same pods/status patch as a condition (issue 18)."""
    created = await client.create(PODS, app_pod("web"))
    patch = {
        "metadata": {
            "labels": {"lifecycle.apps.kruise.io/state": "Normal"},
            "annotations": {STAMP: "2024-01-01T00:00:00Z"},
            "ownerReferences": None,
        },
        "status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "True"}]},
    }
    patched = await client.patch(f"{PODS}/web/status", patch, STRATEGIC)
    stored = await client.get(f"{PODS}/web")
    for obj in (patched, stored):
        assert obj["metadata"]["labels"] == {"lifecycle.apps.kruise.io/state": "Normal"}
        assert obj["metadata"]["annotations"] == {STAMP: "2024-01-01T00:00:00Z"}
        assert obj["metadata"]["ownerReferences"] == created["metadata"]["ownerReferences"]
        assert {"type": "InPlaceUpdateReady", "status": "True"} in obj["status"]["conditions"]


async def test_update_status_takes_metadata_from_the_body(client):
    """An update replaces labels, annotations and finalizers with the body's: absent means removed."""
    pod = app_pod("web")
    pod["metadata"]["labels"] = {"app": "web"}
    pod["metadata"]["annotations"] = {"note": "x"}
    created = await client.create(PODS, pod)
    body = copy.deepcopy(created)
    del body["metadata"]["labels"], body["metadata"]["annotations"]
    body["metadata"]["finalizers"] = ["example.com/hold"]
    replaced = await client.replace(f"{PODS}/web/status", body)
    assert "labels" not in replaced["metadata"] and "annotations" not in replaced["metadata"]
    assert replaced["metadata"]["finalizers"] == ["example.com/hold"]


async def test_status_write_keeps_deletion_and_refuses_new_finalizers_while_deleting(client):
    pod = app_pod("web")
    pod["metadata"]["finalizers"] = ["example.com/hold"]
    pod["spec"]["nodeName"] = "nowhere"  # scheduled: deletion is graceful, the pod stays
    await client.create(PODS, pod)
    await client.delete(f"{PODS}/web")
    deleting = await client.get(f"{PODS}/web")
    stamp = deleting["metadata"]["deletionTimestamp"]

    body = copy.deepcopy(deleting)
    body["metadata"].pop("deletionTimestamp")
    body["metadata"]["labels"] = {"seen": "yes"}
    kept = await client.replace(f"{PODS}/web/status", body)
    assert kept["metadata"]["deletionTimestamp"] == stamp and kept["metadata"]["labels"] == {"seen": "yes"}

    body = copy.deepcopy(kept)
    body["metadata"]["finalizers"].append("example.com/late")
    with pytest.raises(ApiError, match="no new finalizers can be added"):
        await client.replace(f"{PODS}/web/status", body)
