"""A live kruise-webhook (real HTTPS, real certificates) wired into the sandbox emulator's admission.

The webhook runs on the test's event loop, so kubectl is always run as an asyncio subprocess: a
blocking call would stop the webhook from answering the very request kubectl is waiting on.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kruise.api.crdfiles import SET_DIRS
from kruise.kube.client import Client
from kruise.sandbox.apiserver.webhooks import WebhookAdmission
from kruise.webhook.main import Options, WebhookProcess
from tests.kit.ports import free_port

REPO = Path(__file__).resolve().parents[3]
KUBECTL = str(Path(sys.executable).parent / "kubectl")


@dataclass
class Kubectl:
    kubeconfig: Path

    async def __call__(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            KUBECTL, "--kubeconfig", str(self.kubeconfig), *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECONFIG": str(self.kubeconfig)},
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin else None), timeout=60)
        code = proc.returncode or 0
        if check and code != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({code}): {err.decode()}")
        return code, out.decode(), err.decode()

    async def apply(self, manifest: str) -> None:
        """`kubectl create` of built-ins sends protobuf (the emulator speaks JSON); apply sends JSON."""
        await self("apply", "-f", "-", stdin=manifest)

    async def namespace(self, name: str) -> None:
        await self.apply(NAMESPACE.format(name=name))


NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}}}\n"


@dataclass
class LiveWebhook:
    process: WebhookProcess
    client: Client
    kubectl: Kubectl
    url: str


@pytest.fixture
def cert_resync_seconds() -> float:
    """The webhook's periodic resync; a test module overrides it to prove a reaction is event-driven."""
    return 30.0


@pytest.fixture
def live_webhook_feature_gates() -> str:
    """The live webhook's `--feature-gates`; a test module overrides it to turn on a gate it tests."""
    return "ResourcesDeletionProtection=true"


@pytest.fixture
def live_webhook_api_set() -> str:
    """The API set of the live webhook (`--api-set`) and of the CloneSet CRD it is given; modules that
    use CloneSet as their two-version (conversion) CRD override it with "2.0"."""
    return "1.9"


@pytest.fixture
async def live_webhook(
    emulator, tmp_path, cert_resync_seconds, live_webhook_feature_gates, live_webhook_api_set
) -> AsyncIterator[LiveWebhook]:
    server = emulator.server
    server.admission = WebhookAdmission(
        lambda group, version, plural: list(server.store.list((group, plural)))
    )
    kubectl = Kubectl(emulator.kubeconfig)
    await kubectl.apply(NAMESPACE.format(name="kruise-system"))
    crds = REPO / SET_DIRS[live_webhook_api_set]
    await kubectl("apply", "-f", str(crds / "apps.kruise.io_clonesets.yaml"))
    await kubectl("wait", "--for=condition=Established", "crd/clonesets.apps.kruise.io", "--timeout=30s")
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    options = Options(
        kubeconfig=str(emulator.kubeconfig), namespace="kruise-system", bind_address="127.0.0.1", port=port,
        cert_dir=tmp_path / "certs", webhook_url=url, cert_resync_seconds=cert_resync_seconds,
        initialize_timeout=30.0, cache_sync_timeout=30.0, shutdown_grace=0.5,
        feature_gates=live_webhook_feature_gates, api_set=live_webhook_api_set,
    )  # fmt: skip
    client = await Client.from_kubeconfig(emulator.kubeconfig)
    process = WebhookProcess(client, options)
    await process.start()
    try:
        yield LiveWebhook(process, client, kubectl, url)
    finally:
        await process.stop()
        await client.close()
