"""Fault scenario 2, slow webhook: kruise-webhook SIGSTOPped past the pod webhook's timeoutSeconds.

A stopped process still has its listening socket, so kube-apiserver connects and then waits: only
`timeoutSeconds` ends the call, and the pod webhook's failurePolicy Fail turns it into a refused create
worded as kube-apiserver's (`failed calling webhook "mpod.kb.io": failed to call webhook: Post
"<url>?timeout=<n>s": context deadline exceeded`). The configurations' timeout is lowered to TIMEOUT
the way `helm upgrade` would set it (template emptied, every webhook's timeoutSeconds set), so the
stall (STALL seconds) spans several timeouts. A CloneSet (with a SidecarSet matching its pods) is
scaled up during the stall (it was created before, with 0 replicas: a CloneSet create is itself sent to
kruise-webhook), and a user's pod create is tried once per timeout. After SIGCONT every
CloneSet pod exists once, with its sidecar and readiness gates. Figures are printed (`-s`).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from pathlib import Path

from harness import KRUISE_WEBHOOK_CONFIGS, Cluster, until, webhook_process_ready
from test_webhook_outage_e2e import (
    GATES,
    SIDECAR,
    cloneset,
    injects_sidecar,
    pods,
    ready,
    refused_creates,
    sidecarset,
    start_manager,
    start_webhook,
)

from tests.kit.ports import free_port

REPLICAS = 10
TIMEOUT = 2
STALL = 8.0


async def lower_timeouts(cluster: Cluster, seconds: int) -> None:
    """Every webhook's timeoutSeconds, as `helm upgrade --set webhookConfiguration.timeoutSeconds=`
    writes it: the stored template emptied so kruise-webhook adopts the new webhooks."""
    for kind, name in KRUISE_WEBHOOK_CONFIGS:
        _, out = await cluster.kubectl("get", kind, name, "-o", "json")
        ops = [{"op": "add", "path": "/metadata/annotations/template", "value": ""}]
        ops += [
            {"op": "replace", "path": f"/webhooks/{i}/timeoutSeconds", "value": seconds}
            for i in range(len(json.loads(out)["webhooks"]))
        ]
        await cluster.kubectl("patch", kind, name, "--type=json", "-p", json.dumps(ops))


async def timeouts_are(cluster: Cluster, seconds: int) -> bool:
    _, out = await cluster.kubectl(
        "get", KRUISE_WEBHOOK_CONFIGS[0][0], KRUISE_WEBHOOK_CONFIGS[0][1], "-o", "json"
    )
    return {h.get("timeoutSeconds") for h in json.loads(out)["webhooks"]} == {seconds}


def user_pod(namespace: str, name: str) -> str:
    return json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]},
    })  # fmt: skip


async def test_webhook_stalled_past_its_timeout(sandbox_only: Cluster, tmp_path: Path):
    cluster = sandbox_only
    suffix = uuid.uuid4().hex[:6]
    ns, app = f"e2e-fault-slow-{suffix}", f"slow-{suffix}"
    for name in ("kruise-system", ns):
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))  # fmt: skip
    port, certs = free_port(), tmp_path / "certs"
    webhook = await start_webhook(cluster, port, certs)
    manager = await start_manager(cluster)
    try:
        await webhook_process_ready(cluster, port)
        await lower_timeouts(cluster, TIMEOUT)
        await until(lambda: timeouts_are(cluster, TIMEOUT), bool, f"timeoutSeconds {TIMEOUT} kept")
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(sidecarset(app)))
        await until(lambda: injects_sidecar(cluster, ns, app), bool, "SidecarSet in the webhook's cache")

        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(ns, app, 0)))
        webhook.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        # the scale subresource is not sent to the CloneSet webhooks (their rules name "clonesets"), so
        # the stall reaches the controller's pod creates, as an HPA scale-up would
        await cluster.kubectl("scale", "clonesets.apps.kruise.io/outage", "-n", ns, f"--replicas={REPLICAS}")
        answers: list[tuple[int, str]] = []
        while time.monotonic() - stopped < STALL:  # the fault's length: one user create per timeout
            name = f"user-{len(answers)}"
            answers.append(await cluster.kubectl("create", "-f", "-", stdin=user_pod(ns, name), check=False))
        during = len(await pods(cluster, ns))
        webhook.send_signal(signal.SIGCONT)
        resumed = time.monotonic()

        done = await until(lambda: pods(cluster, ns), lambda p: sum(map(ready, p)) >= REPLICAS,
                           "every CloneSet pod ready", timeout=90)  # fmt: skip
        recovered = time.monotonic() - resumed
        refused = await refused_creates(cluster, ns)
        code, out = await cluster.kubectl("create", "-f", "-", stdin=user_pod(ns, "user-after"), check=False)
        expected = (
            'Internal error occurred: failed calling webhook "mpod.kb.io": failed to call webhook: '
            f'Post "https://127.0.0.1:{port}/mutate-pod?timeout={TIMEOUT}s": context deadline exceeded'
        )
        worded = sum(code != 0 and expected in text for code, text in answers)
        members = [p for p in done if p["metadata"]["labels"].get("app") == app]
        uninjected = [
            p["metadata"]["name"] for p in members
            if SIDECAR not in {c["name"] for c in p["spec"]["containers"]}
            or not {g["conditionType"] for g in p["spec"].get("readinessGates") or []} >= GATES
        ]  # fmt: skip
        instance_ids = {p["metadata"]["labels"].get("apps.kruise.io/cloneset-instance-id") for p in members}
        print(
            f"\nFAULT slow-webhook: timeoutSeconds {TIMEOUT}, stalled {resumed - stopped:.1f}s;"
            f" user creates refused {worded}/{len(answers)} with the apiserver's timeout error;"
            f" CloneSet creates refused {refused}; pods admitted during the stall {during};"
            f" all {REPLICAS} ready {recovered:.1f}s after SIGCONT; admitted without injection"
            f" {len(uninjected)}; duplicates {len(members) - REPLICAS}"
        )
        assert answers and worded == len(answers), answers
        assert during == 0, "a pod was admitted while the webhook was stalled (failurePolicy Fail)"
        assert code == 0, out
        assert uninjected == [], uninjected
        assert len(members) == REPLICAS and len(instance_ids) == REPLICAS
    finally:
        if webhook.returncode is None:
            webhook.send_signal(signal.SIGCONT)
        for kind, name in KRUISE_WEBHOOK_CONFIGS:  # failurePolicy Fail must not outlive the process
            await cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)
        for process in (webhook, manager):
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), timeout=30)
        await cluster.kubectl("delete", "sidecarset", f"fault-{app}", "--ignore-not-found", check=False)
        await cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
