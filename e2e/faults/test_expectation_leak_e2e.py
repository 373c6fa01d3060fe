"""Fault scenario 6, expectation leak: the CloneSet controller never hears of one pod it created.

The pods informer's `notification_fault` drops the first "add" notification of one CloneSet pod (the
cache still holds the pod, as when an event is lost between watch and handler), so the controller's
scale expectation for that pod is never observed. The CloneSet is then scaled up: the controller must
stay blocked only until `--expectation-timeout` (set short here), say so in its log and in
`cloneset_scale_expectation_leakage`, drop the expectation (ForceDeleteTimeoutExpectationGate, which
upstream needs for the same) and reach the new replicas with no pod created twice.

The controller runs in this process (against the sandbox's real apiserver) because the fault is
injected into its informer; everything else is the sandbox's. Figures are printed (`-s` shows them).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import structlog.testing
from harness import Cluster, until
from prometheus_client import REGISTRY

from kruise.api.features import FeatureGates
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.resources import PODS
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.cloneset import SETUP

EXPECTATION_TIMEOUT = 3.0
FIRST, SCALED = 2, 5
BOUND = 90.0


def cloneset(namespace: str, replicas: int) -> dict[str, Any]:
    """Fully spelled out: this cluster runs no kruise-webhook to default it."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "leak", "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app": "leak"}},
            "scaleStrategy": {},
            "updateStrategy": {"type": "ReCreate", "partition": 0, "maxUnavailable": 1, "maxSurge": 0},
            "template": {
                "metadata": {"labels": {"app": "leak"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
            },
        },
    }


async def pod_names(cluster: Cluster, namespace: str) -> list[str]:
    _, out = await cluster.kubectl("get", "pods", "-n", namespace, "-l", "app=leak", "-o", "json")
    return sorted(p["metadata"]["name"] for p in json.loads(out)["items"])


def leakage(namespace: str) -> float:
    labels = {"namespace": namespace, "name": "leak"}
    return REGISTRY.get_sample_value("cloneset_scale_expectation_leakage_total", labels) or 0.0


async def test_lost_pod_event_unblocks_after_expectation_timeout(sandbox_only: Cluster):
    cluster = sandbox_only
    namespace = f"e2e-fault-leak-{uuid.uuid4().hex[:6]}"
    await cluster.kubectl("create", "namespace", namespace)
    client = await Client.from_kubeconfig(cluster.kubeconfig, qps=200, burst=200)
    ctx = ManagerContext(
        client=client,
        informers=SharedInformerFactory(client),
        feature_gates=FeatureGates.from_flag("ForceDeleteTimeoutExpectationGate=true"),
        expectation_timeout=EXPECTATION_TIMEOUT,
    )
    controller = SETUP.build(ctx)
    dropped: list[str] = []

    def drop_first_add(kind: str, obj: Any) -> bool:
        meta = obj.get("metadata") or {}
        ours = meta.get("namespace") == namespace and (meta.get("labels") or {}).get("app") == "leak"
        if kind == "add" and ours and not dropped:
            dropped.append(meta["name"])
            return True
        return False

    ctx.informers.informer(PODS).notification_fault = drop_first_add
    seen: list[str] = []
    try:
        with structlog.testing.capture_logs() as logs:
            ctx.informers.start()
            assert await ctx.informers.wait_for_cache_sync(60)
            controller.start()
            async with asyncio.timeout(BOUND):
                await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, FIRST)))
                first = await until(lambda: pod_names(cluster, namespace), lambda n: len(n) == FIRST,
                                    f"{FIRST} pods created")  # fmt: skip
                assert len(dropped) == 1 and dropped[0] in first, dropped

                started = time.monotonic()
                await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, SCALED)))
                final = await until(lambda: pod_names(cluster, namespace), lambda n: len(n) >= SCALED,
                                    f"{SCALED} pods after the expectation timeout", timeout=60)  # fmt: skip
                blocked = time.monotonic() - started

                # Settled: the controller's status agrees and no further pod appears.
                async def status() -> dict[str, Any]:
                    _, out = await cluster.kubectl(
                        "get", "clonesets.v1alpha1.apps.kruise.io", "leak", "-n", namespace, "-o", "json"
                    )
                    return json.loads(out).get("status") or {}

                await until(status, lambda s: s.get("replicas") == SCALED, "status.replicas == 5")
                seen = await pod_names(cluster, namespace)
        overtime = [e for e in logs if e.get("event") == "scale expectations unsatisfied overtime"]
        drops = ctx.informers.informer(PODS).dropped_notifications
        print(
            f"\nFAULT expectation-leak: notifications dropped={drops}"
            f" expectation_timeout={EXPECTATION_TIMEOUT}s scale-up blocked for {blocked:.1f}s"
            f" leakage_metric={leakage(namespace):.0f} overtime_logs={len(overtime)}"
            f" pods={len(seen)}/{SCALED} duplicates={len(seen) - SCALED} lost={SCALED - len(seen)}"
        )
        assert drops == 1
        assert overtime and overtime[0]["pending"] == {"create": [dropped[0]]}, overtime
        assert leakage(namespace) >= 1
        assert set(first) <= set(final) and len(seen) == SCALED, (first, final, seen)
    finally:
        await controller.stop(timeout=5)
        await ctx.informers.stop()
        for recorder in ctx.recorders:
            await recorder.stop()
        await client.close()
        await cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
