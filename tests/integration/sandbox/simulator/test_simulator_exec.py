"""``kubectl exec`` on the default (fake) runtime: the API path works, the runtime says what to use."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from simulator_testkit import Cluster, is_ready, pod_manifest

KUBECTL = Path(sys.executable).parent / "kubectl"


@pytest.fixture
def kubectl(cluster: Cluster, tmp_path: Path):
    if not KUBECTL.exists() and shutil.which("kubectl") is None:
        pytest.skip("kubectl binary not available")

    async def run(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            str(KUBECTL),
            "--kubeconfig",
            str(cluster.simulator.kubeconfig_path),
            "--cache-dir",
            str(tmp_path / "cache"),
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        return proc.returncode or 0, out.decode(), err.decode()

    return run


async def test_exec_on_the_fake_runtime_names_the_containerd_mode(cluster: Cluster, kubectl):
    await cluster.create(pod_manifest("shell", {"name": "app", "image": "nginx:1.25"}))
    await cluster.wait_for("pods", "shell", is_ready)
    code, out, err = await kubectl("exec", "shell", "--", "true")
    assert (code, out) == (1, "")
    assert "exec is not supported by the fake runtime; use --runtime containerd" in err, err
    code, _, err = await kubectl("attach", "shell")
    assert code == 1 and "attach is not supported by the fake runtime" in err, err


async def test_exec_is_validated_before_the_kubelet(cluster: Cluster, kubectl):
    await cluster.create(pod_manifest("checked", {"name": "app", "image": "nginx:1.25"}))
    await cluster.wait_for("pods", "checked", is_ready)
    code, _, err = await kubectl("exec", "checked", "-c", "nope", "--", "true")
    assert code == 1 and "container nope is not valid for pod checked" in err, err
