"""matchPolicy Equivalent through the emulator: a Gadget served at v1 (storage) and v2, webhooks registered
for v1 only, requests made at v2.

As kube-apiserver does, the webhook is called with ``kind``/``resource`` v1 and ``requestKind``/
``requestResource`` v2, the objects converted to v1 (an apiVersion rewrite under conversion ``None``, the
CRD's conversion webhook under ``Webhook``), and a mutating patch lands in the stored object.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson
import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from tests.kit.webhook_server import Reply, patch_response

GROUP = "equiv.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
V1 = f"/apis/{GROUP}/v1/namespaces/default/gadgets"
V2 = f"/apis/{GROUP}/v2/namespaces/default/gadgets"
INT = {"type": "integer"}
FLAT = {"size": INT, "colour": {"type": "string"}}  # v1, and v2 under conversion None
NESTED = {"dimensions": {"type": "object", "properties": {"size": INT}}, "colour": {"type": "string"}}


def kind(version: str) -> dict[str, str]:
    return {"group": GROUP, "version": version, "kind": "Gadget"}


def resource(version: str) -> dict[str, str]:
    return {"group": GROUP, "version": version, "resource": "gadgets"}


def gadget_crd(ca_bundle: str, strategy: str) -> dict[str, Any]:
    def version(name: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "name": name,
            "served": True,
            "storage": name == "v1",
            "subresources": {"status": {}},
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": spec},
                        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
                    },
                }
            },
        }

    conversion: dict[str, Any] = {"strategy": strategy}
    if strategy == "Webhook":
        conversion["webhook"] = {
            "clientConfig": {
                "service": {"namespace": "kruise-system", "name": "hooks", "path": "/convert"},
                "caBundle": ca_bundle,
            },
            "conversionReviewVersions": ["v1"],
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [version("v1", FLAT), version("v2", NESTED if strategy == "Webhook" else FLAT)],
            "conversion": conversion,
        },
    }


def converted(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """The test's conversion webhook: v1 ``spec.size`` is v2 ``spec.dimensions.size``."""
    out = copy.deepcopy(obj)
    spec = out.setdefault("spec", {})
    if desired.endswith("/v2") and "size" in spec:
        spec["dimensions"] = {"size": spec.pop("size")}
    elif desired.endswith("/v1") and "dimensions" in spec:
        spec["size"] = spec.pop("dimensions").get("size")
    out["apiVersion"] = desired
    return out


def conversion_webhook(request: dict[str, Any]) -> Reply:
    response = {
        "uid": request["uid"],
        "convertedObjects": [converted(o, request["desiredAPIVersion"]) for o in request["objects"]],
        "result": {"status": "Success"},
    }
    body = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response}
    return Reply(body=orjson.dumps(body))


def configuration(kind_name: str, name: str, certificates, path: str, **extra: Any) -> dict[str, Any]:
    resources = extra.pop("resources", ["gadgets"])
    operations = extra.pop("operations", ["CREATE", "UPDATE"])
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind_name,
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": f"{name}.example.com",
                "clientConfig": {
                    "service": {"namespace": "kruise-system", "name": "hooks", "path": path},
                    "caBundle": certificates.ca_bundle,
                },
                "rules": [
                    {
                        "operations": operations,
                        "apiGroups": [GROUP],
                        "apiVersions": ["v1"],
                        "resources": resources,
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                **extra,
            }
        ],
    }


async def serve_gadgets(sandbox, server, certificates, strategy: str) -> Client:
    server.routes["/convert"] = conversion_webhook
    client = Client(sandbox.kubeconfig)
    await client.create(CRDS, gadget_crd(certificates.ca_bundle, strategy))
    async with asyncio.timeout(10):
        while True:
            try:
                await client.list(V2)
                break
            except ApiError:
                await asyncio.sleep(0.02)  # until the CRD is established (deadline above)
    return client


@pytest.fixture
async def plain(sandbox, server, certificates):
    """Gadgets with conversion None: the versions differ only in apiVersion."""
    client = await serve_gadgets(sandbox, server, certificates, "None")
    yield client
    await client.close()


@pytest.fixture
async def webhooked(sandbox, server, certificates):
    """Gadgets converted by the test's conversion webhook (v2 nests the size)."""
    client = await serve_gadgets(sandbox, server, certificates, "Webhook")
    yield client
    await client.close()


def gadget(name: str, version: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Gadget", "metadata": {"name": name}, "spec": spec}


def stored(sandbox, name: str) -> dict[str, Any]:
    obj = sandbox.server.store.get((GROUP, "gadgets"), "default", name)
    assert obj is not None
    return obj


async def test_v1_webhook_is_called_for_a_v2_request_and_its_patch_is_stored(
    sandbox, server, certificates, plain
):
    server.routes["/mutate"] = lambda req: patch_response(
        [
            {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}},
            {"op": "add", "path": "/spec/colour", "value": "red"},
        ]
    )
    # no matchPolicy: the stored configuration gets the v1 default, Equivalent
    await plain.create(
        MUTATING, configuration("MutatingWebhookConfiguration", "mutate", certificates, "/mutate")
    )
    created = await plain.create(V2, gadget("a", "v2", size=3))
    assert created["apiVersion"] == f"{GROUP}/v2"
    assert created["spec"] == {"size": 3, "colour": "red"}
    assert created["metadata"]["labels"] == {"mutated": "yes"}
    assert stored(sandbox, "a")["spec"] == {"size": 3, "colour": "red"}
    (review,) = server.received["/mutate"]
    request = review["request"]
    assert (request["kind"], request["resource"]) == (kind("v1"), resource("v1"))
    assert (request["requestKind"], request["requestResource"]) == (kind("v2"), resource("v2"))
    assert request["object"]["apiVersion"] == f"{GROUP}/v1"


async def test_exact_policy_is_not_called_for_another_version(sandbox, server, certificates, plain):
    server.routes["/mutate"] = lambda req: patch_response(
        [{"op": "add", "path": "/spec/colour", "value": "red"}]
    )
    await plain.create(
        MUTATING,
        configuration("MutatingWebhookConfiguration", "mutate", certificates, "/mutate", matchPolicy="Exact"),
    )
    await plain.create(V2, gadget("b", "v2", size=1))
    assert "/mutate" not in server.received
    await plain.create(V1, gadget("c", "v1", size=1))
    assert len(server.received["/mutate"]) == 1
    assert stored(sandbox, "c")["spec"]["colour"] == "red"


async def test_a_request_at_the_registered_version_is_not_converted(server, certificates, plain):
    server.routes["/check"] = lambda req: {"allowed": True}
    await plain.create(
        VALIDATING, configuration("ValidatingWebhookConfiguration", "check", certificates, "/check")
    )
    await plain.create(V1, gadget("d", "v1", size=2))
    (review,) = server.received["/check"]
    assert review["request"]["kind"] == review["request"]["requestKind"] == kind("v1")


async def test_status_subresource_is_matched_at_the_equivalent_version(server, certificates, plain):
    server.routes["/status"] = lambda req: {"allowed": False, "status": {"message": "not ready yet"}}
    await plain.create(
        VALIDATING,
        configuration(
            "ValidatingWebhookConfiguration", "status", certificates, "/status", resources=["gadgets/status"]
        ),
    )
    created = await plain.create(V2, gadget("e", "v2", size=2))
    assert "/status" not in server.received, "the main resource is not the status subresource"
    with pytest.raises(ApiError) as caught:
        await plain.replace(f"{V2}/e/status", {**created, "status": {"ready": True}})
    assert caught.value.message == 'admission webhook "status.example.com" denied the request: not ready yet'
    (review,) = server.received["/status"]
    request = review["request"]
    assert (request["kind"], request["requestKind"]) == (kind("v1"), kind("v2"))
    assert request["subResource"] == request["requestSubResource"] == "status"
    assert request["object"]["apiVersion"] == request["oldObject"]["apiVersion"] == f"{GROUP}/v1"


async def test_objects_go_through_the_conversion_webhook_both_ways(sandbox, server, certificates, webhooked):
    sizes: list[Any] = []

    def double(req: dict[str, Any]) -> dict[str, Any]:
        sizes.append(req["object"]["spec"].get("size"))  # the v1 shape: flat size
        return patch_response(
            [{"op": "replace", "path": "/spec/size", "value": 2 * req["object"]["spec"]["size"]}]
        )

    server.routes["/double"] = double
    server.routes["/check"] = lambda req: {"allowed": True}
    await webhooked.create(
        MUTATING, configuration("MutatingWebhookConfiguration", "double", certificates, "/double")
    )
    await webhooked.create(
        VALIDATING, configuration("ValidatingWebhookConfiguration", "check", certificates, "/check")
    )
    created = await webhooked.create(V2, gadget("f", "v2", dimensions={"size": 4}))
    assert created["apiVersion"] == f"{GROUP}/v2" and created["spec"]["dimensions"] == {"size": 8}
    assert stored(sandbox, "f")["spec"] == {"size": 8}
    assert sizes == [4]
    (check,) = server.received["/check"]
    assert check["request"]["object"]["spec"] == {"size": 8}
    assert check["request"]["requestKind"] == kind("v2")
    # an update at v2: the old object is converted too
    updated = {**created, "spec": {"dimensions": {"size": 5}}}
    await webhooked.replace(f"{V2}/f", updated)
    assert stored(sandbox, "f")["spec"] == {"size": 10}
    last = server.received["/check"][-1]["request"]
    assert (last["object"]["spec"], last["oldObject"]["spec"]) == ({"size": 10}, {"size": 8})


async def test_a_failed_conversion_refuses_the_request_whatever_the_failure_policy(
    server, certificates, webhooked
):
    server.routes["/check"] = lambda req: {"allowed": True}
    await webhooked.create(
        VALIDATING,
        configuration(
            "ValidatingWebhookConfiguration",
            "check",
            certificates,
            "/check",
            failurePolicy="Ignore",
            operations=["DELETE"],
        ),
    )
    await webhooked.create(V1, gadget("g", "v1", size=1))

    def refuse_v1(req: dict[str, Any]) -> Reply:
        # a DELETE at v2 needs v1 only for the webhook: storage is v1 and the answer is v2
        if req["desiredAPIVersion"].endswith("/v1"):
            response = {"uid": req["uid"], "result": {"status": "Failure", "message": "no way"}}
            body = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response}
            return Reply(body=orjson.dumps(body))
        return conversion_webhook(req)

    server.routes["/convert"] = refuse_v1
    with pytest.raises(ApiError) as caught:
        await webhooked.delete(f"{V2}/g")
    assert caught.value.status == 500
    assert caught.value.message == (
        f"Internal error occurred: conversion webhook for {GROUP}/v2, Kind=Gadget failed: no way"
    )
    assert "/check" not in server.received
    server.routes["/convert"] = conversion_webhook
    await webhooked.delete(f"{V2}/g")
    (review,) = server.received["/check"]
    assert review["request"]["oldObject"]["spec"] == {"size": 1}
    assert review["request"]["requestKind"] == kind("v2")
