"""Fault scenario 3, watch faults: mid-rollout the apiserver drops every watch and has compacted its
history, so every resume gets 410 Gone; repeated FAULTS times through a 200-pod in-place rollout.

kruise-webhook and kruise-manager (controllers: cloneset, podreadiness; no leader election) run as real
processes. A CloneSet of PODS pods (the leader-churn scenario's, env KRUISE_FAULT_CHURN_PODS, default 200)
rolls out an image change with InPlaceIfPossible in batches of 10 with minReadySeconds 2, so the rollout
spans several faults. From the first pod that begins its update, every PERIOD seconds the test asks the
sandbox's emulator (`POST /debug/faults/drop-watches?compact=true`, served because e2e's sandbox runs with
`--fault-endpoints`) to forget its watch history and close every open watch in one step: each informer's
resume from its last resourceVersion is answered 410 Gone and it must relist, delivering only the
difference — an event lost there would leave the CloneSet's expectations unsatisfied and the rollout
stuck, a pod seen twice could update it twice.

What counts is the leader-churn scenario's pod-watch bookkeeping (test_leader_churn_e2e: per pod UID, each
distinct in-place update state and container restart; UIDs ever seen): each pod updated exactly once, no
extra pods, and the CloneSet's status settled (updatedReadyReplicas == replicas, observedGeneration
current) within ROLLOUT_BOUND. Figures are printed (`-s`): rollout time, watches dropped, relists the
processes logged, and per fault the time to the next pod that began its update. docs/reliability.md
says what runs measured.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from harness import KRUISE_WEBHOOK_CONFIGS, Cluster, until, webhook_process_ready
from test_leader_churn_e2e import (
    CREATE_BOUND,
    NEW_IMAGE,
    OLD_IMAGE,
    PODS_COUNT,
    PodLog,
    cloneset,
    cloneset_status,
    room_for_pods,
    settled,
    watch_pods,
)

from kruise.kube.client import Client
from tests.kit.ports import free_port

pytestmark = pytest.mark.timeout(600)

PERIOD = 6.0
FAULTS = 4
ROLLOUT_BOUND = 300.0
RELIST_LINE = "watch history expired, relisting"


async def start_webhook(cluster: Cluster, port: int, certs: Path, log: Path) -> asyncio.subprocess.Process:
    with log.open("wb") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kruise.webhook.main", "--kubeconfig", str(cluster.kubeconfig),
            "--namespace", "kruise-system", "--bind-address", "127.0.0.1", "--port", str(port),
            "--webhook-url", f"https://127.0.0.1:{port}", "--cert-dir", str(certs),
            "--shutdown-grace-seconds", "1",
            stdout=out, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip


async def start_manager(cluster: Cluster, log: Path) -> asyncio.subprocess.Process:
    with log.open("wb") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kruise.manager.main", "--kubeconfig", str(cluster.kubeconfig),
            "--enable-leader-election", "false", "--metrics-addr", "127.0.0.1:0",
            "--health-probe-addr", "127.0.0.1:0", "--controllers", "cloneset,podreadiness",
            "--rest-config-qps", "100", "--rest-config-burst", "100", "--logging-format", "json",
            stdout=out, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip


@dataclass
class Faults:
    """(monotonic time, watches the emulator closed) per injected fault."""

    injected: list[tuple[float, int]] = field(default_factory=list)


async def inject(client: Client, pods: PodLog, faults: Faults) -> None:
    """From the first pod that began its in-place update, every PERIOD seconds: compact the watch history
    and drop every watch (one step on the emulator), FAULTS times."""
    await until(_async(lambda: any(r.updated_at for r in pods.pods.values())), bool,
                "the first pod to begin its update", timeout=120)  # fmt: skip
    for _ in range(FAULTS):
        answer = await client.request("POST", "/debug/faults/drop-watches", query=[("compact", "true")])
        faults.injected.append((time.monotonic(), int(answer["watchesDropped"])))
        await asyncio.sleep(PERIOD)  # the fault's rhythm, not a wait for a state


def next_progress(faults: Faults, updates: list[float]) -> list[float]:
    """Per fault, seconds to the next pod the test's watch saw begin its in-place update (faults after
    the last pod began have none): informers stuck after a 410 would show here."""
    delays = []
    for at, _ in faults.injected:
        later = [u for u in updates if u >= at]
        if later:
            delays.append(min(later) - at)
    return delays


def logged(path: Path, line: str) -> int:
    return path.read_text(errors="replace").count(line) if path.exists() else 0


def relists_by_resource(path: Path) -> dict[str, int]:
    """The process's JSON log lines saying an informer relisted after 410, per resource. An informer whose
    last event was the newest write resumes without one (nothing it needs was compacted), as on
    kube-apiserver."""
    counts: dict[str, int] = {}
    for line in path.read_text(errors="replace").splitlines():
        if RELIST_LINE in line:
            resource = json.loads(line)["resource"].split(".")[0]
            counts[resource] = counts.get(resource, 0) + 1
    return counts


async def test_watches_dropped_and_compacted_through_in_place_rollout(sandbox_only: Cluster, tmp_path: Path):
    cluster = sandbox_only
    namespace = f"e2e-fault-watch-{uuid.uuid4().hex[:6]}"
    for name in ("kruise-system", namespace):
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))  # fmt: skip
    client = await Client.from_kubeconfig(cluster.kubeconfig, qps=200, burst=200)
    pods, faults = PodLog(), Faults()
    manager_log, webhook_log = tmp_path / "kruise-manager.log", tmp_path / "kruise-webhook.log"
    port = free_port()
    webhook = await start_webhook(cluster, port, tmp_path / "certs", webhook_log)
    manager = await start_manager(cluster, manager_log)
    watcher = asyncio.create_task(watch_pods(client, namespace, pods))
    injecting: asyncio.Task[None] | None = None
    try:
        await until(lambda: room_for_pods(client), lambda n: n >= PODS_COUNT, f"room for {PODS_COUNT} pods",
                    timeout=120)  # fmt: skip
        await webhook_process_ready(cluster, port)
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, OLD_IMAGE)))
        await until(lambda: cloneset_status(cluster, namespace), settled, f"{PODS_COUNT} pods ready",
                    timeout=CREATE_BOUND)  # fmt: skip
        created = len(pods.pods)
        relists_before = logged(manager_log, RELIST_LINE), logged(webhook_log, RELIST_LINE)

        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, NEW_IMAGE)))
        started = time.monotonic()
        injecting = asyncio.create_task(inject(client, pods, faults))
        final = await until(lambda: _status_unless_failed(cluster, namespace, injecting), settled,
                            "the rollout through watch faults", timeout=ROLLOUT_BOUND)  # fmt: skip
        rollout = time.monotonic() - started
        mid_rollout = len(faults.injected)
        await until(_async(pods.rolled_out), bool, "the pod watch caught up", timeout=60)

        updates = [r.updated_at for r in pods.pods.values() if r.updated_at is not None]
        resumed = next_progress(faults, updates)
        relists = (
            logged(manager_log, RELIST_LINE) - relists_before[0],
            logged(webhook_log, RELIST_LINE) - relists_before[1],
        )
        live = {uid: r for uid, r in pods.pods.items() if uid not in pods.deleted}
        twice = sorted(r.name for r in live.values() if len(r.states) > 1 or r.restarts > 1)
        never = sorted(r.name for r in live.values() if not r.states or r.restarts == 0)
        extra = len(pods.pods) - PODS_COUNT
        print(
            f"\nFAULT watch-faults: pods {PODS_COUNT}, fault every {PERIOD:.0f}s from the first update;"
            f" rollout {rollout:.1f}s; faults mid-rollout {mid_rollout}"
            f" watches dropped {[n for _, n in faults.injected[:mid_rollout]]};"
            f" relists logged manager {relists[0]} {relists_by_resource(manager_log)} webhook {relists[1]};"
            f" test's pod-watch relists"
            f" {pods.relists}; first update after each fault {[round(d, 1) for d in resumed]};"
            f" pods updated twice {len(twice)}; pods not updated {len(never)}; extra pods {extra};"
            f" deleted {len(pods.deleted)}; logs {tmp_path}"
        )
        assert created == PODS_COUNT, created
        assert mid_rollout >= 2, f"only {mid_rollout} faults landed before the rollout finished"
        assert all(n > 0 for _, n in faults.injected[:mid_rollout]), faults.injected
        assert relists[0] >= mid_rollout, relists  # each fault made the manager's informers relist
        assert twice == [], twice
        assert never == [], never
        assert extra == 0 and not pods.deleted, (extra, pods.deleted)
        assert final["updatedReadyReplicas"] == PODS_COUNT
    finally:
        if injecting is not None:
            injecting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await injecting
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watcher
        for kind, name in KRUISE_WEBHOOK_CONFIGS:  # failurePolicy Fail must not outlive the process
            await cluster.kubectl("delete", kind, name, "--ignore-not-found", check=False)
        for process in (webhook, manager):
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), timeout=30)
        await client.close()
        await cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


async def _status_unless_failed(cluster: Cluster, namespace: str, injecting: asyncio.Task[None]) -> dict:
    """The CloneSet's status; the injector's failure (an emulator without /debug/faults) ends the wait."""
    if injecting.done() and not injecting.cancelled() and injecting.exception() is not None:
        injecting.result()
    return await cloneset_status(cluster, namespace)


def _async(check):
    async def probe():
        return check()

    return probe
