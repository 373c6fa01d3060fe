"""The seed's SidecarSet example through the real `kruise-webhook` process and real kubectl: the pod
comes back with `sidecar1` (IS_INJECTED=true) and the SidecarSet's log-volume, and runs 2/2."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import uuid

from harness import KRUISE_WEBHOOK_CONFIGS, SEED_002_POD, SEED_002_SIDECARSET, Cluster, webhook_process_ready

from tests.kit.ports import free_port


def _seed_pod_in(namespace: str) -> str:
    """Seed 002's test-pod, placed in this test's own namespace."""
    return SEED_002_POD.replace("  name: test-pod\n", f"  name: test-pod\n  namespace: {namespace}\n")


async def _until(probe, timeout: float = 60.0) -> None:
    """Re-run `probe` (one kubectl round trip each) until it holds."""
    async with asyncio.timeout(timeout):
        while True:
            if await probe():
                return
            await asyncio.sleep(0.2)


async def test_seed_sidecarset_and_pod(sandbox_only: Cluster, tmp_path):
    cluster = sandbox_only
    ns = f"e2e-sc-{uuid.uuid4().hex[:6]}"
    name = f"test-sidecarset-{uuid.uuid4().hex[:4]}"
    for namespace in ("kruise-system", ns):
        manifest = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kruise.webhook.main", "--kubeconfig", str(cluster.kubeconfig),
        "--namespace", "kruise-system", "--bind-address", "127.0.0.1", "--port", str(port),
        "--webhook-url", f"https://127.0.0.1:{port}", "--cert-dir", str(tmp_path / "certs"),
        "--shutdown-grace-seconds", "1",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await webhook_process_ready(cluster, port)
        await cluster.kubectl(
            "apply", "-f", "-", stdin=SEED_002_SIDECARSET.replace("name: test-sidecarset", f"name: {name}")
        )
        _, out = await cluster.kubectl("get", "sidecarset", name, "-o", "json")
        annotations = json.loads(out)["metadata"]["annotations"]
        assert {"kruise.io/sidecarset-hash", "kruise.io/sidecarset-hash-without-image"} <= set(annotations)
        _, out = await cluster.kubectl("get", "sidecarset", name)
        assert out.split()[:5] == ["NAME", "MATCHED", "UPDATED", "READY", "AGE"]

        async def injected_on_dry_run() -> bool:
            # dryRun: the webhook answers exactly as for a real create, and nothing is stored
            _, out = await cluster.kubectl("apply", "--dry-run=server", "-o", "json", "-f", "-",
                                           stdin=_seed_pod_in(ns))  # fmt: skip
            return [c["name"] for c in json.loads(out)["spec"]["containers"]] == ["sidecar1", "app"]

        await _until(injected_on_dry_run)  # the webhook's SidecarSet cache has caught up
        code, _ = await cluster.kubectl("get", "pod", "test-pod", "-n", ns, check=False)
        assert code != 0

        await cluster.kubectl("apply", "-f", "-", stdin=_seed_pod_in(ns))
        _, out = await cluster.kubectl("get", "pod", "test-pod", "-n", ns, "-o", "json")
        pod = json.loads(out)
        sidecar = pod["spec"]["containers"][0]
        assert sidecar["name"] == "sidecar1"
        assert {"name": "IS_INJECTED", "value": "true"} in sidecar["env"]
        assert sidecar["command"] == ["sleep", "999d"]
        assert sidecar["imagePullPolicy"] == "Always"
        assert {"name": "log-volume", "mountPath": "/var/log"} in sidecar["volumeMounts"]
        assert {"name": "log-volume", "emptyDir": {}} in pod["spec"]["volumes"]
        assert pod["metadata"]["annotations"]["kruise.io/sidecarset-injected-list"] == name

        await cluster.kubectl("wait", "--for=condition=Ready", "pod/test-pod", "-n", ns, "--timeout=60s")
        _, out = await cluster.kubectl("get", "pod", "test-pod", "-n", ns)
        assert out.splitlines()[1].split()[:3] == ["test-pod", "2/2", "Running"]
    finally:
        for kind, config in KRUISE_WEBHOOK_CONFIGS:  # failurePolicy Fail must not outlive the process
            await cluster.kubectl("delete", kind, config, "--ignore-not-found", check=False)
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), timeout=30)
        await cluster.kubectl("delete", "sidecarset", name, "--ignore-not-found", check=False)
        await cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
    assert code == 0
