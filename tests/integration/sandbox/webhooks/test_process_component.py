"""A webhook running as its own process, reached through a Service the sandbox resolves."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.components import ComponentFailed, ProcessComponent, ServicePort
from kruise.sandbox.simulator.client import ApiError, Client
from tests.kit.ports import free_port

SCRIPT = Path(__file__).resolve().parents[4] / "tests" / "kit" / "webhook_server.py"


def hook_configuration(certificates, path: str, kind: str) -> dict:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": f"proc{path.replace('/', '-')}"},
        "webhooks": [
            {
                "name": f"proc{path.replace('/', '.')}.kruise.io",
                "clientConfig": {
                    "service": {"namespace": "kruise-system", "name": "hooks", "port": 443, "path": path},
                    "caBundle": certificates.ca_bundle,
                },
                "rules": [
                    {
                        "operations": ["CREATE"],
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


async def test_process_serves_a_service_webhook(tmp_path, certificates):
    (tmp_path / "tls.crt").write_bytes(certificates.cert_pem)
    (tmp_path / "tls.key").write_bytes(certificates.key_pem)
    port = free_port()
    lines: list[str] = []
    component = ProcessComponent(
        "hooks",
        [sys.executable, str(SCRIPT), str(port), str(tmp_path)],
        services=[ServicePort("kruise-system", "hooks", 443, port)],
        ready_line="ready",
        ready_timeout=30,
        log=lines.append,
    )
    async with Sandbox(nodes=0, crd_dir=None, components=[component]) as sb:
        assert lines == ["[hooks] ready"]
        client = Client(sb.kubeconfig)
        try:
            await client.create(
                "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                hook_configuration(certificates, "/label", "MutatingWebhookConfiguration"),
            )
            cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
            created = await client.create("/api/v1/namespaces/default/configmaps", cm)
            assert created["metadata"]["labels"] == {"webhook": "called"}
            await client.create(
                "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                hook_configuration(certificates, "/deny", "ValidatingWebhookConfiguration"),
            )
            with pytest.raises(ApiError) as caught:
                await client.create(
                    "/api/v1/namespaces/default/configmaps", {**cm, "metadata": {"name": "d"}}
                )
            assert (
                caught.value.message
                == 'admission webhook "proc.deny.kruise.io" denied the request: denied by a process'
            )
        finally:
            await client.close()
        pid = component.pid
    assert component.pid is None and pid is not None


async def test_process_that_exits_early_fails_the_start(tmp_path):
    component = ProcessComponent(
        "broken", [sys.executable, "-c", "print('starting'); raise SystemExit(3)"], ready_line="ready"
    )
    sandbox = Sandbox(nodes=0, crd_dir=None, components=[component])
    with pytest.raises(ComponentFailed, match=r"broken exited with 3 before printing 'ready':\nstarting"):
        await sandbox.start()
    assert sandbox.server is None


def test_empty_argv_is_refused():
    with pytest.raises(ValueError, match="argv: must name a program"):
        ProcessComponent("x", [])
