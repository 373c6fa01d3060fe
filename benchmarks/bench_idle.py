"""Idle CPU of kruise-manager holding 10k pods while nothing changes (issue 27: at most 1% of a core).

Upstream users report 150-250m idle for kruise-manager; an idle Python manager must not spin.

The emulator (`python -m kruise.sandbox.apiserver`, no nodes, no built-in controllers: nothing in
the cluster changes unless the manager changes it) runs in its own process, so its CPU is not the
manager's. This process installs the CRDs and loads `--clonesets` CloneSets of `--pods-per-set`
Running, Ready pods each, created directly as the CloneSet would have made them: owner reference,
selector labels, the CloneSet's current revision hash (computed as the controller computes it),
instance id and lifecycle state. Then two real kruise-manager processes start with default leader
election (lease 15 s, renew 10 s, retry 2 s): the first leads and runs every controller; the second
is a warm standby holding the same informers and caches (as controller-runtime's standby does) and
running no controller — the anchor. Whatever the leader burns beyond the standby is its
controllers, workqueues, timers and lease renewals, not the informer cache or the watch streams.

Settled means: every CloneSet's status has caught up (observedGeneration = generation, replicas,
ready and updated replicas all = spec.replicas), the leader's `workqueue_depth` is 0 on every
queue, and no pod or CloneSet has changed (the highest resourceVersion among them) for `--quiet`
seconds. Then both managers' CPU time (utime + stime from /proc/<pid>/stat, children included) is
sampled over the same `--seconds` wall-clock window and printed as percent of one core.

Last line: `idle_cpu_percent=<leader %> idle_cpu_ratio=<leader / standby>`.

Run on demand: `.venv/bin/python -m benchmarks idle` (100 x 100 pods, 60 s) or
`.venv/bin/python -m benchmarks idle --clonesets 10 --pods-per-set 100 --seconds 20`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from kruise.api.keys import (
    LABEL_CLONESET_INSTANCE_ID,
    LABEL_LIFECYCLE_STATE,
    LIFECYCLE_STATE_NORMAL,
)
from kruise.control.common.revision import choose_revisions, revision_labels_for_pod
from kruise.kube.client import Client
from kruise.kube.resources import CLONESETS, NAMESPACES, PODS
from kruise.sandbox.cluster import DEFAULT_CRD_DIR, apply_crds, load_crds

NAMESPACE = "bench-idle"
IMAGE = "nginx:1.25"
STARTUP_SECONDS = 120.0
SETTLE_DEADLINE_SECONDS = 600.0
LOAD_CONCURRENCY = 32

Obj = dict[str, Any]


# ---- arithmetic (unit-tested) ------------------------------------------------------------------


def stat_cpu_ticks(stat: str) -> int:
    """utime + stime + cutime + cstime (clock ticks) from a /proc/<pid>/stat line.

    The command name (field 2) is in parentheses and may itself contain spaces or ')': the fields
    after it are counted from the last ')'."""
    after = stat[stat.rindex(")") + 2 :].split()
    # after[0] is field 3 (state); utime..cstime are fields 14..17
    return sum(int(v) for v in after[11:15])


def percent_of_core(cpu_seconds: float, wall_seconds: float) -> float:
    if wall_seconds <= 0:
        raise ValueError(f"wall_seconds: must be > 0, got {wall_seconds}")
    return 100.0 * cpu_seconds / wall_seconds


def workqueue_depths(metrics_text: str) -> dict[str, float]:
    """`workqueue_depth{name="..."} v` samples of a Prometheus text exposition."""
    pattern = re.compile(r'^workqueue_depth\{[^}]*name="([^"]*)"[^}]*\}\s+(\S+)$', re.MULTILINE)
    return {name: float(value) for name, value in pattern.findall(metrics_text)}


def counter_total(metrics_text: str, name: str) -> float:
    """The sum of every sample of counter `name` (`name_total{...} v`) in a Prometheus text exposition."""
    pattern = re.compile(rf"^{re.escape(name)}_total(?:\{{[^}}]*\}})?\s+(\S+)$", re.MULTILINE)
    return sum(float(v) for v in pattern.findall(metrics_text))


def delta(before: tuple[float, float], after: tuple[float, float]) -> tuple[float, float]:
    return (after[0] - before[0], after[1] - before[1])


def ratio(measured: float, anchor: float) -> str:
    """`measured / anchor` to two decimals, `inf` when the anchor used no CPU at all."""
    return "inf" if anchor <= 0 else f"{measured / anchor:.2f}"


def summary(leader_percent: float, standby_percent: float) -> str:
    return f"idle_cpu_percent={leader_percent:.2f} idle_cpu_ratio={ratio(leader_percent, standby_percent)}"


def cloneset_settled(cs: Mapping[str, Any]) -> bool:
    spec, status = cs.get("spec") or {}, cs.get("status") or {}
    want = spec.get("replicas")
    return (
        status.get("observedGeneration") == (cs.get("metadata") or {}).get("generation")
        and status.get("replicas") == want
        and status.get("readyReplicas") == want
        and status.get("updatedReplicas") == want
        and status.get("updatedReadyReplicas", want) == want
    )


def newest_resource_version(objects: Iterable[Mapping[str, Any]]) -> int:
    return max((int(o["metadata"]["resourceVersion"]) for o in objects), default=0)


# ---- the cluster ---------------------------------------------------------------------------------


def cloneset(index: int, replicas: int) -> Obj:
    app = f"idle-{index}"
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": app, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": app}},
            "template": {
                "metadata": {"labels": {"app": app}},
                "spec": {"containers": [{"name": "app", "image": IMAGE}]},
            },
        },
    }


def first_revision(stored: Mapping[str, Any]) -> str:
    """The revision name the controller gives a CloneSet without history, from its stored (defaulted)
    template: pods labelled with it are up to date, so the manager has nothing to roll."""
    return choose_revisions(stored, []).update["metadata"]["name"]


def owned_pod(cs: Mapping[str, Any], revision: str, ordinal: int) -> Obj:
    """A pod as the CloneSet controller creates it (without the webhook's readiness gates)."""
    meta = cs["metadata"]
    instance = f"{ordinal:05d}"
    template = cs["spec"]["template"]
    labels = {
        **template["metadata"]["labels"],
        **revision_labels_for_pod(revision),
        LABEL_CLONESET_INSTANCE_ID: instance,
        LABEL_LIFECYCLE_STATE: LIFECYCLE_STATE_NORMAL,
    }
    owner = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{meta['name']}-{instance}",
            "namespace": NAMESPACE,
            "labels": labels,
            "ownerReferences": [owner],
        },
        "spec": {**template["spec"], "nodeName": f"idle-node-{ordinal % 100}"},
    }


def running_status(ordinal: int) -> Obj:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [
        {"type": t, "status": "True", "lastTransitionTime": now}
        for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
    ]
    return {
        "phase": "Running",
        "conditions": conditions,
        "hostIP": f"10.1.0.{ordinal % 100 + 1}",
        "podIP": f"10.2.{ordinal // 250}.{ordinal % 250 + 1}",
        "startTime": now,
        "containerStatuses": [
            {
                "name": "app",
                "image": IMAGE,
                "imageID": f"docker.io/library/{IMAGE}@sha256:{'0' * 64}",
                "containerID": f"containerd://{ordinal:064x}",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            }
        ],
    }


async def load(client: Client, clonesets: int, per_set: int) -> None:
    """The CloneSets and their Running, Ready pods, as if the manager had made them earlier."""
    await client.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    )
    await client.create(
        NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kruise-system"}}
    )
    gate = asyncio.Semaphore(LOAD_CONCURRENCY)

    async def one_pod(cs: Obj, revision: str, ordinal: int) -> None:
        async with gate:
            pod = await client.create(PODS, owned_pod(cs, revision, ordinal))
            await client.patch(
                PODS,
                pod["metadata"]["name"],
                {"status": running_status(ordinal)},
                NAMESPACE,
                subresource="status",
            )

    for i in range(clonesets):
        stored = await client.create(CLONESETS, cloneset(i, per_set))
        revision = first_revision(stored)
        await asyncio.gather(*(one_pod(stored, revision, i * per_set + k) for k in range(per_set)))


def spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    """Output goes to a file: a pipe nobody drains would stall the child once full."""
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", *args], stdout=out, stderr=subprocess.STDOUT)


def log_has(log: Path, text: bytes) -> bool:
    return text in log.read_bytes()


async def start_emulator(kubeconfig: Path, log: Path) -> subprocess.Popen[bytes]:
    process = spawn(["kruise.sandbox.apiserver", "--kubeconfig", str(kubeconfig)], log)

    async def ready() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the emulator exited ({process.returncode}); see {log}")
        return log_has(log, b"ready: ")

    await until("the emulator is ready", ready, STARTUP_SECONDS, interval=0.1)
    return process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Manager:
    process: subprocess.Popen[bytes]
    metrics_port: int
    log: Path

    def metrics(self) -> str | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
                return r.read().decode()
        except OSError:
            return None

    def cpu_seconds(self) -> float:
        stat = Path(f"/proc/{self.process.pid}/stat").read_text()
        return stat_cpu_ticks(stat) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_manager(kubeconfig: Path, log: Path) -> Manager:
    """Every controller, default leader election, JSON logs."""
    port = free_port()
    args = ["kruise.manager.main", "--kubeconfig", str(kubeconfig), "--metrics-addr", f"127.0.0.1:{port}",
            "--health-probe-addr", f"127.0.0.1:{free_port()}", "--logging-format", "json"]  # fmt: skip
    return Manager(spawn(args, log), port, log)


async def until(
    what: str, condition: Callable[[], Awaitable[bool]], deadline_s: float, interval: float = 0.5
) -> None:
    deadline = time.monotonic() + deadline_s
    while not await condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not reached within {deadline_s:.0f} s")
        await asyncio.sleep(interval)


def activity(manager: Manager) -> tuple[float, float]:
    """(API requests, workqueue adds) the manager has counted so far."""
    text = manager.metrics() or ""
    return counter_total(text, "rest_client_requests"), counter_total(text, "workqueue_adds")


def log_lines(manager: Manager) -> int:
    return manager.log.read_bytes().count(b"\n")


async def newest_watched(client: Client) -> int:
    """The highest resourceVersion among the benchmark's CloneSets and pods."""
    sets = (await client.list(CLONESETS, NAMESPACE))["items"]
    pods = (await client.list(PODS, NAMESPACE))["items"]
    return max(newest_resource_version(sets), newest_resource_version(pods))


async def settle(client: Client, leader: Manager, quiet: float) -> float:
    """Wait until the leader has converged and written nothing to pods or CloneSets for `quiet` s;
    returns how long that took."""
    start = time.monotonic()
    state = {"rv": -1, "since": time.monotonic()}

    async def settled() -> bool:
        if leader.process.poll() is not None:
            raise RuntimeError(f"the leader exited ({leader.process.returncode}); see {leader.log}")
        sets = (await client.list(CLONESETS, NAMESPACE))["items"]
        pods = (await client.list(PODS, NAMESPACE))["items"]
        rv = max(newest_resource_version(sets), newest_resource_version(pods))
        if rv != state["rv"]:
            state["rv"], state["since"] = rv, time.monotonic()
        text = leader.metrics()
        depths = workqueue_depths(text or "")
        return (
            all(cloneset_settled(cs) for cs in sets)
            and text is not None
            and bool(depths)
            and not any(depths.values())
            and time.monotonic() - state["since"] >= quiet
        )

    await until("the leader settled", settled, SETTLE_DEADLINE_SECONDS, interval=1.0)
    return time.monotonic() - start


async def standby_synced(standby: Manager, clonesets: int) -> None:
    """A standby's queues fill from its informers and are never drained: it has listed everything once
    every CloneSet sits in its cloneset queue and its queues stop growing."""
    last: dict[str, float] = {}

    async def synced() -> bool:
        nonlocal last
        if standby.process.poll() is not None:
            raise RuntimeError(f"the standby exited ({standby.process.returncode}); see {standby.log}")
        depths = workqueue_depths(standby.metrics() or "")
        done = depths.get("cloneset") == clonesets and depths == last
        last = depths
        return done

    await until("the standby's caches synced", synced, STARTUP_SECONDS, interval=1.0)


async def run(clonesets: int, per_set: int, seconds: float, quiet: float, keep_logs: Path | None) -> str:
    with TemporaryDirectory() as tmp:
        logs = keep_logs or Path(tmp)
        kubeconfig = Path(tmp) / "kubeconfig"
        emulator = await start_emulator(kubeconfig, logs / "emulator.log")
        managers: list[Manager] = []
        client = await Client.from_kubeconfig(kubeconfig, qps=1e6, burst=10**6)
        try:
            await apply_crds(kubeconfig, load_crds(DEFAULT_CRD_DIR), timeout=60)
            t0 = time.monotonic()
            await load(client, clonesets, per_set)
            print(
                f"idle clonesets={clonesets} pods={clonesets * per_set} "
                f"loaded in {time.monotonic() - t0:.0f} s"
            )

            leader = start_manager(kubeconfig, logs / "leader.log")
            managers.append(leader)

            async def leads() -> bool:
                if leader.process.poll() is not None:
                    raise RuntimeError(f"the leader exited ({leader.process.returncode}); see {leader.log}")
                return log_has(leader.log, b'"controllers started"')

            await until("the first manager leads", leads, STARTUP_SECONDS)
            took = await settle(client, leader, quiet)
            print(f"leader settled {took:.0f} s after it started its controllers")
            standby = start_manager(kubeconfig, logs / "standby.log")
            managers.append(standby)
            await standby_synced(standby, clonesets)
            await settle(client, leader, quiet)  # the standby's start changed nothing

            rv0 = await newest_watched(client)
            lines = [log_lines(m) for m in managers]
            counts0 = [activity(m) for m in managers]
            cpu0 = [m.cpu_seconds() for m in managers]
            w0 = time.monotonic()
            await asyncio.sleep(seconds)  # the measurement window itself
            wall = time.monotonic() - w0
            cpu1 = [m.cpu_seconds() for m in managers]
            counts = [delta(c0, activity(m)) for m, c0 in zip(managers, counts0, strict=True)]
            logged = [log_lines(m) - n for m, n in zip(managers, lines, strict=True)]
            if await newest_watched(client) != rv0:
                raise RuntimeError("a pod or CloneSet changed during the measurement window: not idle")
            percents = [percent_of_core(b - a, wall) for a, b in zip(cpu0, cpu1, strict=True)]
            for label, pct, cpu, n, (requests, adds) in zip(
                ("leader", "standby (anchor)"), percents, cpu1, logged, counts, strict=True
            ):
                print(
                    f"{label:<17} {pct:6.2f}% of a core over {wall:.0f} s "
                    f"({cpu:.1f} s CPU since start); in the window {requests:.0f} API requests, "
                    f"{adds:.0f} workqueue adds, {n} log lines"
                )
        finally:
            await client.close()
            for m in managers:
                m.stop()
            emulator.terminate()
            emulator.wait(timeout=30)
    return summary(percents[0], percents[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clonesets", type=int, default=100)
    parser.add_argument("--pods-per-set", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0, help="measurement window")
    parser.add_argument(
        "--quiet", type=float, default=5.0, help="no pod/CloneSet writes for this long = settled"
    )
    parser.add_argument("--keep-logs", type=Path, default=None, help="directory for the managers' logs")
    args = parser.parse_args(argv if argv is not None else [])
    for flag, value in (("--clonesets", args.clonesets), ("--pods-per-set", args.pods_per_set)):
        if value < 1:
            parser.error(f"{flag}: must be >= 1, got {value}")
    if args.seconds <= 0:
        parser.error(f"--seconds: must be > 0, got {args.seconds}")
    print(asyncio.run(run(args.clonesets, args.pods_per_set, args.seconds, args.quiet, args.keep_logs)))


if __name__ == "__main__":
    main(sys.argv[1:])
