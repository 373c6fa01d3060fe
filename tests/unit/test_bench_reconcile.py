"""`benchmarks reconcile` at tiny sizes: every kind settles to all its pods, each pass runs, and the table
and verdicts come out for what was measured (its figures are timings, so nothing here checks a value)."""

from __future__ import annotations

import pytest

from benchmarks import bench_reconcile as bench


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
    ],
)
def test_bad_options_name_the_option_and_the_rule(argv: list[str], message: str, capsys) -> None:
    with pytest.raises(SystemExit):
        bench.parse(argv)
    assert message in capsys.readouterr().err
