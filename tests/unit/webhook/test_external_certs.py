"""EnableExternalCerts in the certificate loop: read-only Secret, caBundles checked instead of patched.

A dict-backed client stands in for the API server; the point is which calls each gate value makes.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from kruise.kube.errors import NotFound
from kruise.kube.resources import SECRETS
from kruise.webhook import certs
from kruise.webhook.certcontroller import CertController
from kruise.webhook.certsecret import MUTATING, VALIDATING, ConfigurationPatcher, read_external_secret
from kruise.webhook.configurations import (
    MUTATING_NAME,
    VALIDATING_NAME,
    ClientTarget,
    mutating_configuration,
    validating_configuration,
)
from kruise.webhook.crdconversion import ConversionPatcher

NS = "kruise-system"
TARGET = ClientTarget(NS, "kruise-webhook-service", 443, None)


class StoreClient:
    """get/create/update/list over a dict keyed by (plural, name); records every write."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, Any]] = {}
        self.writes: list[tuple[str, str, str]] = []

    async def get(self, ref: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        try:
            return self.objects[(ref.plural, name)]
        except KeyError:
            raise NotFound(f"{ref.plural} {name} not found") from None

    async def create(self, ref: Any, body: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
        self.writes.append(("create", ref.plural, body["metadata"]["name"]))
        self.objects[(ref.plural, body["metadata"]["name"])] = body
        return body

    async def update(self, ref: Any, body: dict[str, Any]) -> dict[str, Any]:
        self.writes.append(("update", ref.plural, body["metadata"]["name"]))
        self.objects[(ref.plural, body["metadata"]["name"])] = body
        return body

    async def list(self, ref: Any, namespace: str | None = None, **_: Any) -> dict[str, Any]:
        return {"items": [o for (plural, _n), o in self.objects.items() if plural == ref.plural]}


@pytest.fixture(scope="module")
def issued() -> certs.CertBundle:
    return certs.generate_bundle("kruise-webhook-service.kruise-system.svc")


def external_secret(bundle: certs.CertBundle, *, drop: str | None = None) -> dict[str, Any]:
    data = {"ca.crt": bundle.ca_cert, "tls.crt": bundle.cert, "tls.key": bundle.key}
    data.pop(drop or "", None)
    return {
        "metadata": {"name": "kruise-webhook-certs", "namespace": NS},
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }


def seeded(bundle: certs.CertBundle, ca_in_configs: bytes | None) -> StoreClient:
    client = StoreClient()
    client.objects[(SECRETS.plural, "kruise-webhook-certs")] = external_secret(bundle)
    client.objects[(MUTATING.plural, MUTATING_NAME)] = mutating_configuration(TARGET, ca_in_configs)
    client.objects[(VALIDATING.plural, VALIDATING_NAME)] = validating_configuration(TARGET, ca_in_configs)
    return client


def controller(client: StoreClient, tmp_path: Path, external: bool) -> CertController:
    patcher = ConfigurationPatcher(client, TARGET, frozenset({"/validate-apps-kruise-io-v1alpha1-cloneset"}))  # type: ignore[arg-type]
    return CertController(
        client, NS, "kruise-webhook-service.kruise-system.svc", tmp_path, patcher,  # type: ignore[arg-type]
        conversion=ConversionPatcher(client, TARGET), external=external,  # type: ignore[arg-type]
    )  # fmt: skip


async def test_read_external_secret_maps_the_tls_layout(issued: certs.CertBundle) -> None:
    client = StoreClient()
    client.objects[(SECRETS.plural, "kruise-webhook-certs")] = external_secret(issued)
    bundle = await read_external_secret(client, NS)  # type: ignore[arg-type]
    assert (bundle.ca_cert, bundle.cert, bundle.key, bundle.ca_key) == (
        issued.ca_cert,
        issued.cert,
        issued.key,
        b"",
    )


@pytest.mark.parametrize("drop", ["ca.crt", "tls.crt", "tls.key"])
async def test_read_external_secret_names_a_missing_key(issued: certs.CertBundle, drop: str) -> None:
    client = StoreClient()
    client.objects[(SECRETS.plural, "kruise-webhook-certs")] = external_secret(issued, drop=drop)
    with pytest.raises(certs.ExternalCertsError, match=f"data.{drop} must be set"):
        await read_external_secret(client, NS)  # type: ignore[arg-type]


async def test_read_external_secret_missing_is_an_error() -> None:
    with pytest.raises(certs.ExternalCertsError, match="kruise-system/kruise-webhook-certs not found"):
        await read_external_secret(StoreClient(), NS)  # type: ignore[arg-type]


async def test_gate_on_serves_the_external_bundle_and_writes_nothing(issued, tmp_path) -> None:
    client = seeded(issued, issued.ca_cert)
    loop = controller(client, tmp_path, external=True)
    await loop.sync_once()
    assert loop.bundle is not None and loop.bundle.cert == issued.cert
    assert (tmp_path / "tls.crt").read_bytes() == issued.cert
    assert client.writes == []


async def test_gate_on_fails_while_the_configurations_trust_another_ca(issued, tmp_path) -> None:
    other = certs.generate_ca()[1]
    client = seeded(issued, other)
    with pytest.raises(certs.ExternalCertsError, match="does not match the external caBundle"):
        await controller(client, tmp_path, external=True).sync_once()
    assert client.writes == []


async def test_gate_on_missing_configuration_is_an_error(issued, tmp_path) -> None:
    client = seeded(issued, issued.ca_cert)
    del client.objects[(MUTATING.plural, MUTATING_NAME)]
    with pytest.raises(
        certs.ExternalCertsError, match=f"not found MutatingWebhookConfiguration {MUTATING_NAME}"
    ):
        await controller(client, tmp_path, external=True).sync_once()


async def test_gate_off_ignores_the_external_keys_and_patches(issued, tmp_path) -> None:
    """Without the gate the Secret is the webhook's own: lacking its keys, it is regenerated and the CA
    patched into the configurations."""
    client = seeded(issued, None)
    loop = controller(client, tmp_path, external=False)
    await loop.sync_once()
    assert loop.bundle is not None and loop.bundle.ca_cert != issued.ca_cert
    assert ("update", SECRETS.plural, "kruise-webhook-certs") in client.writes
    assert ("update", VALIDATING.plural, VALIDATING_NAME) in client.writes
