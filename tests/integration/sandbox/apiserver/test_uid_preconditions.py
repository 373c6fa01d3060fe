"""Conformance: writes aimed at another incarnation of an object (uid / resourceVersion preconditions).

A PUT body's metadata.uid is a storage precondition: 409 Conflict with etcd's invalid-object text,
checked before the resourceVersion. A PATCH has no precondition; a patched uid that differs fails
update validation (422, field is immutable) — unless the status strategy of a custom resource puts
the stored object back first. DeleteOptions.preconditions answer with rest.BeforeDelete's 409.
"""

from __future__ import annotations

import copy

import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from tests.integration.sandbox.apiserver.conftest import GROUP
from tests.kit.pods import pod

CMS = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
WRONG = "00000000-0000-0000-0000-000000000000"


@pytest.fixture
async def client(emulator):
    c = Client(emulator.kubeconfig)
    yield c
    await c.close()


def cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def nginx_pod(name: str) -> dict:
    """A pod to create through a namespaced path (so it names no namespace itself)."""
    return pod(name, namespace=None, containers=[{"name": "c", "image": "nginx"}], typed=True)


def precondition_text(key: str, wanted: str, actual: str) -> str:
    return (
        f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: "
        f"Precondition failed: UID in precondition: {wanted}, UID in object meta: {actual}"
    )


async def test_put_with_another_uid_is_a_precondition_conflict(client):
    created = await client.create(CMS, cm("a"))
    body = copy.deepcopy(created)
    body["metadata"]["uid"] = WRONG
    body["data"] = {"k": "changed"}
    with pytest.raises(ApiError) as exc:
        await client.replace(f"{CMS}/a", body)
    assert exc.value.status == 409 and exc.value.reason == "Conflict"
    assert exc.value.message == 'Operation cannot be fulfilled on configmaps "a": ' + precondition_text(
        "/registry/configmaps/default/a", WRONG, created["metadata"]["uid"]
    )
    # checked before the resourceVersion: a stale body with the wrong uid names the uid
    body["metadata"]["resourceVersion"] = "1"
    with pytest.raises(ApiError) as exc:
        await client.replace(f"{CMS}/a", body)
    assert "UID in precondition" in exc.value.message
    # the right uid (or none) goes through
    body["metadata"]["uid"] = created["metadata"]["uid"]
    body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    assert (await client.replace(f"{CMS}/a", body))["data"] == {"k": "changed"}
    assert (await client.get(f"{CMS}/a"))["metadata"]["uid"] == created["metadata"]["uid"]


async def test_put_creating_with_a_uid_finds_no_object_with_it(client):
    with pytest.raises(ApiError) as exc:
        await client.replace(f"{CMS}/new", {**cm("new"), "metadata": {"name": "new", "uid": WRONG}})
    assert exc.value.status == 409
    assert exc.value.message.endswith(precondition_text("/registry/configmaps/default/new", WRONG, ""))


async def test_put_status_with_another_uid_is_refused_for_builtin_and_custom(client, gadgets):
    created = await client.create(PODS, nginx_pod("p"))
    body = copy.deepcopy(created)
    body["metadata"]["uid"] = WRONG
    with pytest.raises(ApiError) as exc:
        await client.replace(f"{PODS}/p/status", body)
    assert exc.value.status == 409 and "Key: /registry/pods/default/p," in exc.value.message
    gadget = await client.create(
        gadgets, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}}
    )
    gadget["metadata"]["uid"] = WRONG
    gadget["status"] = {"phase": "x"}
    with pytest.raises(ApiError) as exc:
        await client.replace(f"{gadgets}/g/status", gadget)
    assert exc.value.status == 409
    assert f"Key: /registry/{GROUP}/gadgets/default/g," in exc.value.message


async def test_strategic_patch_carrying_another_uid_is_invalid(client):
    """kruise's adoption / release patches carry the pod's uid: a recreated pod refuses them."""
    created = await client.create(PODS, nginx_pod("adoptee"))
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "rs-uid", "controller": True}
    with pytest.raises(ApiError) as exc:
        await client.patch(
            f"{PODS}/adoptee", {"metadata": {"ownerReferences": [owner], "uid": WRONG}}, STRATEGIC
        )
    assert exc.value.status == 422 and exc.value.reason == "Invalid"
    assert exc.value.message == (
        f'Pod "adoptee" is invalid: metadata.uid: Invalid value: "{WRONG}": field is immutable'
    )
    assert "ownerReferences" not in (await client.get(f"{PODS}/adoptee"))["metadata"]
    adopted = await client.patch(
        f"{PODS}/adoptee",
        {"metadata": {"ownerReferences": [owner], "uid": created["metadata"]["uid"]}},
        STRATEGIC,
    )
    assert adopted["metadata"]["ownerReferences"][0]["uid"] == "rs-uid"


async def test_patch_of_custom_resource_uid_invalid_but_status_patch_ignores_it(client, gadgets):
    gadget = await client.create(
        gadgets, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}}
    )
    with pytest.raises(ApiError) as exc:
        await client.patch(f"{gadgets}/g", {"metadata": {"uid": WRONG}, "spec": {"x": 1}})
    assert exc.value.status == 422
    assert exc.value.message == (
        f'Gadget.{GROUP} "g" is invalid: metadata.uid: Invalid value: "{WRONG}": field is immutable'
    )
    # the custom resource status strategy starts from the stored object: the patched uid is dropped
    out = await client.patch(f"{gadgets}/g/status", {"metadata": {"uid": WRONG}, "status": {"phase": "x"}})
    assert out["metadata"]["uid"] == gadget["metadata"]["uid"] and out["status"] == {"phase": "x"}


async def test_apply_creating_with_a_uid_is_a_conflict(client):
    with pytest.raises(ApiError) as exc:
        await client.request(
            "PATCH",
            f"{CMS}/applied",
            body={**cm("applied"), "metadata": {"name": "applied", "uid": WRONG}},
            params={"fieldManager": "test"},
            content_type=APPLY,
        )
    assert exc.value.status == 409
    assert exc.value.message == (
        'Operation cannot be fulfilled on configmaps "applied": uid mismatch: the provided object '
        f"specified uid {WRONG}, and no existing object was found"
    )


async def test_delete_preconditions_name_the_kind(client, gadgets):
    gadget = await client.create(
        gadgets, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}}
    )
    meta = gadget["metadata"]
    with pytest.raises(ApiError) as exc:
        await client.request("DELETE", f"{gadgets}/g", body={"preconditions": {"uid": WRONG}})
    assert exc.value.status == 409 and exc.value.message == (
        f'Operation cannot be fulfilled on Gadget.{GROUP} "g": the UID in the precondition ({WRONG}) does '
        f"not match the UID in record ({meta['uid']}). The object might have been deleted and then recreated"
    )
    with pytest.raises(ApiError) as exc:
        await client.request("DELETE", f"{gadgets}/g", body={"preconditions": {"resourceVersion": "1"}})
    assert exc.value.status == 409 and exc.value.message == (
        f'Operation cannot be fulfilled on Gadget.{GROUP} "g": the ResourceVersion in the precondition (1) '
        f"does not match the ResourceVersion in record ({meta['resourceVersion']}). "
        "The object might have been modified"
    )
    await client.request(
        "DELETE",
        f"{gadgets}/g",
        body={"preconditions": {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}},
    )
    with pytest.raises(ApiError) as exc:
        await client.get(f"{gadgets}/g")
    assert exc.value.status == 404
