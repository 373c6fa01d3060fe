"""Reconcile growth: CPU time of one steady-state reconcile pass at 100, 1,000 and 10,000 pods.

A controller's pass reads every pod its object owns, so its cost has to grow linearly: a pass that is
O(n^2) somewhere is harmless at 100 pods and stalls the work queue at 10,000. Each kind (CloneSet,
Advanced StatefulSet, Advanced DaemonSet, SidecarSet) runs against the unit tests' harnesses — fake
caches (`tests.kit.FakeInformer`, the real `Store` and indexes) and `tests.kit.RecordingClient` —
brought to a settled state by the real reconciler: its own passes create the pods, the kubelet's
part marks them running and ready, and a pass writes the status. The timed pass is the next one: a
resync that finds everything current, as most passes on a big cluster do. Only the reconciler's own
`reconcile` call is timed (process CPU time; the harness's cache-mutation check is not run).

The anchor is the same pass at 1,000 pods, measured in the same run: per-pod cost at 10,000 over
per-pod cost at 1,000 should stay within 1.5x.

`--caches full,projected` also runs every measurement with the fake pod cache fed as kruise-manager's
informer feeds its own: each pod through the manager's pod projection (every controller's fields;
frozen, shared, packed records a reader rebuilds on each read). The default, `full`, keeps the plain
copies the unit tests use. Both in one run give the projected/full ratio at each size on the same load.

Run on demand: `.venv/bin/python -m benchmarks reconcile` (all kinds, about a minute), or
`.venv/bin/python -m benchmarks reconcile --pods 100,1000 --kinds cloneset,sidecarset`.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.kube.logging import configure_logging
from kruise.kube.projection import Projection, recording
from kruise.kube.resources import ADVANCED_STATEFULSETS, CLONESETS, PODS, SIDECARSETS
from kruise.manager.cachefields import pod_projection
from kruise.manager.controllers import discover
from tests.kit import FakeInformer
from tests.unit.manager import test_cloneset_reconciler as cs
from tests.unit.manager import test_daemonset_reconciler as ds
from tests.unit.manager import test_sidecarset_reconciler as ss
from tests.unit.manager import test_statefulset_reconciler as sts

SIZES = (100, 1_000, 10_000)
ANCHOR = 1_000
GOAL = 1.5

Pass = Callable[[], Awaitable[Any]]
Feed = Callable[[FakeInformer], None]  # makes a harness's pod cache keep what a real cache would
ROLL_UNAVAILABLE = "10%"  # the rollout pass updates a tenth of the pods: its writes grow with n too


@dataclass
class Settled:
    """A harness after its set settled: `steady` runs one more pass, `roll` delivers a new image."""

    steady: Pass
    roll: Callable[[], None]
    harness: Any  # the unit tests' Harness: its client records what the timed pass wrote


def rolled(obj: dict, image: str) -> dict:
    """`obj` with its template's first image changed and its generation bumped: the user's edit."""
    new = copy.deepcopy(obj)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = image
    generation = new["metadata"].get("generation", 1) + 1
    new["metadata"].update(generation=generation, resourceVersion=str(generation + 100))
    return new


async def create_all(h: Any, key: str, pods: int, observe: Callable[[], None]) -> None:
    """Run the reconciler's own create passes (slow-start batches, burst caps) until all pods exist,
    observing each pass's creates as the pod handler would."""
    for _ in range(pods):
        await h.reconciler.reconcile(key)
        observe()
        if len(h.pods.list()) >= pods:
            return
    raise RuntimeError(f"{key}: {len(h.pods.list())} of {pods} pods after {pods} passes")


def full(pods: FakeInformer) -> None:
    """The unit tests' cache as it is: each pod a private plain copy."""


def projected(pods: FakeInformer, projection: Projection | None = None) -> None:
    """Make `pods` keep what kruise-manager's pod informer keeps: every pod, those already cached and
    each one written from now on, through the manager's projection (a fresh one per cache, as one
    manager has one). The projected objects are not copied again: the real cache hands them out as is."""
    projection = projection or pod_projection(discover())
    if projection.guard or recording():
        raise ValueError(
            "KRUISE_CACHE_GUARD: must be unset for a projected benchmark (guarded caches are slower)"
        )

    def add(*objects: dict) -> None:
        for obj in objects:
            pods.store.upsert(projection.apply(obj))

    add(*pods.store.list())
    pods.add = add  # type: ignore[method-assign]


CACHES: dict[str, Feed] = {"full": full, "projected": projected}


async def cloneset(pods: int, feed: Feed = full) -> Settled:
    h = cs.Harness(cs.cloneset(replicas=pods))
    feed(h.pods)
    key = f"{cs.NS}/web"
    await create_all(h, key, pods, h.observe_created_pods)
    cs.make_running(h)
    await h.reconciler.reconcile(key)

    def roll() -> None:
        new = rolled(cs.cloneset(replicas=pods, maxUnavailable=ROLL_UNAVAILABLE), "nginx:2")
        h.clonesets.add(new)
        h.client.put(CLONESETS, new)

    return Settled(lambda: h.reconciler.reconcile(key), roll, h)


async def statefulset(pods: int, feed: Feed = full) -> Settled:
    h = sts.Harness(sts.statefulset(replicas=pods, podManagementPolicy="Parallel"))
    feed(h.pods)
    key = f"{sts.NS}/{sts.NAME}"
    await create_all(h, key, pods, h.observe_pods)
    for pod in h.client.objects(PODS):
        h.make_ready(pod["metadata"]["name"])
    await h.reconciler.reconcile(key)

    def roll() -> None:
        strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": ROLL_UNAVAILABLE}}
        base = sts.statefulset(replicas=pods, podManagementPolicy="Parallel", updateStrategy=strategy)
        new = rolled(base, "nginx:2")
        h.sets.add(new)
        h.client.put(ADVANCED_STATEFULSETS, new)

    return Settled(lambda: h.reconciler.reconcile(key), roll, h)


async def daemonset(pods: int, feed: Feed = full) -> Settled:
    h = ds.Harness(ds.daemonset(), nodes=pods)
    feed(h.pods)
    key = f"{ds.NS}/{ds.NAME}"
    await create_all(h, key, pods, h.observe_pods)
    h.make_ready()
    await h.reconciler.reconcile(key)

    def roll() -> None:
        h.roll_to(ds.daemonset(image="nginx:2", generation=2, maxUnavailable=ROLL_UNAVAILABLE))

    return Settled(lambda: h.reconciler.reconcile(key), roll, h)


async def sidecarset(pods: int, feed: Feed = full) -> Settled:
    current = ss.sidecarset()
    h = ss.Harness(current, [ss.running_pod(f"web-{i}", current) for i in range(pods)])
    feed(h.pods)
    await h.reconciler.reconcile("logs")

    def roll() -> None:
        new = ss.sidecarset(image="busybox:1.35", maxUnavailable=ROLL_UNAVAILABLE)
        new["metadata"]["generation"] = 2
        h.sidecarsets.add(new)
        h.client.put(SIDECARSETS, new)

    return Settled(lambda: h.reconciler.reconcile("logs"), roll, h)


KINDS: dict[str, Callable[[int, Feed], Awaitable[Settled]]] = {
    "cloneset": cloneset,
    "statefulset": statefulset,
    "daemonset": daemonset,
    "sidecarset": sidecarset,
}
PASSES = ("steady", "rollout")


@dataclass(frozen=True)
class Figure:
    kind: str
    pass_: str
    pods: int
    seconds: float  # CPU seconds of one pass (the best of the repeats)
    cache: str = "full"  # which of CACHES fed the pod cache

    @property
    def per_pod_us(self) -> float:
        return self.seconds / self.pods * 1e6


def repeats(pods: int) -> int:
    """Enough passes that small sizes are not one timer tick; the best is kept (least disturbed)."""
    return max(3, min(20, 20_000 // pods))


async def timed(one_pass: Pass) -> float:
    gc.collect()
    start = time.process_time()
    await one_pass()
    return time.process_time() - start


async def steady(kind: str, pods: int, cache: str = "full") -> Figure:
    """The resync pass, repeated on one harness (it changes nothing, so every repeat is the same pass)."""
    settled = await KINDS[kind](pods, CACHES[cache])
    best = min([await timed(settled.steady) for _ in range(repeats(pods))])
    return Figure(kind, "steady", pods, best, cache)


async def rollout(kind: str, pods: int, cache: str = "full") -> Figure:
    """The first pass after a new image: it plans the whole rollout and writes the first tenth. It
    changes state, so each repeat settles a fresh harness; 10k runs once."""
    best = float("inf")
    for _ in range(1 if pods >= 10_000 else min(3, repeats(pods))):
        settled = await KINDS[kind](pods, CACHES[cache])
        settled.roll()
        best = min(best, await timed(settled.steady))
    return Figure(kind, "rollout", pods, best, cache)


def run(
    kinds: list[str], passes: list[str], sizes: list[int], caches: Sequence[str] = ("full",)
) -> list[Figure]:
    """The caches of one size run back to back, so their ratio is taken under the same load."""
    measure = {"steady": steady, "rollout": rollout}
    return [
        asyncio.run(measure[p](kind, pods, cache))
        for kind in kinds
        for p in passes
        for pods in sizes
        for cache in caches
    ]


def table(figures: list[Figure]) -> str:
    """Markdown rows: per-pass and per-pod CPU, per-pod cost against the same kind, pass and cache at
    the anchor, and (with more than one cache) against the full cache at the same size."""
    anchors = {(f.kind, f.pass_, f.cache): f for f in figures if f.pods == ANCHOR}
    fulls = {(f.kind, f.pass_, f.pods): f for f in figures if f.cache == "full"}
    several = len({f.cache for f in figures}) > 1
    rows = [
        "| kind | pass | pods | ms/pass | µs/pod | per pod vs 1k (anchor) |"
        + (" cache | vs full |" if several else ""),
        "|---|---|---:|---:|---:|---:|" + ("---|---:|" if several else ""),
    ]
    for f in figures:
        anchor = anchors.get((f.kind, f.pass_, f.cache))
        ratio = f"{f.per_pod_us / anchor.per_pod_us:.2f}x" if anchor else "n/a (no 1k run)"
        row = f"| {f.kind} | {f.pass_} | {f.pods:,} | {f.seconds * 1e3:.1f} | {f.per_pod_us:.1f} | {ratio} |"
        if several:
            base = fulls.get((f.kind, f.pass_, f.pods))
            versus = f"{f.seconds / base.seconds:.2f}x" if base and base.seconds else "n/a"
            row += f" {f.cache} | {versus} |"
        rows.append(row)
    return "\n".join(rows)


def verdicts(figures: list[Figure]) -> list[str]:
    """One line per kind with both the anchor and 10k: the growth ratio and whether it meets the goal."""
    by_size = {(f.kind, f.pass_, f.cache, f.pods): f for f in figures}
    lines = []
    for kind, pass_, cache in dict.fromkeys((f.kind, f.pass_, f.cache) for f in figures):
        big, anchor = by_size.get((kind, pass_, cache, 10_000)), by_size.get((kind, pass_, cache, ANCHOR))
        if big and anchor:
            ratio = big.per_pod_us / anchor.per_pod_us
            verdict = "linear" if ratio <= GOAL else f"SUPERLINEAR (goal <= {GOAL}x)"
            which = "" if cache == "full" else f" ({cache} cache)"
            lines.append(f"{kind} {pass_}{which}: per-pod 10k/1k = {ratio:.2f}x {verdict}")
    return lines


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks reconcile", description=__doc__.split("\n")[0])
    parser.add_argument("--pods", default=",".join(map(str, SIZES)), help="comma-separated pod counts")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)}")
    parser.add_argument("--passes", default=",".join(PASSES), help=f"comma-separated, of {', '.join(PASSES)}")
    parser.add_argument(
        "--caches",
        default="full",
        help=f"comma-separated, of {', '.join(CACHES)}: what the fake pod cache keeps (projected: "
        "kruise-manager's pod projection, as its informer keeps)",
    )
    args = parser.parse_args(argv)
    try:
        args.pods = [int(p) for p in args.pods.split(",")]
    except ValueError:
        parser.error(f"--pods: must be comma-separated integers, got {args.pods!r}")
    if any(p < 1 for p in args.pods):
        parser.error(f"--pods: every count must be at least 1, got {args.pods}")
    args.passes = args.passes.split(",")
    if unknown := [p for p in args.passes if p not in PASSES]:
        parser.error(f"--passes: unknown {', '.join(unknown)}; known: {', '.join(PASSES)}")
    args.caches = args.caches.split(",")
    if unknown := [c for c in args.caches if c not in CACHES]:
        parser.error(f"--caches: unknown {', '.join(unknown)}; known: {', '.join(CACHES)}")
    args.kinds = args.kinds.split(",")
    unknown = [k for k in args.kinds if k not in KINDS]
    if unknown:
        parser.error(f"--kinds: unknown {', '.join(unknown)}; known: {', '.join(KINDS)}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse(argv or [])  # `python -m benchmarks` calls main() bare: defaults, not its sys.argv
    with open(os.devnull, "w") as sink:  # logged as in production (info, JSON), not onto the table
        configure_logging("info", "json", sink)
        figures = run(args.kinds, args.passes, args.pods, args.caches)
    print(f"one reconcile pass, process CPU time; anchor: the same kind, pass and cache at {ANCHOR:,} pods")
    print(table(figures))
    for line in verdicts(figures):
        print(line)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
