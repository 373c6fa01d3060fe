"""`helm upgrade` re-applies the chart's webhook configurations and a CRD without caBundle: kruise-webhook
must write the bundle back at once, from its watch on those objects, not on its periodic resync.

The resync here is an hour, so anything restored within the deadline was restored by an event.
"""

from __future__ import annotations

import base64

import pytest
import yaml

from kruise.kube.client import Client
from kruise.kube.errors import Conflict
from kruise.kube.resources import CRDS, SECRETS, ResourceRef
from kruise.webhook.certsecret import MUTATING, VALIDATING
from kruise.webhook.configurations import (
    MUTATING_NAME,
    VALIDATING_NAME,
    ClientTarget,
    mutating_configuration,
    validating_configuration,
)
from tests.integration.webhook.conftest import REPO
from tests.kit.polling import until

CRD_NAME = "clonesets.apps.kruise.io"
DEADLINE = 15.0  # far below the resync below


@pytest.fixture
def cert_resync_seconds() -> float:
    return 3600.0


def _hook_bundles(config: dict) -> set[str | None]:
    return {(hook.get("clientConfig") or {}).get("caBundle") for hook in config.get("webhooks") or []}


def _crd_bundle(crd: dict) -> str | None:
    webhook = (crd["spec"].get("conversion") or {}).get("webhook") or {}
    return (webhook.get("clientConfig") or {}).get("caBundle")


async def _replace(client: Client, ref: ResourceRef, name: str, body: dict) -> dict:
    """A replace at the live resourceVersion; kruise-webhook restoring the first configuration may
    also touch the second between our read and our write, so a Conflict is retried as a client would."""
    for _ in range(10):
        live = await client.get(ref, name)
        body["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
        try:
            return await client.update(ref, body)
        except Conflict:
            continue
    raise AssertionError(f"{name}: 10 conflicting writes in a row")


async def test_reapplied_configurations_and_crd_get_the_ca_bundle_back_without_resync(live_webhook):
    client = live_webhook.client
    secret = await client.get(SECRETS, "kruise-webhook-certs", "kruise-system")
    expected = base64.b64encode(base64.b64decode(secret["data"]["ca-cert.pem"])).decode()

    async def all_patched() -> bool:
        mutating = await client.get(MUTATING, MUTATING_NAME)
        validating = await client.get(VALIDATING, VALIDATING_NAME)
        crd = await client.get(CRDS, CRD_NAME)
        return (
            _hook_bundles(mutating) == {expected}
            and _hook_bundles(validating) == {expected}
            and _crd_bundle(crd) == expected
        )

    await until(all_patched, DEADLINE, 0.05, message="initial caBundle in configurations and CRD")
    syncs_before = live_webhook.process.certs.syncs

    # What `helm upgrade` / `kubectl replace` writes: the chart's objects, Service-addressed, no caBundle
    # and no template annotation; the CRD as shipped in crds/.
    chart_target = ClientTarget(namespace="kruise-system", service="kruise-webhook-service")
    for ref, name, build in (
        (MUTATING, MUTATING_NAME, mutating_configuration),
        (VALIDATING, VALIDATING_NAME, validating_configuration),
    ):
        written = await _replace(client, ref, name, build(chart_target))
        assert _hook_bundles(written) == {None}
    shipped = yaml.safe_load((REPO / "crds-2.0" / "apps.kruise.io_clonesets.yaml").read_text())
    assert _crd_bundle(await _replace(client, CRDS, CRD_NAME, shipped)) is None

    await until(all_patched, DEADLINE, 0.05, message="caBundle restored after re-apply")
    assert live_webhook.process.certs.syncs > syncs_before
    validating = await client.get(VALIDATING, VALIDATING_NAME)
    urls = [hook["clientConfig"]["url"] for hook in validating["webhooks"]]
    assert all(url.startswith(live_webhook.url + "/") for url in urls)


@pytest.fixture
def live_webhook_api_set() -> str:
    """CloneSet is this module's two-version CRD: served at v1beta1 only on the 2.0 API set."""
    return "2.0"
