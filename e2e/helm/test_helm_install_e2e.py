"""Issue 19's done-when, with the real binaries: `kruise sandbox up --no-kruise`, then `helm install
kruise helm/kruise` -> kruise-system's pods Running and Ready within 60 s (two managers, one leader,
two webhooks, a daemon per node); seed 000's CloneSet example works through them; deleting the
leader pod hands the Lease over; `helm uninstall` leaves no webhook configuration behind."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import SAMPLE_CLONESET, Cluster, SandboxProcess, ready_kubeconfig

CHART = Path(__file__).resolve().parents[2] / "helm" / "kruise"
HELM = Path(sys.executable).parent / "helm"
NODES = 2
INSTALL_DEADLINE = 180.0  # a bound for a stuck install, not a speed claim

pytestmark = pytest.mark.skipif(not HELM.exists(), reason="no helm binary in the venv")


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("needs `kruise sandbox up`; KUBECONFIG points at another cluster")
    kubeconfig = tmp_path_factory.mktemp("helm-sandbox") / "kubeconfig"
    sandbox = SandboxProcess.start("--nodes", str(NODES), "--kubeconfig", str(kubeconfig), "--no-kruise")
    try:
        yield Cluster(ready_kubeconfig(sandbox.wait_for("ready", 60)), is_sandbox=True, nodes=NODES)
    finally:
        sandbox.terminate()


def helm(cluster: Cluster, home: Path, *args: str) -> str:
    env = {
        **os.environ,
        "KUBECONFIG": str(cluster.kubeconfig),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }
    result = subprocess.run([str(HELM), *args], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"helm {' '.join(args)}: {result.stderr}{result.stdout}"
    return result.stdout


async def pods(cluster: Cluster, namespace: str, selector: str) -> list[dict]:
    _, out = await cluster.kubectl("get", "pods", "-n", namespace, "-l", selector, "-o", "json")
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


def running_and_ready(pod: dict) -> bool:
    status = pod.get("status") or {}
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])
    return status.get("phase") == "Running" and ready


async def eventually(check, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(what)
        await asyncio.sleep(0.5)


async def lease_holder(cluster: Cluster) -> str:
    code, out = await cluster.kubectl(
        "get",
        "lease",
        "kruise-manager",
        "-n",
        "kruise-system",
        "-o",
        "jsonpath={.spec.holderIdentity}",
        check=False,
    )
    return out.strip().rsplit("_", 1)[0] if code == 0 else ""


async def test_helm_install_runs_kruise_as_pods(bare: Cluster, tmp_path: Path):
    helm(bare, tmp_path, "install", "kruise", str(CHART))

    async def all_up() -> bool:
        wanted = {"controller-manager": 2, "webhook": 2, "daemon": NODES}
        for plane, count in wanted.items():
            found = await pods(bare, "kruise-system", f"control-plane={plane}")
            if len(found) != count or not all(map(running_and_ready, found)):
                return False
        return True

    await eventually(all_up, "kruise-system pods not Running and Ready", INSTALL_DEADLINE)
    _, listing = await bare.kubectl(
        "get", "pods", "-n", "kruise-system", "-l", "control-plane=controller-manager"
    )
    assert listing.count("kruise-controller-manager-") == 2  # as seed 000 shows them
    leader = await eventually(lambda: lease_holder(bare), "no leader")
    _, logs = await bare.kubectl("logs", "-n", "kruise-system", leader)
    assert "successfully acquired lease" in logs

    await bare.kubectl("apply", "-f", "-", stdin=SAMPLE_CLONESET)
    await bare.kubectl("wait", "cloneset/sample", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=60s")
    # kruise-webhook (pods behind kruise-webhook-service) refuses a selector that misses the template
    mismatched = SAMPLE_CLONESET.replace("name: sample", "name: bad").replace(
        "        app: sample", "        app: other"
    )
    code, refused = await bare.kubectl("apply", "-f", "-", stdin=mismatched, check=False)
    assert code != 0 and 'admission webhook "' in refused, refused

    await bare.kubectl("delete", "pod", "-n", "kruise-system", leader, "--wait=false")

    async def handed_over() -> str:
        holder = await lease_holder(bare)
        return holder if holder and holder != leader else ""

    await eventually(handed_over, "the Lease was not handed over after the leader's pod was deleted")
    await bare.kubectl("scale", "cloneset/sample", "--replicas=4")
    await bare.kubectl("wait", "cloneset/sample", "--for=jsonpath={.status.readyReplicas}=4", "--timeout=60s")

    helm(bare, tmp_path, "uninstall", "kruise", "--wait", "--timeout", "60s")
    _, hooks = await bare.kubectl(
        "get", "mutatingwebhookconfigurations,validatingwebhookconfigurations", "-o", "name"
    )
    assert "kruise" not in hooks
