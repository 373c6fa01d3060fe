"""`benchmarks reconcile` at tiny sizes: every kind settles to all its pods, each pass runs, and the table
and verdicts come out for what was measured (its figures are timings, so nothing here checks a value)."""

from __future__ import annotations

import pytest

from benchmarks import bench_reconcile as bench
from kruise.kube.projection import is_projected
from kruise.kube.resources import PODS
from tests.kit import FakeInformer


@pytest.mark.parametrize("kind", list(bench.KINDS))
def test_every_kind_and_pass_is_measured_and_tabled(kind: str, monkeypatch) -> None:
    monkeypatch.setattr(bench, "repeats", lambda pods: 1)  # one pass each: this proves it runs, not its speed
    figures = bench.run([kind], list(bench.PASSES), [3, 5])
    assert [(f.kind, f.pass_, f.pods) for f in figures] == [
        (kind, "steady", 3),
        (kind, "steady", 5),
        (kind, "rollout", 3),
        (kind, "rollout", 5),
    ]
    assert all(f.seconds >= 0 for f in figures)
    rows = bench.table(figures).splitlines()[2:]
    assert [r.split(" | ")[:3] for r in rows] == [
        [f"| {kind}", p, str(n)] for p in ("steady", "rollout") for n in (3, 5)
    ]
    assert all(r.endswith("n/a (no 1k run) |") for r in rows)  # no anchor size in this run
    assert bench.verdicts(figures) == []  # nor a 10k one


async def test_settling_leaves_every_pod_created_and_a_steady_pass_writes_no_pod() -> None:
    settled = await bench.KINDS["daemonset"](4)
    harness = settled.harness
    assert len(harness.pods.list()) == 4
    harness.client.clear()
    await settled.steady()
    assert [c for c in harness.client.writes if c.resource.plural == "pods"] == []


def test_the_ratio_and_verdict_come_from_the_anchor_and_the_10k_size() -> None:
    figures = [
        bench.Figure("cloneset", "steady", 1_000, 0.010),
        bench.Figure("cloneset", "steady", 10_000, 0.200),
    ]
    rows = bench.table(figures).splitlines()[2:]
    assert rows[0].endswith("| 1.00x |") and rows[1].endswith("| 2.00x |")
    assert bench.verdicts(figures) == ["cloneset steady: per-pod 10k/1k = 2.00x SUPERLINEAR (goal <= 1.5x)"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pods", "10,x"], "--pods: must be comma-separated integers"),
        (["--pods", "0"], "--pods: every count must be at least 1"),
        (["--kinds", "deployment"], "--kinds: unknown deployment"),
        (["--passes", "warm"], "--passes: unknown warm"),
        (["--caches", "full,thin"], "--caches: unknown thin"),
    ],
)
def test_bad_options_name_the_option_and_the_rule(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit):
        bench.parse(argv)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("kind", list(bench.KINDS))
async def test_the_projected_cache_keeps_kruise_managers_projection_of_every_pod(
    kind: str, monkeypatch
) -> None:
    monkeypatch.delenv("KRUISE_CACHE_GUARD", raising=False)  # as the benchmark runs: unguarded records
    settled = await bench.KINDS[kind](4, bench.projected)
    settled.roll()
    await settled.steady()  # the rollout pass's writes come back into the cache projected too
    pods = settled.harness.pods.list()
    assert len(pods) == len(settled.harness.client.objects(PODS)) >= 3  # a rollout may delete one of 4
    assert all(is_projected(pod) for pod in pods)


async def test_the_full_cache_keeps_plain_copies() -> None:
    settled = await bench.KINDS["cloneset"](3, bench.full)
    assert not any(is_projected(pod) for pod in settled.harness.pods.list())


def test_a_guarded_projection_is_refused(monkeypatch) -> None:
    monkeypatch.setenv("KRUISE_CACHE_GUARD", "1")
    with pytest.raises(ValueError, match="KRUISE_CACHE_GUARD: must be unset"):
        bench.projected(FakeInformer())


def test_with_both_caches_each_row_has_its_anchor_and_its_ratio_to_the_full_cache() -> None:
    figures = [
        bench.Figure("cloneset", "steady", 1_000, 0.010, "full"),
        bench.Figure("cloneset", "steady", 1_000, 0.015, "projected"),
        bench.Figure("cloneset", "steady", 10_000, 0.100, "full"),
        bench.Figure("cloneset", "steady", 10_000, 0.300, "projected"),
    ]
    rows = [r.split(" | ")[-3:] for r in bench.table(figures).splitlines()[2:]]
    assert rows == [
        ["1.00x", "full", "1.00x |"],
        ["1.00x", "projected", "1.50x |"],
        ["1.00x", "full", "1.00x |"],
        ["2.00x", "projected", "3.00x |"],
    ]
    assert bench.verdicts(figures) == [
        "cloneset steady: per-pod 10k/1k = 1.00x linear",
        "cloneset steady (projected cache): per-pod 10k/1k = 2.00x SUPERLINEAR (goal <= 1.5x)",
    ]


def test_run_interleaves_the_caches_at_each_size(monkeypatch) -> None:
    monkeypatch.delenv("KRUISE_CACHE_GUARD", raising=False)
    monkeypatch.setattr(bench, "repeats", lambda pods: 1)
    figures = bench.run(["sidecarset"], ["steady"], [2, 3], ["full", "projected"])
    assert [(f.pods, f.cache) for f in figures] == [
        (2, "full"),
        (2, "projected"),
        (3, "full"),
        (3, "projected"),
    ]
