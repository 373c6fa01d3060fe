"""Fault scenario 7, PodUnavailableBudget under faults: 50 concurrent evictions while every kruise-manager
replica (so the PUB controller) is down.

A PUB (maxUnavailable BUDGET) guards a CloneSet of REPLICAS ready pods. Both kruise-manager replicas are
stopped, so nothing recomputes the PUB status; then EVICTIONS policy/v1 Evictions are POSTed at once to the
apiserver, which sends each to one of two kruise-webhook replicas behind the webhook Service (an EndpointSlice
per replica, picked per call as kube-proxy would). As upstream 1.9, the webhook itself takes a slot of the
budget for each admitted disruption by writing the PUB status (disruptedPods, unavailableAllowed one
lower) with an optimistic update, so the two replicas and their concurrent requests cannot hand out more
slots than the status holds: never more than BUDGET pods may be evicted, refusals fail closed. Then the
managers come back and the PUB status must settle: the evicted pods' disruptedPods records drop out as the
CloneSet replaces them, unavailableAllowed is recomputed to BUDGET. Figures are printed (`-s` shows them).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from harness import KRUISE_WEBHOOK_CONFIGS, Cluster, until, webhook_process_ready

from kruise.kube.client import Client
from kruise.kube.errors import ApiError
from kruise.webhook.configurations import ClientTarget, mutating_configuration, validating_configuration
from tests.kit.ports import free_port

REPLICAS = 30
BUDGET = 5
EVICTIONS = 50
WEBHOOKS = 2
MANAGERS = 2
LEASE, RENEW, RETRY = 4, 3, 0.3  # seconds, as e2e/manager's failover test
SYSTEM = "kruise-system"
SERVICE = "kruise-webhook-service"
PUB_REFUSAL = "pub unavailable allowed is negative"
CONFLICT_REFUSAL = "due to conflicts"


async def start_webhook(cluster: Cluster, port: int, certs: Path, log: Path) -> asyncio.subprocess.Process:
    """A replica in Service mode: the webhook configurations name the Service, not this port."""
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kruise.webhook.main", "--kubeconfig", str(cluster.kubeconfig),
            "--namespace", SYSTEM, "--bind-address", "127.0.0.1", "--port", str(port),
            "--cert-dir", str(certs), "--shutdown-grace-seconds", "1",
            stdout=out, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip


async def start_manager(cluster: Cluster, host: str, lease: str, log: Path) -> asyncio.subprocess.Process:
    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kruise.manager.main", "--kubeconfig", str(cluster.kubeconfig),
            "--leader-election-namespace", SYSTEM, "--leader-election-id", lease,
            "--leader-election-lease-duration", str(LEASE), "--leader-election-renew-deadline", str(RENEW),
            "--leader-election-retry-period", str(RETRY),
            "--metrics-addr", "127.0.0.1:0", "--health-probe-addr", "127.0.0.1:0",
            "--controllers", "cloneset,podreadiness,podunavailablebudget",
            "--rest-config-qps", "100", "--rest-config-burst", "100",
            env={**os.environ, "HOSTNAME": host}, stdout=out, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip


async def stop(process: asyncio.subprocess.Process | None) -> None:
    if process is not None and process.returncode is None:
        process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), timeout=30)


def webhook_service(ports: list[int]) -> list[dict[str, Any]]:
    """The webhook Service without a selector and one EndpointSlice per replica (127.0.0.1:port), so the
    apiserver spreads the admission calls over both processes."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": SYSTEM},
        "spec": {"ports": [{"name": "https", "port": 443, "protocol": "TCP"}]},
    }
    slices = [
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": f"{SERVICE}-{i}",
                "namespace": SYSTEM,
                "labels": {"kubernetes.io/service-name": SERVICE},
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}],
        }
        for i, port in enumerate(ports)
    ]
    return [service, *slices]


def chart_configurations() -> list[dict[str, Any]]:
    """Both configurations as the chart installs them (naming the Service, no caBundle yet): behind a
    Service kruise-webhook only patches them, as upstream's does, so somebody has to create them."""
    target = ClientTarget(namespace=SYSTEM, service=SERVICE)
    return [mutating_configuration(target), validating_configuration(target)]


def cloneset(namespace: str, app: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "guarded", "namespace": namespace},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
            },
        },
    }


def pub(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "guard", "namespace": namespace},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "guarded"},
            "maxUnavailable": BUDGET,
        },
    }


async def pods(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    _, out = await cluster.kubectl("get", "pods", "-n", namespace, "-o", "json")
    return json.loads(out)["items"]


async def pub_status(cluster: Cluster, namespace: str) -> dict[str, Any]:
    _, out = await cluster.kubectl("get", "podunavailablebudgets.policy.kruise.io", "guard", "-n", namespace,
                                   "-o", "json")  # fmt: skip
    return json.loads(out).get("status") or {}


def ready(pod: dict[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return not pod["metadata"].get("deletionTimestamp") and any(
        c["type"] == "Ready" and c["status"] == "True" for c in conditions
    )


def guarded(found: list[dict[str, Any]]) -> bool:
    """Every pod Ready and carrying the related-pub annotation the webhook finds its budget by."""
    return len(found) == REPLICAS and all(
        ready(p) and (p["metadata"].get("annotations") or {}).get("kruise.io/related-pub") == "guard"
        for p in found
    )


def remaining(found: list[dict[str, Any]]) -> set[str]:
    """Names of the pods not being deleted."""
    return {p["metadata"]["name"] for p in found if not p["metadata"].get("deletionTimestamp")}


def settled(status: dict[str, Any]) -> bool:
    return (
        status.get("totalReplicas") == REPLICAS
        and status.get("desiredAvailable") == REPLICAS - BUDGET
        and status.get("currentAvailable") == REPLICAS
        and status.get("unavailableAllowed") == BUDGET
        and not status.get("disruptedPods")
        and not status.get("unavailablePods")
    )


async def pod_decisions(port: int) -> Counter[str]:
    """A replica's `/validate-pod` admission decisions so far, by allowed=true|false (its /metrics)."""
    async with httpx.AsyncClient(verify=False, timeout=5.0) as http:
        text = (await http.get(f"https://127.0.0.1:{port}/metrics")).text
    found: Counter[str] = Counter()
    for line in text.splitlines():
        if line.startswith("kruise_webhook_admission_decisions_total{") and 'webhook="/validate-pod"' in line:
            allowed = line.split('allowed="', 1)[1].split('"', 1)[0]
            found[allowed] += int(float(line.rsplit(" ", 1)[1]))
    return found


async def evict(client: Client, namespace: str, pod: str) -> tuple[str, int, str]:
    try:
        await client.evict(pod, namespace)
    except ApiError as exc:
        return pod, exc.code, exc.message
    return pod, 201, ""


async def test_concurrent_evictions_with_the_pub_controller_down(sandbox_only: Cluster, tmp_path: Path):
    cluster = sandbox_only
    suffix = uuid.uuid4().hex[:6]
    namespace, app, lease = f"e2e-fault-pub-{suffix}", f"guarded-{suffix}", f"kruise-manager-pub-{suffix}"
    for name in (SYSTEM, namespace):
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))  # fmt: skip
    ports = [free_port() for _ in range(WEBHOOKS)]
    for obj in (*webhook_service(ports), *chart_configurations()):
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(obj))
    webhooks: list[asyncio.subprocess.Process] = []
    managers: list[asyncio.subprocess.Process] = []
    client = await Client.from_kubeconfig(cluster.kubeconfig, qps=1000, burst=EVICTIONS)
    try:
        for i, port in enumerate(ports):  # one after the other: the second reuses the first's CA Secret
            log = tmp_path / f"webhook-{i}.log"
            webhooks.append(await start_webhook(cluster, port, tmp_path / f"certs-{i}", log))
            await webhook_process_ready(cluster, port)
        managers = [
            await start_manager(cluster, f"pub-manager-{i}", lease, tmp_path / f"manager-{i}.log")
            for i in range(MANAGERS)
        ]
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(pub(namespace)))
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, app)))
        found = await until(lambda: pods(cluster, namespace), guarded,
                            f"{REPLICAS} ready pods with the related-pub annotation", timeout=90)  # fmt: skip
        before = await until(lambda: pub_status(cluster, namespace), settled, "the PUB status computed")

        for manager in managers:  # the PUB controller is down from here on
            await stop(manager)
        names = sorted(p["metadata"]["name"] for p in found)
        targets = [names[i % len(names)] for i in range(EVICTIONS)]  # every pod once, some twice
        counted = [await pod_decisions(port) for port in ports]
        started = time.monotonic()
        answers = await asyncio.gather(*(evict(client, namespace, name) for name in targets))
        took = time.monotonic() - started
        served = [await pod_decisions(port) - was for port, was in zip(ports, counted, strict=True)]

        codes = Counter(code for _, code, _ in answers)
        admitted = {pod for pod, code, _ in answers if code == 201}
        refused = [message for _, code, message in answers if code != 201]
        by_budget = sum(PUB_REFUSAL in m for m in refused)
        by_conflict = sum(CONFLICT_REFUSAL in m for m in refused)
        unexplained = [m for m in refused if PUB_REFUSAL not in m and CONFLICT_REFUSAL not in m]
        during = await pub_status(cluster, namespace)
        gone = await until(lambda: pods(cluster, namespace),
                           lambda p: len(remaining(p)) == REPLICAS - len(admitted),
                           "the admitted evictions' pods deleted")  # fmt: skip
        left = remaining(gone)
        deleted = set(names) - left

        restarted = time.monotonic()
        managers = [
            await start_manager(cluster, f"pub-manager-{i}", lease, tmp_path / f"manager-again-{i}.log")
            for i in range(MANAGERS)
        ]
        # the CloneSet replaced the evicted pods and the PUB controller counted them (not the stale status)
        await until(lambda: pods(cluster, namespace), lambda p: len([x for x in p if ready(x)]) == REPLICAS,
                    "the evicted pods replaced and ready", timeout=90)  # fmt: skip
        after = await until(lambda: pub_status(cluster, namespace), settled,
                            "the PUB status settled after the managers' restart", timeout=90)  # fmt: skip
        settle = time.monotonic() - restarted
        print(
            f"\nFAULT pub: {REPLICAS} pods, budget {BUDGET} (maxUnavailable),"
            f" {EVICTIONS} concurrent evictions"
            f" through {WEBHOOKS} kruise-webhook replicas, kruise-manager x{MANAGERS} down;"
            f" /validate-pod decisions per replica {[dict(c) for c in served]};"
            f" answers {dict(codes)} in {took:.2f}s; pods admitted {len(admitted)}, refused {len(refused)}"
            f" (budget {by_budget}, conflicts {by_conflict}, other {len(unexplained)});"
            f" pods deleted {len(deleted)};"
            f" PUB status while down: unavailableAllowed {during.get('unavailableAllowed')},"
            f" disruptedPods {len(during.get('disruptedPods') or {})};"
            f" settled {settle:.1f}s after the restart"
        )
        assert before["unavailableAllowed"] == BUDGET
        assert len(admitted) <= BUDGET, sorted(admitted)
        assert len(deleted) <= BUDGET and deleted == admitted, (sorted(deleted), sorted(admitted))
        assert admitted, "no eviction was admitted: the budget had room for some"
        assert unexplained == [], unexplained
        assert all(sum(c.values()) > 0 for c in served), served  # both replicas answered
        assert all(code == 403 for _, code, message in answers if PUB_REFUSAL in message)
        # the webhook's own bookkeeping, with nothing else writing the status
        assert set(during.get("disruptedPods") or {}) == admitted
        assert during.get("unavailableAllowed") == BUDGET - len(admitted)
        assert after["unavailableAllowed"] == BUDGET
    finally:
        await client.close()
        for kind, name in KRUISE_WEBHOOK_CONFIGS:  # failurePolicy Fail must not outlive the processes
            await cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)
        for process in (*webhooks, *managers):
            await stop(process)
        for obj in webhook_service(ports):
            await cluster.kubectl("delete", obj["kind"], obj["metadata"]["name"], "-n", SYSTEM,
                                  "--ignore-not-found", check=False)  # fmt: skip
        await cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
