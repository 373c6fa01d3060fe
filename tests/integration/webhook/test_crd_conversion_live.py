"""kruise-webhook writes its CA into the conversion webhook of the Kruise CRDs, and keeps it there."""

from __future__ import annotations

import asyncio

import orjson
import pytest

from kruise.kube.errors import NotFound
from kruise.kube.resources import CLONESETS, CRDS, ResourceRef
from tests.kit.crd_conversion import BETA_CLONESET, CLONESET_CRD, kruise_ca_bundle, until_conversion_ca


async def test_crd_conversion_webhook_gets_the_ca_and_this_process_url(live_webhook):
    ca = await kruise_ca_bundle(live_webhook.client)
    crd = await until_conversion_ca(live_webhook.client, ca)
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {"url": live_webhook.url + "/convert", "caBundle": ca},
            "conversionReviewVersions": ["v1", "v1beta1"],
        },
    }


async def test_reset_crd_ca_bundle_is_patched_back(live_webhook):
    expected = await kruise_ca_bundle(live_webhook.client)
    await until_conversion_ca(live_webhook.client, expected)
    before = await live_webhook.client.get(CRDS, CLONESET_CRD)
    patch = [{"op": "remove", "path": "/spec/conversion/webhook/clientConfig/caBundle"}]
    await live_webhook.kubectl(
        "patch", "crd", CLONESET_CRD, "--type=json", "-p", orjson.dumps(patch).decode()
    )
    seen = []
    async with asyncio.timeout(15):
        async for event in live_webhook.client.watch(
            CRDS,
            field_selector=f"metadata.name={CLONESET_CRD}",
            resource_version=before["metadata"]["resourceVersion"],
        ):
            seen.append(event.object["spec"]["conversion"]["webhook"]["clientConfig"].get("caBundle"))
            if seen[-1] == expected:
                break
    assert seen[0] is None  # the reset happened, and the webhook then wrote the bundle back
    assert seen[-1] == expected


async def test_v1beta1_cloneset_is_admitted_and_defaulted_in_v1beta1(live_webhook):
    """Written at v1beta1: stored at v1alpha1 through /convert, admitted (defaulted) at v1beta1 by
    kruise-webhook, and read back at v1beta1 with the defaults in their v1beta1 places."""
    await until_conversion_ca(live_webhook.client)
    await live_webhook.kubectl.apply(BETA_CLONESET)
    _, out, _ = await live_webhook.kubectl("get", "clonesets.v1beta1.apps.kruise.io", "beta", "-o", "json")
    rolling = orjson.loads(out)["spec"]["updateStrategy"]["rollingUpdate"]
    assert rolling["podUpdatePolicy"] == "InPlaceIfPossible"
    assert rolling["maxUnavailable"] == "20%"
    stored = await live_webhook.client.get(CLONESETS, "beta", "default")
    assert stored["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert stored["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"


ALPHA_CLONESET = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: alpha, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: alpha}}
  template:
    metadata: {labels: {app: alpha}}
    spec: {containers: [{name: main, image: nginx:alpine}]}
  updateStrategy: {type: InPlaceIfPossible, partition: 1}
"""
BETA_CLONESETS = ResourceRef("apps.kruise.io", "v1beta1", "clonesets", True, "CloneSet")


async def test_emulator_converts_through_kruise_webhook_convert(live_webhook):
    """The emulator calls kruise-webhook's real /convert (URL, caBundle it patched in) to serve a
    v1alpha1-stored CloneSet at v1beta1 and to store a v1beta1 patch back at v1alpha1."""
    await until_conversion_ca(live_webhook.client)
    await live_webhook.kubectl.apply(ALPHA_CLONESET)
    beta = await live_webhook.client.get(BETA_CLONESETS, "alpha", "default")
    assert beta["apiVersion"] == "apps.kruise.io/v1beta1"
    update = beta["spec"]["updateStrategy"]
    assert update["type"] == "RollingUpdate"
    assert update["rollingUpdate"]["podUpdatePolicy"] == "InPlaceIfPossible"
    assert update["rollingUpdate"]["partition"] == 1
    patched = await live_webhook.client.patch(
        BETA_CLONESETS, "alpha", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}, "default"
    )
    assert patched["apiVersion"] == "apps.kruise.io/v1beta1"
    assert patched["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 0
    alpha = await live_webhook.client.get(CLONESETS, "alpha", "default")
    assert alpha["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert alpha["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"
    assert alpha["spec"]["updateStrategy"]["partition"] == 0


async def test_v1beta1_cloneset_is_validated_at_the_request_version(live_webhook):
    """kruise-webhook gets the v1beta1 object from the emulator (the request version), converts it for
    upstream's checks and denies it; nothing is stored."""
    await until_conversion_ca(live_webhook.client)
    bad = BETA_CLONESET.replace("name: beta,", "name: bad,").replace(
        "podUpdatePolicy: InPlaceIfPossible}", "podUpdatePolicy: InPlaceIfPossible, partition: -1}"
    )
    code, _, err = await live_webhook.kubectl("apply", "-f", "-", stdin=bad, check=False)
    assert code != 0
    assert 'admission webhook "vcloneset.kb.io" denied the request' in err
    assert "spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0" in err
    with pytest.raises(NotFound):
        await live_webhook.client.get(CLONESETS, "bad", "default")


@pytest.fixture
def live_webhook_api_set() -> str:
    """CloneSet is this module's two-version CRD: served at v1beta1 only on the 2.0 API set."""
    return "2.0"
