"""The real `kruise-webhook` process against the sandbox: its own certificates, its own configurations,
and kubectl seeing its answers over HTTPS. Sandbox only: the apiserver must reach 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import uuid

from harness import KRUISE_WEBHOOK_CONFIGS, Cluster, webhook_process_ready

from tests.kit.ports import free_port


async def test_kruise_webhook_process_end_to_end(sandbox_only: Cluster, tmp_path):
    cluster = sandbox_only
    ns = f"e2e-wh-{uuid.uuid4().hex[:6]}"
    for name in ("kruise-system", ns):
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "Namespace",
                                                                    "metadata": {"name": name}}))  # fmt: skip
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kruise.webhook.main", "--kubeconfig", str(cluster.kubeconfig),
        "--namespace", "kruise-system", "--bind-address", "127.0.0.1", "--port", str(port),
        "--webhook-url", f"https://127.0.0.1:{port}", "--cert-dir", str(tmp_path / "certs"),
        "--shutdown-grace-seconds", "1", "--feature-gates", "ResourcesDeletionProtection=true",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await webhook_process_ready(cluster, port)
        bad = {
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "bad", "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
                     "template": {"metadata": {"labels": {"app": "b"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
        }  # fmt: skip
        code, out = await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(bad), check=False)
        assert code != 0
        assert 'admission webhook "vcloneset.kb.io" denied the request' in out
        assert "spec.template.metadata.labels" in out

        await cluster.kubectl("label", "namespace", ns, "policy.kruise.io/delete-protection=Always")
        code, out = await cluster.kubectl("delete", "namespace", ns, check=False)
        assert code != 0
        assert (
            'admission webhook "vnamespace.kb.io" denied the request: '
            "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always"
        ) in out
        await cluster.kubectl("label", "namespace", ns, "policy.kruise.io/delete-protection-")
    finally:
        for kind, name in KRUISE_WEBHOOK_CONFIGS:  # failurePolicy Fail must not outlive the process
            await cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), timeout=30)
        await cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
    assert code == 0
