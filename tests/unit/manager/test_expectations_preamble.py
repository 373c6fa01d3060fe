"""The shared expectations preamble: what each `Overtime` choice does once an event was lost, and the
resourceVersion checks reconcilers run before writing again."""

from __future__ import annotations

import pytest

from kruise.kube.clock import FakeClock
from kruise.kube.controller import Result
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.manager.writers.expectations import (
    FORCED_EXPECTATION_REQUEUE,
    Hold,
    Overtime,
    scale_hold,
    settled,
    writes_pending,
)

KEY = "default/web"


def _pending(clock: FakeClock) -> ScaleExpectations:
    expectations = ScaleExpectations(clock, timeout=300.0)
    expectations.expect(KEY, ScaleExpectations.CREATE, "web-0")
    return expectations


@pytest.mark.parametrize("overtime", list(Overtime))
def test_nothing_pending_lets_the_reconcile_act(overtime: Overtime) -> None:
    assert scale_hold(ScaleExpectations(FakeClock()), KEY, overtime) is None


@pytest.mark.parametrize("overtime", list(Overtime))
def test_before_the_timeout_the_reconcile_waits_for_the_rest_of_it(overtime: Overtime) -> None:
    clock = FakeClock()
    expectations = _pending(clock)
    assert scale_hold(expectations, KEY, overtime) == Hold(Result(requeue_after=300.0))
    clock.step(120.0)
    assert scale_hold(expectations, KEY, overtime) == Hold(Result(requeue_after=180.0))


@pytest.mark.parametrize(
    ("overtime", "hold", "forgotten"),
    [
        (Overtime.GIVE_UP, Hold(None), False),
        (Overtime.FORGET_AND_REQUEUE, Hold(Result(requeue_after=FORCED_EXPECTATION_REQUEUE)), True),
        (Overtime.FORGET_AND_PROCEED, None, True),
    ],
)
def test_overtime_decides_after_the_timeout(overtime: Overtime, hold: Hold | None, forgotten: bool) -> None:
    clock = FakeClock()
    expectations = _pending(clock)
    scale_hold(expectations, KEY, overtime)
    clock.step(300.0)
    assert scale_hold(expectations, KEY, overtime) == hold
    assert expectations.satisfied(KEY)[0] is forgotten


def _pod(name: str, rv: str) -> dict[str, object]:
    return {"metadata": {"name": name, "uid": f"uid-{name}", "resourceVersion": rv}}


def test_writes_pending_until_the_cache_shows_our_write() -> None:
    expectations = ResourceVersionExpectations(FakeClock())
    expectations.expect(_pod("a", "7"))
    assert writes_pending(expectations, [_pod("b", "1"), _pod("a", "6")])
    assert not writes_pending(expectations, [_pod("a", "7")])
    assert not writes_pending(expectations, [_pod("a", "6")])  # the newer copy was seen: forgotten


def test_observe_records_what_the_cache_shows_first() -> None:
    expectations = ResourceVersionExpectations(FakeClock())
    expectations.expect(_pod("a", "7"))
    assert not writes_pending(expectations, [_pod("a", "8")], observe=True)
    assert len(expectations) == 0


def test_settled_keeps_only_objects_safe_to_write_again() -> None:
    expectations = ResourceVersionExpectations(FakeClock())
    expectations.expect(_pod("a", "7"))
    pods = [_pod("a", "6"), _pod("b", "3")]
    assert [p["metadata"]["name"] for p in settled(expectations, pods)] == ["b"]
