"""kruise-webhook writes its CA bundle into the webhook configurations and Kruise CRDs only when it differs.

kube-apiserver ends every watch on a CRD whose object changes, so a webhook that rewrote all of them at
each start made kruise-manager relist everything (and earn 429s) on every webhook restart. Here a first
start writes, a restart with the same CA writes nothing, and a new CA is written everywhere once.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from kruise.kube.client import Client
from kruise.kube.errors import AlreadyExists
from kruise.kube.resources import CRDS, NAMESPACES, SECRETS
from kruise.sandbox.cluster import Sandbox
from kruise.webhook.certcontroller import CertController
from kruise.webhook.certsecret import MUTATING, SECRET_NAME, VALIDATING, ConfigurationPatcher
from kruise.webhook.configurations import ClientTarget, mutating_configuration, validating_configuration
from kruise.webhook.crdconversion import ConversionPatcher, is_kruise_webhook_converted

NAMESPACE = "kruise-system"
TARGET = ClientTarget()
SERVED = frozenset({"/mutate-pod", "/validate-apps-kruise-io-v1alpha1-cloneset"})
CONVERTED_CRDS = [
    path
    for path in (Path(__file__).resolve().parents[3] / "crds").glob("*.yaml")
    if "strategy: Webhook" in path.read_text()
]


@pytest.fixture
async def client(tmp_path: Path):
    async with Sandbox(nodes=0) as sandbox:  # with every CRD of crds/
        client = await Client.from_kubeconfig(sandbox.kubeconfig)
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        with contextlib.suppress(AlreadyExists):
            await client.create(NAMESPACES, namespace)
        # the chart's configurations (no caBundle): behind a Service the webhook only patches them
        await client.create(MUTATING, mutating_configuration(TARGET))
        await client.create(VALIDATING, validating_configuration(TARGET))
        try:
            yield client
        finally:
            await client.close()


def start(client: Client, cert_dir: Path) -> CertController:
    """What one kruise-webhook process runs at start (a new one per start, as after a restart)."""
    return CertController(
        client, NAMESPACE, "kruise-webhook-service.kruise-system.svc", cert_dir,
        ConfigurationPatcher(client, TARGET, SERVED), conversion=ConversionPatcher(client, TARGET),
    )  # fmt: skip


async def versions(client: Client) -> dict[str, str]:
    """resourceVersion of every object the webhook may write the CA into."""
    found = {}
    for ref in (MUTATING, VALIDATING, CRDS):
        for obj in (await client.list(ref)).get("items") or []:
            if ref is not CRDS or is_kruise_webhook_converted(obj):
                found[f"{ref.plural}/{obj['metadata']['name']}"] = obj["metadata"]["resourceVersion"]
    return found


def written(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name, version in after.items() if before.get(name) != version}


async def test_a_restart_with_the_same_ca_writes_nothing_and_a_new_ca_is_written_once(
    client: Client, tmp_path: Path
):
    empty = await versions(client)
    crds = {name for name in empty if name.startswith("customresourcedefinitions/")}
    assert len(crds) == len(CONVERTED_CRDS)  # the default API set's two-version kinds (crds/)

    await start(client, tmp_path / "first").sync_once()
    settled = await versions(client)
    assert written(empty, settled) == set(settled)  # CA into each CRD and both configurations

    restarts = []
    for n in range(3):
        before = await versions(client)
        await start(client, tmp_path / f"restart-{n}").sync_once()
        restarts.append(written(before, await versions(client)))
    assert restarts == [set(), set(), set()]
    print(f"first start wrote {len(settled)} objects; restarts wrote {[len(r) for r in restarts]}")

    await client.delete(SECRETS, SECRET_NAME, NAMESPACE)  # a new CA
    before = await versions(client)
    await start(client, tmp_path / "new-ca").sync_once()
    assert written(before, await versions(client)) == set(before)
    before = await versions(client)
    await start(client, tmp_path / "after-new-ca").sync_once()
    assert written(before, await versions(client)) == set()


async def test_a_crd_whose_port_the_apiserver_defaulted_is_up_to_date(client: Client, tmp_path: Path):
    """kube-apiserver stores the conversion Service port as 443 when none is given; the CA written by
    a webhook whose target leaves it out is still the same clientConfig."""
    await start(client, tmp_path / "first").sync_once()
    name = "sidecarsets.apps.kruise.io"  # served at v1alpha1 and v1beta1 in every API set
    crd = await client.get(CRDS, name)
    service = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
    del service["port"]
    await client.update(CRDS, crd)
    before = await versions(client)
    await start(client, tmp_path / "restart").sync_once()
    assert f"customresourcedefinitions/{name}" not in written(before, await versions(client))


async def test_behind_a_service_a_deleted_configuration_is_not_recreated(client: Client, tmp_path: Path):
    """`helm uninstall` deletes the configurations before the webhook's pod stops; a webhook that re-created
    them would leave a failurePolicy-Fail webhook pointing at a Service that is gone. As upstream's, it only
    patches configurations the chart created, and its sync fails naming the missing one."""
    await start(client, tmp_path / "first").sync_once()
    await client.delete(MUTATING, "kruise-mutating-webhook-configuration")
    with pytest.raises(RuntimeError, match="not found MutatingWebhookConfiguration kruise-mutating-webhook"):
        await start(client, tmp_path / "after-uninstall").sync_once()
    names = [obj["metadata"]["name"] for obj in (await client.list(MUTATING)).get("items") or []]
    assert names == []
