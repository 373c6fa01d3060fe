"""Fault scenario 4, leader churn: the leading kruise-manager SIGKILLed every PERIOD seconds through an
in-place rollout.

Two kruise-manager processes (controllers: cloneset) elect a leader through a Lease in the test's
namespace. A CloneSet of PODS pods (env KRUISE_FAULT_CHURN_PODS, default 200) rolls out an image change
with InPlaceIfPossible; from the moment the image changes, the Lease holder is SIGKILLed every PERIOD
seconds and a fresh process (a new identity) started in its place, so two replicas always campaign.

What would show a pod updated twice: the test watches every pod from before the CloneSet exists and
records, per pod UID, each distinct `apps.kruise.io/inplace-update-state` (revision + updateTimestamp:
one per `begin_update`) and each restart of its container (the sandbox's kubelet restarts a container
whose image changed, restartCount + 1). The CloneSet's SuccessfulUpdatePodInPlace events cannot count
per pod: the event recorder aggregates and rate-limits them, as client-go's does. A pod created beyond
replicas shows as more UIDs than PODS in the watch. The Lease is watched for hand-overs; each gap is
from the SIGKILL to the Lease naming another holder, and after each the time to the next pod that
began its update shows whether the new leader stalled.

Sized for the 2-core machine: docs/reliability.md says what a run measured. Figures are printed (`-s`
shows them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from harness import Cluster, until

from kruise.api.keys import ANNOTATION_INPLACE_UPDATE_STATE
from kruise.kube.client import Client
from kruise.kube.errors import Gone
from kruise.kube.resources import LEASES, NODES, PODS

PODS_COUNT = int(os.environ.get("KRUISE_FAULT_CHURN_PODS", "200"))
# Batches of 10 pods, each available only MIN_READY seconds after it is ready again, keep the rollout
# long enough for several kills, each with pods mid-update (with upstream's default maxUnavailable 20%
# and no minReadySeconds, 200 pods finish between two kills).
MAX_UNAVAILABLE = int(os.environ.get("KRUISE_FAULT_CHURN_MAX_UNAVAILABLE", "10"))
MIN_READY = 2
PERIOD = 10.0
LEASE, RENEW, RETRY = 4, 3, 0.3  # seconds, as e2e/manager's failover test
OLD_IMAGE, NEW_IMAGE = "nginx:1.25", "nginx:1.26"
CREATE_BOUND = 240.0
ROLLOUT_BOUND = 360.0
LEASE_NAME = "kruise-manager"


def cloneset(namespace: str, image: str) -> dict[str, Any]:
    """Fully spelled out: this cluster runs no kruise-webhook to default it."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "churn", "namespace": namespace},
        "spec": {
            "replicas": PODS_COUNT,
            "revisionHistoryLimit": 10,
            "minReadySeconds": MIN_READY,
            "selector": {"matchLabels": {"app": "churn"}},
            "scaleStrategy": {},
            "updateStrategy": {
                "type": "InPlaceIfPossible", "partition": 0, "maxUnavailable": MAX_UNAVAILABLE, "maxSurge": 0,
            },
            "template": {
                "metadata": {"labels": {"app": "churn"}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    }  # fmt: skip


@dataclass
class PodRecord:
    name: str
    states: set[tuple[str, str]] = field(default_factory=set)  # (revision, updateTimestamp)
    restarts: int = 0
    image: str = ""
    ready: bool = False
    updated_at: float | None = None  # monotonic time the watch first showed an in-place state


@dataclass
class PodLog:
    """Everything the pod watch showed, per UID, in the order the apiserver sent it."""

    pods: dict[str, PodRecord] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # UIDs in the order they were first seen
    deleted: set[str] = field(default_factory=set)
    relists: int = 0

    def observe(self, kind: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        uid = meta["uid"]
        record = self.pods.get(uid)
        if record is None:
            record = self.pods[uid] = PodRecord(meta["name"])
            self.order.append(uid)
        if kind == "DELETED":
            self.deleted.add(uid)
        state = (meta.get("annotations") or {}).get(ANNOTATION_INPLACE_UPDATE_STATE)
        if state:
            body = json.loads(state)
            record.states.add((body.get("revision", ""), body.get("updateTimestamp", "")))
            if record.updated_at is None:
                record.updated_at = time.monotonic()
        spec = pod.get("spec") or {}
        record.image = next(c["image"] for c in spec["containers"] if c["name"] == "app")
        status = pod.get("status") or {}
        for container in status.get("containerStatuses") or []:
            if container.get("name") == "app":
                record.restarts = max(record.restarts, int(container.get("restartCount") or 0))
        conditions = status.get("conditions") or []
        record.ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    def rolled_out(self) -> bool:
        live = [r for uid, r in self.pods.items() if uid not in self.deleted]
        return len(live) >= PODS_COUNT and all(r.image == NEW_IMAGE and r.ready for r in live)


async def watch_pods(client: Client, namespace: str, log: PodLog) -> None:
    """List, then watch from the list's resourceVersion; a 410 or an ended watch relists (a relist
    sees every live pod again, so nothing a missed event carried is lost for the counts)."""
    while True:
        items, rv = await client.list_all(PODS, namespace, label_selector="app=churn")
        for pod in items:
            log.observe("ADDED", pod)
        with contextlib.suppress(Gone):
            async for event in client.watch(
                PODS, namespace, resource_version=rv, label_selector="app=churn", timeout_seconds=600
            ):
                if event.type != "BOOKMARK":
                    log.observe(event.type, event.object)
        log.relists += 1


@dataclass
class LeaseLog:
    """(monotonic time, holder) at every change of the Lease's holder."""

    changes: list[tuple[float, str]] = field(default_factory=list)

    @property
    def holder(self) -> str:
        return self.changes[-1][1] if self.changes else ""

    def observe(self, lease: dict[str, Any]) -> None:
        holder = (lease.get("spec") or {}).get("holderIdentity") or ""
        if holder != self.holder:
            self.changes.append((time.monotonic(), holder))


async def watch_lease(client: Client, namespace: str, log: LeaseLog) -> None:
    selector = f"metadata.name={LEASE_NAME}"
    while True:
        items, rv = await client.list_all(LEASES, namespace, field_selector=selector)
        for lease in items:
            log.observe(lease)
        with contextlib.suppress(Gone):
            async for event in client.watch(
                LEASES, namespace, resource_version=rv, field_selector=selector, timeout_seconds=600
            ):
                if event.type in ("ADDED", "MODIFIED"):
                    log.observe(event.object)


def log_file(path: Path) -> IO[bytes]:
    """A manager's output file (the child keeps its own descriptor once started)."""
    return path.open("wb")


@dataclass
class Managers:
    """The kruise-manager processes, keyed by HOSTNAME: a Lease identity is `HOSTNAME_uuid`."""

    cluster: Cluster
    namespace: str
    logs: Path
    processes: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    started: int = 0

    async def start(self) -> None:
        self.started += 1
        host = f"churn-{self.started}"
        with log_file(self.logs / f"{host}.log") as out:
            self.processes[host] = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kruise.manager.main", "--kubeconfig", str(self.cluster.kubeconfig),
                "--leader-election-namespace", self.namespace, "--leader-election-id", LEASE_NAME,
                "--leader-election-lease-duration", str(LEASE), "--leader-election-renew-deadline",
                str(RENEW), "--leader-election-retry-period", str(RETRY),
                "--metrics-addr", "127.0.0.1:0", "--health-probe-addr", "127.0.0.1:0",
                "--controllers", "cloneset", "--rest-config-qps", "100", "--rest-config-burst", "100",
                "--logging-format", "json",
                env={**os.environ, "HOSTNAME": host}, stdout=out, stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip

    def leader(self, holder: str) -> asyncio.subprocess.Process | None:
        process = self.processes.get(holder.rsplit("_", 1)[0]) if holder else None
        return process if process is not None and process.returncode is None else None

    async def stop(self) -> None:
        for process in self.processes.values():
            if process.returncode is None:
                process.send_signal(signal.SIGKILL)
                await process.wait()


async def churn(managers: Managers, lease: LeaseLog, kills: list[tuple[float, str]]) -> None:
    """Every PERIOD seconds after the last kill: SIGKILL whoever holds the Lease (waiting, bounded,
    for a live holder when the last one's successor has not taken over yet), start a replacement."""
    next_kill = time.monotonic() + PERIOD
    while True:
        await asyncio.sleep(
            max(0.0, next_kill - time.monotonic())
        )  # the fault's rhythm, not a wait for a state
        leader = await until(
            lambda: _live_leader(managers, lease), lambda p: p is not None, "a live Lease holder", timeout=60
        )
        assert leader is not None
        holder = lease.holder
        leader.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        await leader.wait()
        kills.append((killed, holder))
        await managers.start()
        next_kill = killed + PERIOD


async def _live_leader(managers: Managers, lease: LeaseLog) -> asyncio.subprocess.Process | None:
    return managers.leader(lease.holder)


def hand_overs(kills: list[tuple[float, str]], changes: list[tuple[float, str]]) -> list[tuple[float, float]]:
    """Per kill, (kill time, time the Lease first named a holder other than the one killed)."""
    taken = []
    for killed, holder in kills:
        after = [t for t, h in changes if t >= killed and h and h != holder]
        if after:
            taken.append((killed, after[0]))
    return taken


def resumes(taken: list[tuple[float, float]], updates: list[float]) -> list[float]:
    """Per hand-over, seconds from the new holder's Lease to the next pod the watch saw begin its in-place
    update (hand-overs after the last pod began have none): a stall after a hand-over shows here."""
    delays = []
    for _, at in taken:
        later = [u for u in updates if u >= at]
        if later:
            delays.append(min(later) - at)
    return delays


async def room_for_pods(client: Client) -> int:
    """Pods the nodes can still take (other scenarios' namespaces may still be terminating)."""
    nodes, _ = await client.list_all(NODES)
    capacity = sum(int((n.get("status") or {}).get("allocatable", {}).get("pods", "110")) for n in nodes)
    pods, _ = await client.list_all(PODS)
    return capacity - len(pods)


async def cloneset_status(cluster: Cluster, namespace: str) -> dict[str, Any]:
    _, out = await cluster.kubectl(
        "get", "clonesets.v1alpha1.apps.kruise.io", "churn", "-n", namespace, "-o", "json"
    )
    body = json.loads(out)
    return {**(body.get("status") or {}), "generation": body["metadata"]["generation"]}


def settled(status: dict[str, Any]) -> bool:
    return status.get("observedGeneration") == status["generation"] and all(
        status.get(key) == PODS_COUNT for key in ("replicas", "updatedReplicas", "updatedReadyReplicas")
    )


async def test_leader_killed_every_period_through_in_place_rollout(sandbox_only: Cluster, tmp_path: Path):
    cluster = sandbox_only
    namespace = f"e2e-fault-churn-{uuid.uuid4().hex[:6]}"
    await cluster.kubectl("create", "namespace", namespace)
    client = await Client.from_kubeconfig(cluster.kubeconfig, qps=200, burst=200)
    managers = Managers(cluster, namespace, tmp_path)
    pods, lease, kills = PodLog(), LeaseLog(), []
    watchers = [
        asyncio.create_task(watch_pods(client, namespace, pods)),
        asyncio.create_task(watch_lease(client, namespace, lease)),
    ]
    churning: asyncio.Task[None] | None = None
    try:
        await until(lambda: room_for_pods(client), lambda n: n >= PODS_COUNT, f"room for {PODS_COUNT} pods",
                    timeout=120)  # fmt: skip
        await managers.start()
        await managers.start()
        await until(lambda: _live_leader(managers, lease), lambda p: p is not None, "a first leader")
        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, OLD_IMAGE)))
        await until(lambda: cloneset_status(cluster, namespace), settled, f"{PODS_COUNT} pods ready",
                    timeout=CREATE_BOUND)  # fmt: skip
        created = len(pods.pods)

        await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(cloneset(namespace, NEW_IMAGE)))
        started = time.monotonic()
        churning = asyncio.create_task(churn(managers, lease, kills))
        final = await until(lambda: _status_unless_failed(cluster, namespace, churning), settled,
                            "the rollout under leader churn", timeout=ROLLOUT_BOUND)  # fmt: skip
        rollout = time.monotonic() - started
        churning.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await churning
        await until(_async(pods.rolled_out), bool, "the pod watch caught up", timeout=60)

        taken = hand_overs(kills, lease.changes)
        gaps = [at - killed for killed, at in taken]
        resumed = resumes(taken, [r.updated_at for r in pods.pods.values() if r.updated_at is not None])
        live = {uid: r for uid, r in pods.pods.items() if uid not in pods.deleted}
        twice = sorted(
            r.name for r in live.values()
            if len(r.states) > 1 or r.restarts > 1
        )  # fmt: skip
        never = sorted(r.name for r in live.values() if not r.states or r.restarts == 0)
        extra = len(pods.pods) - PODS_COUNT
        print(
            f"\nFAULT leader-churn: pods {PODS_COUNT}, kill period {PERIOD:.0f}s, lease {LEASE}s;"
            f" rollout {rollout:.1f}s; kills {len(kills)}; hand-overs {len(gaps)}"
            f" gaps {[round(g, 1) for g in gaps]}; first update after each hand-over"
            f" {[round(d, 1) for d in resumed]}; managers started {managers.started};"
            f" pods updated twice {len(twice)}; pods not updated {len(never)};"
            f" extra pods {extra};"
            f" deleted {len(pods.deleted)}; watch relists {pods.relists}; logs {tmp_path}"
        )
        assert created == PODS_COUNT, created
        assert len(kills) >= 1 and len(gaps) == len(kills), (kills, lease.changes)
        assert twice == [], twice
        assert never == [], never
        assert extra == 0 and not pods.deleted, (extra, pods.deleted)
        assert final["updatedReadyReplicas"] == PODS_COUNT
    finally:
        if churning is not None:
            churning.cancel()
            with contextlib.suppress(asyncio.CancelledError, AssertionError):
                await churning
        for task in watchers:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await managers.stop()
        await client.close()
        await cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


async def _status_unless_failed(
    cluster: Cluster, namespace: str, churning: asyncio.Task[None]
) -> dict[str, Any]:
    """The CloneSet's status; the churn task's failure (no live leader within its bound) ends the wait."""
    if churning.done():
        churning.result()
        raise AssertionError("the churn stopped before the rollout finished")
    return await cloneset_status(cluster, namespace)


def _async(check: Any) -> Any:
    async def probe() -> Any:
        return check()

    return probe
