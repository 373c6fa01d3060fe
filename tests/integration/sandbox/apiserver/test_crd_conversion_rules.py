"""Conformance: a CRD's spec.conversion, as apiextensions-apiserver validates it.

A webhook configuration is refused unless the strategy is Webhook (kube-apiserver's internal field
paths and words), and the case that bites an API-set switch: a server-side apply that drops the
conversion while another field manager (kruise-webhook, writing the caBundle) owns part of
`webhook.clientConfig` leaves that part behind, so the whole apply is refused; an apply that keeps
`strategy: Webhook` is accepted with the caBundle kept, and a full replace without the conversion (what
`kubectl replace -f crds/` does on the way back from the 2.0 API set) drops it all in one update.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from tests.integration.sandbox.apiserver.conftest import CRDS, GROUP, gadget_crd

NAME = f"gadgets.{GROUP}"
APPLY = "application/apply-patch+yaml"
FORBIDDEN = "should not be set when strategy is not set to Webhook"
SERVICE = {"name": "conv", "namespace": "default", "path": "/convert"}
WEBHOOK_CONVERSION = {
    "strategy": "Webhook",
    "webhook": {"clientConfig": {"service": SERVICE}, "conversionReviewVersions": ["v1"]},
}


@pytest.fixture
async def client(emulator):
    c = Client(emulator.kubeconfig)
    yield c
    await c.close()


def crd_with(conversion: dict[str, Any] | None) -> dict[str, Any]:
    crd = gadget_crd()
    if conversion is not None:
        crd["spec"]["conversion"] = copy.deepcopy(conversion)
    return crd


async def apply(client: Client, crd: dict[str, Any], manager: str) -> dict[str, Any]:
    return await client.patch(f"{CRDS}/{NAME}?fieldManager={manager}&force=true", crd, APPLY)


async def refused(call) -> str:
    with pytest.raises(ApiError) as err:
        await call
    assert err.value.status == 422, err.value
    return str(err.value)


async def test_webhook_fields_without_the_webhook_strategy_are_forbidden(client):
    none_with_webhook = {**copy.deepcopy(WEBHOOK_CONVERSION), "strategy": "None"}
    message = await refused(client.create(CRDS, crd_with(none_with_webhook)))
    assert f"spec.conversion.webhookClientConfig: Forbidden: {FORBIDDEN}" in message
    assert f"spec.conversion.conversionReviewVersions: Forbidden: {FORBIDDEN}" in message


async def test_the_webhook_strategy_needs_a_client_config_and_review_versions(client):
    message = await refused(client.create(CRDS, crd_with({"strategy": "Webhook", "webhook": {}})))
    assert (
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook"
        in message
    )
    assert "spec.conversion.conversionReviewVersions: Required value" in message


async def test_an_unknown_or_missing_strategy_is_refused(client):
    message = await refused(client.create(CRDS, crd_with({"strategy": "Magic"})))
    assert (
        'spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"' in message
    )
    message = await refused(
        client.create(CRDS, crd_with({"webhook": {"clientConfig": {"service": SERVICE}}}))
    )
    assert "spec.conversion.strategy: Required value" in message
    assert f"spec.conversion.webhookClientConfig: Forbidden: {FORBIDDEN}" in message


async def test_reapplying_without_the_conversion_leaves_another_managers_ca_bundle_and_is_refused(client):
    await apply(client, crd_with(WEBHOOK_CONVERSION), "helm")
    # kruise-webhook writes the CA in with an update of its own (field manager kruise-webhook)
    crd = await client.get(f"{CRDS}/{NAME}")
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = "Q0E="
    await client.replace(f"{CRDS}/{NAME}?fieldManager=kruise-webhook", crd)

    for dropped in (None, {"strategy": "None"}):
        message = await refused(apply(client, crd_with(dropped), "helm"))
        assert f"spec.conversion.webhookClientConfig: Forbidden: {FORBIDDEN}" in message

    kept = await apply(client, crd_with(WEBHOOK_CONVERSION), "helm")
    assert kept["spec"]["conversion"]["strategy"] == "Webhook"
    assert kept["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] == "Q0E="

    replaced = await client.replace(f"{CRDS}/{NAME}", crd_with(None))
    assert (replaced["spec"].get("conversion") or {}).get("strategy", "None") == "None"
    assert "webhook" not in (replaced["spec"].get("conversion") or {})
