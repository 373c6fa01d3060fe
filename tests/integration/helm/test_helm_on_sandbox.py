"""`helm install` of kruise-py's chart on the sandbox runs its real processes as pods.

What a user sees after `kruise sandbox up` (the default Helm install; seed 000/003's `kubectl get pods -n
kruise-system`): two kruise-manager replicas with one leader, two kruise-webhook replicas called
through `kruise-webhook-service`'s endpoints, a kruise-daemon per node (talking CRI to its node),
a CloneSet reconciled by the in-pod manager, another replica taking over when the leader's pod
is deleted, `helm upgrade` changing the feature gates, and `helm uninstall` removing the webhook
configurations the chart created.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from kruise.cli.helm_release import KRUISE_NAMESPACE, HelmRelease, find_helm, kruise_process_images
from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.simulator.client import ApiError, Client, resource_path

WAIT = 60.0


def helm_available() -> bool:
    try:
        find_helm()
    except FileNotFoundError:
        return False
    return True


pytestmark = pytest.mark.skipif(not helm_available(), reason="no helm binary")


async def until(check, what: str) -> Any:
    try:
        async with asyncio.timeout(WAIT):
            while True:
                value = await check()
                if value:
                    return value
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError(what) from None


def ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def cloneset(name: str, replicas: int, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
            },
        },
    }


async def test_chart_runs_kruise_as_pods_with_leader_handover(tmp_path: Path):
    # speed 2: the simulated durations around the processes (pulls, backoffs) stay short but realistic;
    # the processes' own probes keep real seconds at any speed
    release = HelmRelease(timeout=2 * WAIT)
    async with Sandbox(
        nodes=2, speed=2, crd_dir=None, process_images=kruise_process_images(), components=[release]
    ) as sandbox:
        client = Client(sandbox.kubeconfig)
        try:
            pods_path = resource_path("v1", "pods", KRUISE_NAMESPACE)

            async def pods_of(plane: str) -> list[dict[str, Any]]:
                listing = await client.list(pods_path, labelSelector=f"control-plane={plane}")
                return listing["items"]

            # `helm install --wait` saw every pod Ready once; a probe that misses a beat on a loaded
            # machine may flip one back for a moment, so readiness is awaited, not sampled once
            async def all_ready(plane: str, count: int) -> list[dict[str, Any]]:
                pods = await pods_of(plane)
                return pods if len(pods) == count and all(ready(p) for p in pods) else []

            managers = await until(lambda: all_ready("controller-manager", 2), "kruise-manager not Ready")
            await until(lambda: all_ready("webhook", 2), "kruise-webhook pods not Ready")
            assert sandbox.service_addresses == {}  # the webhook is reached through its Service only
            daemons = await until(lambda: all_ready("daemon", 2), "kruise-daemon pods not Ready")
            assert sorted(p["spec"]["nodeName"] for p in daemons) == ["node-1", "node-2"]
            assert all(p["status"]["podIP"] == p["status"]["hostIP"] for p in daemons)

            lease_path = resource_path("coordination.k8s.io/v1", "leases", KRUISE_NAMESPACE, "kruise-manager")

            async def holder() -> str:
                try:
                    lease = await client.get(lease_path)
                except ApiError:
                    return ""
                return (lease.get("spec") or {}).get("holderIdentity") or ""

            leader_identity = await until(holder, "no kruise-manager took the Lease")
            leader = leader_identity.rsplit("_", 1)[0]
            assert leader in {p["metadata"]["name"] for p in managers}

            # The validating webhook (a pod behind kruise-webhook-service) refuses a bad CloneSet.
            clonesets = resource_path("apps.kruise.io/v1alpha1", "clonesets", "default")
            with pytest.raises(ApiError) as refused:
                await client.create(clonesets, cloneset("bad", 1, {"app": "other"}))
            assert 'admission webhook "' in refused.value.message

            # Delete the leader's pod: the standby takes over and reconciles a new CloneSet.
            await client.delete(resource_path("v1", "pods", KRUISE_NAMESPACE, leader))

            async def new_leader() -> str:
                current = (await holder()).rsplit("_", 1)[0]
                return current if current and current != leader else ""

            successor = await until(new_leader, "no other kruise-manager took over the Lease")
            # the standby, or the replacement pod the ReplicaSet started, whichever campaigned first
            assert successor in {p["metadata"]["name"] for p in await pods_of("controller-manager")}
            await client.create(clonesets, cloneset("sample", 2, {"app": "sample"}))

            async def cloned() -> list[Any]:
                listing = await client.list(
                    resource_path("v1", "pods", "default"), labelSelector="app=sample"
                )
                return listing["items"] if len(listing["items"]) == 2 else []

            await until(cloned, "the new leader did not create the CloneSet's pods")

            # helm upgrade changes the gates of every process and the live webhooks' timeout (the
            # chart's empty `template` annotation clears kruise-webhook's stored copy, so the new
            # timeout is not rebuilt away); uninstall leaves no webhook behind.
            await release.run(sandbox, "upgrade", "kruise", str(release.chart), "--reuse-values",
                              "--set", "featureGates=ResourceDistributionGate=true",
                              "--set", "webhookConfiguration.timeoutSeconds=7")  # fmt: skip
            await release.wait_available(sandbox)
            configurations = [
                resource_path("admissionregistration.k8s.io/v1", plural, name=name)
                for plural, name in (
                    ("mutatingwebhookconfigurations", "kruise-mutating-webhook-configuration"),
                    ("validatingwebhookconfigurations", "kruise-validating-webhook-configuration"),
                )
            ]

            async def timeouts_settled() -> bool:
                # live webhooks and kruise-webhook's re-seeded template both say 7 (a stale template
                # would hold 30 and rebuild the webhooks back to it)
                for path in configurations:
                    config = await client.get(path)
                    stored = json.loads(config["metadata"]["annotations"].get("template") or "[]")
                    live = {hook.get("timeoutSeconds") for hook in config["webhooks"]}
                    if not stored or live != {7} or {h.get("timeoutSeconds") for h in stored} != {7}:
                        return False
                return True

            await until(timeouts_settled, "helm upgrade's timeoutSeconds=7 did not reach the live webhooks")
            managers = await pods_of("controller-manager")
            args = [
                p["spec"]["containers"][0]["args"]
                for p in managers
                if not p["metadata"].get("deletionTimestamp")
            ]
            assert args and all("--feature-gates=ResourceDistributionGate=true" in a for a in args)
            await release.run(sandbox, "uninstall", "kruise", "--wait", "--timeout", "60s")
            for plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
                listing = await client.list(resource_path("admissionregistration.k8s.io/v1", plural))
                assert not [c for c in listing["items"] if c["metadata"]["name"].startswith("kruise-")]
        finally:
            await client.close()
