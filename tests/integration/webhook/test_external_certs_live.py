"""kruise-webhook with EnableExternalCerts: the certificate and the CA injection belong to someone else.

The test plays cert-manager: it creates the `kruise-webhook-certs` Secret (kubernetes.io/tls layout), the two
webhook configurations and the CRD conversion with the CA already injected. The webhook must serve that
certificate, never write the Secret or patch a caBundle, and refuse to sync while a caBundle disagrees.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kruise.kube.client import Client
from kruise.kube.errors import NotFound
from kruise.kube.resources import CRDS, SECRETS
from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from kruise.webhook import certs
from kruise.webhook.certsecret import MUTATING, VALIDATING
from kruise.webhook.configurations import mutating_configuration, validating_configuration
from kruise.webhook.crdconversion import desired_webhook, with_conversion_webhook
from kruise.webhook.main import Options, WebhookProcess
from tests.integration.webhook.conftest import NAMESPACE, REPO, Kubectl, LiveWebhook
from tests.integration.webhook.test_webhook_live import INVALID_CLONESET, VALID_CLONESET
from tests.kit.ports import free_port

NS = "kruise-system"
SECRET = "kruise-webhook-certs"
CRD = "clonesets.apps.kruise.io"


def tls_secret(ca_cert: bytes, ca_key: bytes, key: bytes, cert: bytes) -> dict[str, Any]:
    data = {"ca.crt": ca_cert, "ca.key": ca_key, "tls.key": key, "tls.crt": cert}
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
        "metadata": {"name": SECRET, "namespace": NS},
        "data": {k: base64.b64encode(v).decode() for k, v in data.items()},
    }  # fmt: skip


async def eventually(probe: Callable[[], Awaitable[Any]], done: Callable[[Any], bool], timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s; last value {value!r}")
        await asyncio.sleep(0.1)


def _served_der(url: str, ca_cert: bytes) -> bytes:
    host, port = url.removeprefix("https://").split(":")
    context = ssl.create_default_context(cadata=ca_cert.decode())
    with context.wrap_socket(socket.create_connection((host, int(port))), server_hostname=host) as tls:
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return der


async def served_der(url: str, ca_cert: bytes) -> bytes:
    """The certificate the webhook presents, verified against ``ca_cert`` (off-loop: it serves here)."""
    return await asyncio.to_thread(_served_der, url, ca_cert)


def der_of(pem: bytes) -> bytes:
    return x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)


@pytest.fixture
async def external(emulator, tmp_path) -> AsyncIterator[tuple[LiveWebhook, dict[str, bytes]]]:
    server = emulator.server
    server.admission = WebhookAdmission(
        lambda group, version, plural: list(server.store.list((group, plural)))
    )
    kubectl = Kubectl(emulator.kubeconfig)
    await kubectl.apply(NAMESPACE.format(name=NS))
    # CloneSet as the two-version (conversion) CRD: the 2.0 API set's
    await kubectl("apply", "-f", str(REPO / "crds-2.0" / "apps.kruise.io_clonesets.yaml"))
    await kubectl("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=30s")
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    options = Options(
        kubeconfig=str(emulator.kubeconfig), namespace=NS, bind_address="127.0.0.1", port=port,
        cert_dir=tmp_path / "certs", webhook_url=url, cert_resync_seconds=0.5,
        initialize_timeout=30.0, cache_sync_timeout=30.0, shutdown_grace=0.5,
        feature_gates="EnableExternalCerts=true",
    )  # fmt: skip
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    process = WebhookProcess(client, options)
    # the external issuer: its own CA, a serving certificate for the webhook's name
    ca_key, ca_cert = certs.generate_ca()
    key, cert = certs.generate_serving(ca_key, ca_cert, options.dns_name)
    material = {"ca_key": ca_key, "ca_cert": ca_cert, "key": key, "cert": cert}
    await client.create(SECRETS, tls_secret(ca_cert, ca_key, key, cert), NS)
    # the chart + CA injector: configurations and CRD conversion already trusting that CA
    served = set(process.routes)
    await client.create(MUTATING, mutating_configuration(options.target, ca_cert, served=served))
    await client.create(VALIDATING, validating_configuration(options.target, ca_cert, served=served))
    crd = await client.get(CRDS, CRD)
    await client.update(CRDS, with_conversion_webhook(crd, desired_webhook(options.target, ca_cert)))
    await process.start()
    try:
        yield LiveWebhook(process, client, kubectl, url), material
    finally:
        await process.stop()
        await client.close()


async def test_serves_the_external_certificate_and_writes_nothing(external):
    live, material = external
    client = live.client
    secret_before = await client.get(SECRETS, SECRET, NS)
    configs_before = [
        await client.get(MUTATING, "kruise-mutating-webhook-configuration"),
        await client.get(VALIDATING, "kruise-validating-webhook-configuration"),
        await client.get(CRDS, CRD),
    ]
    assert await served_der(live.url, material["ca_cert"]) == der_of(material["cert"])
    assert (live.process.options.cert_dir / "tls.crt").read_bytes() == material["cert"]
    context = ssl.create_default_context(cadata=material["ca_cert"].decode())
    async with httpx.AsyncClient(verify=context) as http:
        assert (await http.get(live.url + "/readyz")).status_code == 200

    # the API server reaches the webhook through the injected caBundle: admission and conversion work
    code, _, err = await live.kubectl("apply", "-f", "-", stdin=INVALID_CLONESET, check=False)
    assert code != 0 and "spec.template.metadata.labels" in err
    await live.kubectl("apply", "-f", "-", stdin=VALID_CLONESET)
    await live.kubectl("get", "clonesets.apps.kruise.io", "good", "-o", "json")

    syncs = live.process.certs.syncs
    await eventually(lambda: asyncio.sleep(0, live.process.certs.syncs), lambda n: n >= syncs + 2)
    assert await client.get(SECRETS, SECRET, NS) == secret_before
    after = [
        await client.get(MUTATING, "kruise-mutating-webhook-configuration"),
        await client.get(VALIDATING, "kruise-validating-webhook-configuration"),
        await client.get(CRDS, CRD),
    ]
    assert [c["metadata"]["resourceVersion"] for c in after] == [
        c["metadata"]["resourceVersion"] for c in configs_before
    ]


async def test_a_foreign_ca_bundle_fails_the_sync_and_is_left_alone(external):
    live, _ = external
    client = live.client
    other_ca = certs.generate_ca()[1]
    config = await client.get(VALIDATING, "kruise-validating-webhook-configuration")
    changed = copy.deepcopy(config)
    changed["webhooks"][0]["clientConfig"]["caBundle"] = base64.b64encode(other_ca).decode()
    changed = await client.update(VALIDATING, changed)
    with pytest.raises(certs.ExternalCertsError, match=r"ValidatingWebhookConfiguration .* does not match"):
        await live.process.certs.sync_once()
    current = await client.get(VALIDATING, "kruise-validating-webhook-configuration")
    assert (
        current["webhooks"][0]["clientConfig"]["caBundle"]
        == changed["webhooks"][0]["clientConfig"]["caBundle"]
    )

    crd = await client.get(CRDS, CRD)
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = base64.b64encode(other_ca).decode()
    await client.update(CRDS, crd)
    await client.update(VALIDATING, {**config, "metadata": current["metadata"]})
    with pytest.raises(certs.ExternalCertsError, match=f"CRD {CRD} does not match"):
        await live.process.certs.sync_once()


async def test_a_certificate_renewed_in_the_secret_is_hot_reloaded(external):
    live, material = external
    key, cert = certs.generate_serving(material["ca_key"], material["ca_cert"], live.process.options.dns_name)
    secret = await live.client.get(SECRETS, SECRET, NS)
    secret["data"]["tls.key"] = base64.b64encode(key).decode()
    secret["data"]["tls.crt"] = base64.b64encode(cert).decode()
    await live.client.update(SECRETS, secret)
    await eventually(lambda: served_der(live.url, material["ca_cert"]), lambda der: der == der_of(cert))
    stored = await live.client.get(SECRETS, SECRET, NS)
    assert base64.b64decode(stored["data"]["tls.crt"]) == cert


async def test_a_missing_secret_is_an_error_naming_it(external):
    live, _ = external
    await live.client.delete(SECRETS, SECRET, NS)
    with pytest.raises(certs.ExternalCertsError, match=f"Secret {NS}/{SECRET} not found"):
        await live.process.certs.sync_once()
    with pytest.raises(NotFound):  # nothing was written in its place
        await live.client.get(SECRETS, SECRET, NS)
