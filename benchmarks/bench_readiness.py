"""Time-to-Ready while scaling up: a CloneSet's pods against a native ReplicaSet's, at equal QPS (issue 27).

A CloneSet pod is Ready only once kruise-manager has written its readiness-gate conditions
(`InPlaceUpdateReady`, `KruisePodReady`), a ReplicaSet pod as soon as the kubelet says so; both
controllers write at the same client limit. If the manager wrote those conditions only after its
last create, no CloneSet pod would turn Ready before the whole scale-up's creates were through.

One `kruise sandbox up --no-kruise` (its ReplicaSet controller limited by `--kube-api-qps` /
`--kube-api-burst` to the manager's QPS and burst, as kube-controller-manager's flags do); this
process plays kruise-manager (CloneSet + pod-readiness controllers on one client). First a
ReplicaSet scales 0 -> N (the anchor), then a CloneSet 0 -> N. Each pod's time-to-Ready is the
moment its `Ready=True` reaches this process's pod watch, counted from the moment its workload was
created. Printed: mean / p50 / p90 / last per workload, the manager's writes for the CloneSet, the
rate-limit floor of both means (a CloneSet pod needs two writes — its create and one pods/status
patch, since the apiserver drops status on create — a ReplicaSet pod one), and a last line
`ready_mean_ratio=<CloneSet mean / ReplicaSet mean>`.

Run on demand: `.venv/bin/python -m benchmarks readiness` (300 pods) or
`.venv/bin/python -m benchmarks.bench_readiness --pods 1000 --qps 20 --burst 30`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from benchmarks import bench_cloneset, workloads
from benchmarks.workloads import IMAGE, NAMESPACE, AttributingClient, Obj
from kruise.api.features import FeatureGates
from kruise.kube.informer import SharedInformerFactory
from kruise.kube.resources import PODS, REPLICASETS
from kruise.manager.context import ManagerContext
from kruise.manager.controllers import cloneset, podreadiness

RS_NAME = "bench-rs"
DEADLINE_SECONDS = 900.0


def replicaset(replicas: int) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": RS_NAME, "namespace": NAMESPACE},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": RS_NAME}},
            "template": {
                "metadata": {"labels": {"app": RS_NAME}},
                "spec": {"containers": [{"name": "app", "image": IMAGE}]},
            },
        },
    }


def is_ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


class ReadyClock:
    """When each pod of one app label was first seen Ready, in seconds after `start()`."""

    def __init__(self) -> None:
        self.app = ""
        self.t0 = 0.0
        self.ready: dict[str, float] = {}

    def start(self, app: str) -> None:
        self.app, self.t0, self.ready = app, time.monotonic(), {}

    def observe(self, pod: Mapping[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        if (meta.get("labels") or {}).get("app") != self.app or meta.get("name") in self.ready:
            return
        if is_ready(pod):
            self.ready[meta["name"]] = time.monotonic() - self.t0

    async def until(self, pods: int) -> list[float]:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while len(self.ready) < pods:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.app}: {len(self.ready)} of {pods} pods Ready after {DEADLINE_SECONDS} s"
                )
            await asyncio.sleep(0.05)
        return sorted(self.ready.values())


def percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    rank = max(1, min(len(ordered), math.ceil(q * len(ordered))))
    return ordered[rank - 1]


def floor_mean(pods: int, writes_per_pod: int, qps: float, burst: int) -> float:
    """The mean time-to-Ready if nothing but the client's token bucket took time and every pod's
    writes went out back to back: pod i is Ready with token `writes_per_pod * i`."""
    return statistics.fmean(max(0, writes_per_pod * i - burst) / qps for i in range(1, pods + 1))


def describe(label: str, times: Sequence[float]) -> str:
    return (
        f"{label:<10} mean {statistics.fmean(times):6.1f} s  p50 {percentile(times, 0.5):6.1f} s  "
        f"p90 {percentile(times, 0.9):6.1f} s  first {times[0]:6.1f} s  last {times[-1]:6.1f} s"
    )


async def run(pods: int, nodes: int, speed: float, qps: float, burst: int) -> str:
    limit = ["--kube-api-qps", str(qps), "--kube-api-burst", str(burst)]
    with TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        sandbox = workloads.start_sandbox(kubeconfig, nodes, speed, limit)
        try:
            client = await AttributingClient.from_kubeconfig(kubeconfig, qps=qps, burst=burst)
            client.writes, client.requests = Counter(), Counter()
            ctx = ManagerContext(
                client=client, informers=SharedInformerFactory(client), feature_gates=FeatureGates(env={})
            )
            controllers = {
                "cloneset": cloneset.SETUP.build(ctx),
                "podreadiness": podreadiness.SETUP.build(ctx),
            }
            clock = ReadyClock()
            ctx.informers.informer(PODS).add_event_handler(
                on_add=clock.observe, on_update=lambda _old, new: clock.observe(new)
            )
            ctx.informers.start()
            await ctx.informers.wait_for_cache_sync(60)
            for name, c in controllers.items():
                contextvars.Context().run(workloads._start_as, name, c)
            print(f"readiness pods={pods} nodes={nodes} speed={speed} qps={qps} burst={burst} (each side)")

            clock.start(RS_NAME)
            await client.create(REPLICASETS, replicaset(pods))
            anchor = await clock.until(pods)

            phase = workloads._Phase(client)
            clock.start(workloads.NAME)
            await client.create(bench_cloneset.WORKLOAD.resource, bench_cloneset.manifest(pods))
            measured = await clock.until(pods)
            await workloads.settle(client)
            phase.close(f"CloneSet scale 0 -> {pods}", measured[-1], "all pods Ready")

            print(describe("ReplicaSet", anchor))
            print(describe("CloneSet", measured))
            native, kruise = floor_mean(pods, 1, qps, burst), floor_mean(pods, 2, qps, burst)
            print(
                f"rate-limit floor (1 write a ReplicaSet pod, 2 a CloneSet pod): mean {native:.1f} s "
                f"vs {kruise:.1f} s, ratio {kruise / native:.2f}"
            )
            for c in controllers.values():
                await c.stop()
            for recorder in ctx.recorders:
                await recorder.stop()
            await ctx.informers.stop()
            await client.close()
        finally:
            sandbox.terminate()
            sandbox.wait(timeout=30)
    return f"ready_mean_ratio={statistics.fmean(measured) / statistics.fmean(anchor):.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=300, help="pods per workload")
    parser.add_argument("--nodes", type=int, default=0, help="simulated nodes (0: enough for both workloads)")
    parser.add_argument("--speed", type=float, default=100.0)
    parser.add_argument("--qps", type=float, default=20.0, help="both controllers' client QPS")
    parser.add_argument("--burst", type=int, default=30, help="both controllers' client burst")
    args = parser.parse_args(argv if argv is not None else [])
    if args.pods < 1:
        parser.error(f"--pods: must be >= 1, got {args.pods}")
    nodes = args.nodes or max(10, -(-2 * args.pods // 100))
    print(asyncio.run(run(args.pods, nodes, args.speed, args.qps, args.burst)))


if __name__ == "__main__":
    main(sys.argv[1:])
