"""kruise-webhook on API set 1.9 caches SidecarSets at their storage version (v1beta1) and converts
in-process (`kruise.kube.wire`): its cache's list and watch never make kube-apiserver call its own
/convert. That hop was why the first SidecarSet of a fresh cluster reached the cache about a second
late: the watch opened before kruise-webhook patched the CRD's conversion config, so converting its
first event failed and the informer relisted after a backoff. Counted with `tests.kit.conversions`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kruise.kube.client import Client
from kruise.kube.errors import InternalError
from kruise.kube.resources import PODS
from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from kruise.webhook.caches import SIDECARSETS
from kruise.webhook.main import Options, WebhookProcess
from tests.integration.webhook.conftest import NAMESPACE, REPO, Kubectl
from tests.kit.conversions import CountingCaller, counting_conversions
from tests.kit.pods import pod
from tests.kit.polling import until_fetched
from tests.kit.ports import free_port

NS = "default"

SIDECARSET: dict[str, Any] = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "SidecarSet",
    "metadata": {"name": "wire-sidecarset"},
    "spec": {
        "selector": {"matchLabels": {"app": "wire"}},
        "containers": [{"name": "sidecar1", "image": "busybox", "command": ["sleep", "999d"]}],
    },
}


def wire_pod(name: str) -> dict[str, Any]:
    """An app=wire nginx pod for the webhook to admit."""
    return pod(
        name,
        namespace=NS,
        labels={"app": "wire"},
        containers=[{"name": "app", "image": "nginx:1.25"}],
        typed=True,
    )


@pytest.fixture
async def webhook(emulator, tmp_path) -> AsyncIterator[tuple[WebhookProcess, CountingCaller]]:
    """A kruise-webhook over the 1.9 SidecarSet CRD, its conversions counted from before it starts."""
    server = emulator.server
    server.admission = WebhookAdmission(
        lambda group, version, plural: list(server.store.list((group, plural)))
    )
    kubectl = Kubectl(emulator.kubeconfig)
    await kubectl.apply(NAMESPACE.format(name="kruise-system"))
    await kubectl("apply", "-f", str(REPO / "crds" / "apps.kruise.io_sidecarsets.yaml"))
    await kubectl("wait", "--for=condition=Established", "crd/sidecarsets.apps.kruise.io", "--timeout=30s")
    port = free_port()
    options = Options(
        kubeconfig=str(emulator.kubeconfig), namespace="kruise-system", bind_address="127.0.0.1", port=port,
        cert_dir=tmp_path / "certs", webhook_url=f"https://127.0.0.1:{port}", cert_resync_seconds=30.0,
        initialize_timeout=30.0, cache_sync_timeout=30.0, shutdown_grace=0.5,
    )  # fmt: skip
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    process = WebhookProcess(client, options)
    with counting_conversions(emulator) as conversions:
        await process.start()
        try:
            yield process, conversions
        finally:
            await process.stop()
            await client.close()


async def test_sidecarset_cache_needs_no_convert(webhook, emulator):
    process, conversions = webhook
    assert process.client.wire.wire_ref(SIDECARSETS) is not None  # v1beta1 is the 1.9 storage version

    # The writer talks v1beta1 too (admission of SidecarSets is registered for both versions), so
    # any SidecarSet review counted below would be the webhook cache's.
    writer = await Client.from_kubeconfig(emulator.kubeconfig)
    try:
        writer.wire = await writer.read_wire_versions()
        await writer.create(SIDECARSETS, SIDECARSET)
        cached = await until_fetched(lambda: _cached(process), lambda obj: obj is not None, timeout=10.0)
        assert cached["apiVersion"] == "apps.kruise.io/v1alpha1"  # code's shape in the cache
        admitted = await writer.create(PODS, wire_pod("injected"), namespace=NS)
        assert [c["name"] for c in admitted["spec"]["containers"]] == ["sidecar1", "app"]
    finally:
        await writer.close()
    assert conversions.of("SidecarSet") == []

    # The count is live: a client that talks v1alpha1 on the wire does go through /convert.
    plain = await Client.from_kubeconfig(emulator.kubeconfig)
    try:

        async def read_alpha() -> dict[str, Any] | None:
            try:
                return await plain.get(SIDECARSETS, "wire-sidecarset")
            except InternalError:  # the CRD's conversion config not patched in yet
                return None

        alpha = await until_fetched(read_alpha, lambda obj: obj is not None, timeout=10.0)
    finally:
        await plain.close()
    assert alpha["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert ("SidecarSet", "apps.kruise.io/v1alpha1") in conversions.of("SidecarSet")


def _cached(process: WebhookProcess) -> dict[str, Any] | None:
    (informer,) = [i for i in process.factory.informers if i.ref == SIDECARSETS]
    return informer.store.get("wire-sidecarset")
