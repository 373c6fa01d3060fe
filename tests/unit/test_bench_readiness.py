"""bench_readiness's arithmetic: the rate-limit floor it prints and its percentiles."""

from __future__ import annotations

import pytest

from benchmarks.bench_readiness import ReadyClock, floor_mean, percentile


def test_floor_counts_the_writes_before_each_pod_is_ready() -> None:
    # burst 1 at 1 qps: with one write a pod, pods are ready at 0, 1, 2 s; with two, at 1, 3, 5 s
    assert floor_mean(3, 1, qps=1, burst=1) == pytest.approx(1.0)
    assert floor_mean(3, 2, qps=1, burst=1) == pytest.approx(3.0)


def test_percentile_is_nearest_rank() -> None:
    ordered = [float(i) for i in range(1, 11)]
    assert (percentile(ordered, 0.5), percentile(ordered, 0.9), percentile(ordered, 1.0)) == (5.0, 9.0, 10.0)


def test_ready_clock_records_each_pod_of_its_app_once() -> None:
    clock = ReadyClock()
    clock.start("web")
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    clock.observe({"metadata": {"name": "a", "labels": {"app": "web"}}, **ready})
    clock.observe({"metadata": {"name": "b", "labels": {"app": "other"}}, **ready})
    clock.observe({"metadata": {"name": "c", "labels": {"app": "web"}}, "status": {}})
    first = clock.ready["a"]
    clock.observe({"metadata": {"name": "a", "labels": {"app": "web"}}, **ready})
    assert list(clock.ready) == ["a"] and clock.ready["a"] == first
