"""Two real kruise-manager processes: one leads; SIGKILL it and the standby leads within one lease."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
import uuid

from harness import Cluster

LEASE = 4  # seconds; renew deadline 3, retry 0.3


async def _start(cluster: Cluster, namespace: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kruise.manager.main", "--kubeconfig", str(cluster.kubeconfig),
        "--leader-election-namespace", namespace, "--metrics-addr", "127.0.0.1:0",
        "--health-probe-addr", "127.0.0.1:0", "--leader-election-lease-duration", str(LEASE),
        "--leader-election-renew-deadline", "3", "--leader-election-retry-period", "0.3",
        "--logging-format", "json",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip


async def _wait_line(proc: asyncio.subprocess.Process, text: str, timeout: float) -> float:
    """Read output until a line contains `text`; returns the monotonic time it was seen."""
    assert proc.stdout is not None
    async with asyncio.timeout(timeout):
        async for raw in proc.stdout:
            if text in raw.decode(errors="replace"):
                return time.monotonic()
    raise AssertionError(f"process exited ({proc.returncode}) before printing {text!r}")


async def _holder(cluster: Cluster, namespace: str) -> str:
    _, out = await cluster.kubectl("get", "lease", "kruise-manager", "-n", namespace, "-o", "json")
    return json.loads(out)["spec"]["holderIdentity"]


async def test_standby_takes_over_after_leader_is_killed(sandbox_only: Cluster):
    cluster = sandbox_only
    namespace = f"e2e-mgr-{uuid.uuid4().hex[:6]}"
    namespace_doc = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(namespace_doc))
    leader = await _start(cluster, namespace)
    standby = None
    try:
        await _wait_line(leader, "controllers started", 30)
        first_holder = await _holder(cluster, namespace)
        standby = await _start(cluster, namespace)
        await _wait_line(standby, "kruise-manager started", 30)
        leader.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        await leader.wait()
        took_over_at = await _wait_line(standby, "controllers started", 30)
        # safety: the standby waits out the lease from the last renewal it saw (at most one retry
        # period before the kill); liveness is the bounded wait for its line above
        assert took_over_at - killed_at >= LEASE - 1
        assert await _holder(cluster, namespace) not in ("", first_holder)

        standby.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(standby.wait(), 20) == 0
        assert await _holder(cluster, namespace) == ""  # released on clean shutdown
    finally:
        for proc in (leader, standby):
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
        await cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
