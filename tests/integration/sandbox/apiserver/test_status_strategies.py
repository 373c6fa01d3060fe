"""Conformance: what a write to `/status` stores, kind by kind (the status strategies' PrepareForUpdate).

A custom resource's status write keeps the whole stored object but its status (labels, annotations,
finalizers, ownerReferences and spec in the body are ignored); CustomResourceDefinition resets spec,
labels, annotations and ownerReferences; Deployment spec and labels; Pod spec, ownerReferences and
deletionTimestamp; every other built-in kind only its spec — the rest of the body's metadata is what
gets stored.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from tests.integration.sandbox.apiserver.conftest import CRDS, GROUP

OWNER = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "0000-1111"}
TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}
SELECTOR = {"matchLabels": {"app": "x"}}


@pytest.fixture
async def client(emulator):
    c = Client(emulator.kubeconfig)
    yield c
    await c.close()


def tampered(stored: dict[str, Any]) -> dict[str, Any]:
    """The stored object with every metadata list/map a status write might try to move, and a new spec."""
    body = copy.deepcopy(stored)
    meta = body["metadata"]
    meta["labels"] = {"moved": "label"}
    meta["annotations"] = {"moved": "annotation"}
    meta["finalizers"] = ["example.com/moved"]
    meta["ownerReferences"] = [OWNER]
    body["spec"] = {**(body.get("spec") or {}), "tampered": True} if stored.get("spec") is not None else None
    if body["spec"] is None:
        del body["spec"]
    body["status"] = {**(body.get("status") or {}), "observedGeneration": 7}
    return body


async def test_custom_resource_status_write_takes_only_status(client, gadgets):
    created = await client.create(
        gadgets,
        {
            "apiVersion": f"{GROUP}/v1",
            "kind": "Gadget",
            "metadata": {
                "name": "g",
                "labels": {"keep": "me"},
                "annotations": {"a": "1"},
                "finalizers": ["x/y"],
            },
            "spec": {"size": 1},
        },
    )
    body = tampered(created)
    body["status"] = {"phase": "Ready"}
    stored = await client.replace(f"{gadgets}/g/status", body)
    assert stored["status"] == {"phase": "Ready"}
    assert stored["spec"] == {"size": 1}
    meta = stored["metadata"]
    assert meta["labels"] == {"keep": "me"} and meta["annotations"] == {"a": "1"}
    assert meta["finalizers"] == ["x/y"] and "ownerReferences" not in meta
    assert meta["generation"] == 1

    # a merge patch of /status that also names metadata changes only the status
    patched = await client.patch(
        f"{gadgets}/g/status",
        {"metadata": {"labels": {"keep": None, "new": "x"}, "finalizers": None}, "status": {"phase": "Done"}},
    )
    assert patched["status"] == {"phase": "Done"}
    assert patched["metadata"]["labels"] == {"keep": "me"} and patched["metadata"]["finalizers"] == ["x/y"]

    # a body without status removes it (the strategy copies status as it is, absent included)
    gone = copy.deepcopy(patched)
    del gone["status"]
    assert "status" not in await client.replace(f"{gadgets}/g/status", gone)


async def test_crd_status_write_resets_spec_labels_annotations_owners(client, gadgets):
    name = f"gadgets.{GROUP}"
    for _ in range(10):
        # the emulator's CRD controller may still be writing the new CRD's conditions: a Conflict is
        # retried from a fresh read, as any client of /status would
        stored = await client.get(f"{CRDS}/{name}")
        body = tampered(stored)
        body["spec"] = copy.deepcopy(stored["spec"])
        body["spec"]["names"]["shortNames"] = ["gd"]
        try:
            out = await client.replace(f"{CRDS}/{name}/status", body)
            break
        except ApiError as err:
            if err.status != 409:
                raise
    else:
        raise AssertionError("10 conflicting status writes in a row")
    meta = out["metadata"]
    assert out["spec"] == stored["spec"]
    assert meta.get("labels") == stored["metadata"].get("labels")
    assert meta.get("annotations") == stored["metadata"].get("annotations")
    assert "ownerReferences" not in meta
    assert meta["finalizers"] == ["example.com/moved"]  # not reset by the CRD status strategy


def deployment(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"orig": "1"}},
        "spec": {"replicas": 1, "selector": SELECTOR, "template": TEMPLATE},
    }


# (collection path, object) for every built-in kind whose status strategy resets only the spec
SPEC_ONLY = {
    "replicaset": (
        "/apis/apps/v1/namespaces/default/replicasets",
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    ),
    "statefulset": (
        "/apis/apps/v1/namespaces/default/statefulsets",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "spec": {"selector": SELECTOR, "template": TEMPLATE, "serviceName": "s"},
        },
    ),
    "daemonset": (
        "/apis/apps/v1/namespaces/default/daemonsets",
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"selector": SELECTOR, "template": TEMPLATE}},
    ),
    "job": (
        "/apis/batch/v1/namespaces/default/jobs",
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "spec": {
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
                }
            },
        },
    ),
    "service": (
        "/api/v1/namespaces/default/services",
        {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [{"port": 80}], "selector": {"app": "x"}}},
    ),
    "pvc": (
        "/api/v1/namespaces/default/persistentvolumeclaims",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    ),
    "pdb": (
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "spec": {"minAvailable": 1, "selector": SELECTOR},
        },
    ),
    "namespace": ("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace"}),
}


@pytest.mark.parametrize("kind", sorted(SPEC_ONLY))
async def test_builtin_status_write_resets_only_spec(client, kind):
    path, obj = SPEC_ONLY[kind]
    obj = copy.deepcopy(obj)
    obj["metadata"] = {"name": f"s-{kind}", "labels": {"orig": "1"}}
    created = await client.create(path, obj)
    body = tampered(created)
    out = await client.replace(f"{path}/s-{kind}/status", body)
    meta = out["metadata"]
    assert out.get("spec") == created.get("spec")
    assert meta["labels"] == {"moved": "label"} and meta["annotations"] == {"moved": "annotation"}
    assert meta["finalizers"] == ["example.com/moved"] and meta["ownerReferences"] == [OWNER]
    assert out["status"]["observedGeneration"] == 7
    assert meta.get("generation") == created["metadata"].get("generation")


async def test_deployment_status_write_resets_spec_and_labels(client):
    path = "/apis/apps/v1/namespaces/default/deployments"
    created = await client.create(path, deployment("d"))
    out = await client.replace(f"{path}/d/status", tampered(created))
    meta = out["metadata"]
    assert out["spec"] == created["spec"] and meta["labels"] == {"orig": "1"}
    assert meta["annotations"] == {"moved": "annotation"} and meta["finalizers"] == ["example.com/moved"]
    assert meta["ownerReferences"] == [OWNER]


async def test_pod_status_write_resets_spec_and_owner_references(client):
    path = "/api/v1/namespaces/default/pods"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"orig": "1"}}}
    created = await client.create(path, {**pod, "spec": TEMPLATE["spec"]})
    out = await client.replace(f"{path}/p/status", tampered(created))
    meta = out["metadata"]
    assert out["spec"] == created["spec"] and "ownerReferences" not in meta
    assert meta["labels"] == {"moved": "label"} and meta["finalizers"] == ["example.com/moved"]
