"""Crash safety: kruise-manager is SIGKILLed in the middle of an in-place rollout of 20 pods and a
fresh process takes over. The rollout must finish with every pod kept (same UIDs), every pod
updated exactly once (restartCount 1, one container batch), and — sampled on every pod event —
never more pods unready than maxUnavailable allows."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import uuid
from typing import Any

from harness import Cluster

from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import PODS

REPLICAS = 20
MAX_UNAVAILABLE = 3
LEASE = 4


def cloneset(namespace: str, image: str) -> dict[str, Any]:
    """Fully spelled out: this cluster runs no kruise-webhook to default it."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "crash", "namespace": namespace},
        "spec": {
            "replicas": REPLICAS,
            "minReadySeconds": 1,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "crash"}},
            "scaleStrategy": {},
            "updateStrategy": {
                "type": "InPlaceIfPossible",
                "partition": 0,
                "maxUnavailable": MAX_UNAVAILABLE,
                "maxSurge": 0,
                "inPlaceUpdateStrategy": {},
            },
            "template": {
                "metadata": {"labels": {"app": "crash"}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    }


async def start_manager(cluster: Cluster, namespace: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kruise.manager.main", "--kubeconfig", str(cluster.kubeconfig),
        "--leader-election-namespace", namespace, "--metrics-addr", "127.0.0.1:0",
        "--health-probe-addr", "127.0.0.1:0", "--leader-election-lease-duration", str(LEASE),
        "--leader-election-renew-deadline", "3", "--leader-election-retry-period", "0.3",
        "--controllers", "cloneset,podreadiness", "--logging-format", "json",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
    )


async def status_of(cluster: Cluster, namespace: str) -> dict[str, Any]:
    # v1alpha1 named: with no kruise-webhook, the 2.0 set's preferred v1beta1 would find no converter
    _, out = await cluster.kubectl(
        "get", "clonesets.v1alpha1.apps.kruise.io", "crash", "-n", namespace, "-o", "json"
    )
    return json.loads(out).get("status") or {}


async def until_status(cluster: Cluster, namespace: str, predicate, timeout: float = 120.0) -> dict[str, Any]:
    async with asyncio.timeout(timeout):
        while not predicate(status := await status_of(cluster, namespace)):  # noqa: ASYNC110 - kubectl polls
            await asyncio.sleep(0.1)
    return status


async def test_rollout_survives_manager_sigkill(sandbox_only: Cluster):
    cluster = sandbox_only
    namespace = f"e2e-crash-{uuid.uuid4().hex[:6]}"
    await cluster.kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
    )
    client = await Client.from_kubeconfig(cluster.kubeconfig, qps=500, burst=500)
    sampler = SharedInformer(client, PODS, namespace)
    worst = {"unready": 0}
    counting = asyncio.Event()

    def sample(*_: Any) -> None:
        if counting.is_set():
            unready = sum(not ready(p) for p in sampler.list())
            worst["unready"] = max(worst["unready"], unready)

    sampler.add_event_handler(on_add=sample, on_update=sample, on_delete=sample)
    sampler.start()
    first = await start_manager(cluster, namespace)
    second = None
    try:
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, "nginx:1.25")))
        await until_status(cluster, namespace, lambda s: s.get("availableReplicas") == REPLICAS)
        before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in sampler.list()}
        assert len(before) == REPLICAS

        counting.set()
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, "nginx:1.26")))
        mid = await until_status(
            cluster,
            namespace,
            lambda s: MAX_UNAVAILABLE <= (s.get("updatedReplicas") or 0) < REPLICAS - MAX_UNAVAILABLE,
        )
        first.send_signal(signal.SIGKILL)
        await first.wait()
        assert mid["updatedReplicas"] < REPLICAS
        second = await start_manager(cluster, namespace)
        final = await until_status(
            cluster,
            namespace,
            lambda s: s.get("updatedReadyReplicas") == REPLICAS and s.get("availableReplicas") == REPLICAS,
        )
        assert final["currentRevision"] == final["updateRevision"]

        after = {
            p["metadata"]["name"]: p for p in sampler.list() if not p["metadata"].get("deletionTimestamp")
        }
        assert {n: p["metadata"]["uid"] for n, p in after.items()} == before, "a pod was lost or replaced"
        for name, pod in after.items():
            assert pod["spec"]["containers"][0]["image"] == "nginx:1.26"
            assert pod["status"]["containerStatuses"][0]["restartCount"] == 1, (
                f"{name} restarted more than once"
            )
            state = json.loads(pod["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"])
            assert len(state["containerBatchesRecord"]) == 1, f"{name} was updated twice"
        assert worst["unready"] <= MAX_UNAVAILABLE, worst
    finally:
        for process in (first, second):
            if process is not None and process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await process.wait()
        await sampler.stop()
        await client.close()
        await cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
