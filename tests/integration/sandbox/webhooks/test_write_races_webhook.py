"""A write that lands while another write awaits its admission webhook (GuaranteedUpdate).

kube-apiserver runs an update or patch inside etcd's compare-and-swap loop: when the stored object
changed since the write read it, the write is redone against the current object. A patch or an
unconditional update then applies on top of what was written meanwhile; a request that named a
resourceVersion fails its precondition with 409 Conflict; an object deleted meanwhile is NotFound.
Here a validating webhook holds the first write until a second one has landed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from tests.kit.webhook_server import Reply

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
HELD = "held"  # a write carrying this data key waits at the webhook until the test releases it


@pytest.fixture
async def hold(sandbox, server, certificates):
    """A validating webhook on ConfigMap updates that answers `HELD` writes only once released."""
    held, release = asyncio.Event(), asyncio.Event()

    def check(request: dict[str, Any]) -> dict[str, Any] | Reply:
        if HELD not in ((request.get("object") or {}).get("data") or {}):
            return {"allowed": True}
        body = (
            b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"'
            + request["uid"].encode()
            + b'","allowed":true}}'
        )
        held.set()
        return Reply(body=body, delay=release)

    server.routes["/check"] = check
    client = Client(sandbox.kubeconfig)
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "hold"},
        "webhooks": [
            {
                "name": "hold.example.com",
                "clientConfig": {
                    "service": {"namespace": "kruise-system", "name": "hooks", "path": "/check"},
                    "caBundle": certificates.ca_bundle,
                },
                "rules": [
                    {
                        "operations": ["UPDATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["configmaps"],
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }
    await client.create("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", config)
    await client.create(CONFIGMAPS, {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    yield client, held, release
    release.set()
    await client.close()


async def held_while(
    held: asyncio.Event, release: asyncio.Event, write: Awaitable[Any], meanwhile: Awaitable[Any]
) -> Any:
    """Start `write`, run `meanwhile` once the webhook holds it, release it and return its result."""
    task = asyncio.ensure_future(write)
    async with asyncio.timeout(10):
        await held.wait()
    await meanwhile
    release.set()
    return await task


async def test_patch_applies_on_top_of_a_write_that_landed_while_it_was_admitted(hold):
    client, held, release = hold
    patched = await held_while(
        held,
        release,
        client.patch(f"{CONFIGMAPS}/cm", {"data": {HELD: "yes"}}),
        client.patch(f"{CONFIGMAPS}/cm", {"data": {"b": "2"}}),
    )
    assert patched["data"] == {"a": "1", "b": "2", HELD: "yes"}
    assert (await client.get(f"{CONFIGMAPS}/cm"))["data"] == {"a": "1", "b": "2", HELD: "yes"}


async def test_update_without_resource_version_applies_to_the_current_object(hold):
    client, held, release = hold
    body = {"metadata": {"name": "cm"}, "data": {"a": "1", HELD: "yes"}}
    replaced = await held_while(
        held,
        release,
        client.replace(f"{CONFIGMAPS}/cm", body),
        client.patch(f"{CONFIGMAPS}/cm", {"data": {"b": "2"}}),
    )
    assert replaced["data"] == {"a": "1", HELD: "yes"}
    current = await client.get(f"{CONFIGMAPS}/cm")
    assert current["metadata"]["resourceVersion"] == replaced["metadata"]["resourceVersion"]


async def test_update_with_the_read_resource_version_conflicts(hold):
    client, held, release = hold
    read = await client.get(f"{CONFIGMAPS}/cm")
    read["data"][HELD] = "yes"
    with pytest.raises(ApiError) as failed:
        await held_while(
            held,
            release,
            client.replace(f"{CONFIGMAPS}/cm", read),
            client.patch(f"{CONFIGMAPS}/cm", {"data": {"b": "2"}}),
        )
    assert failed.value.status == 409 and failed.value.reason == "Conflict"
    assert (await client.get(f"{CONFIGMAPS}/cm"))["data"] == {"a": "1", "b": "2"}


async def test_patch_of_an_object_deleted_while_it_was_admitted_is_not_found(hold):
    client, held, release = hold
    with pytest.raises(ApiError) as failed:
        await held_while(
            held,
            release,
            client.patch(f"{CONFIGMAPS}/cm", {"data": {HELD: "yes"}}),
            client.delete(f"{CONFIGMAPS}/cm"),
        )
    assert failed.value.not_found
    with pytest.raises(ApiError) as gone:
        await client.get(f"{CONFIGMAPS}/cm")
    assert gone.value.not_found
