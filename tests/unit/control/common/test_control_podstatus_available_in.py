"""`available_in`: the requeue that lands on the first instant `is_available` turns true, never before."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kruise.control.common.podstatus import AVAILABILITY_TICK, available_in, is_available
from tests.kit.control_builders import NOW, build_pod


@pytest.mark.parametrize("ready_for", [0, 1, 19, 30])
def test_requeue_after_available_in_finds_the_pod_available_and_not_a_tick_earlier(ready_for: int) -> None:
    pod = build_pod("a", ready_since=timedelta(seconds=ready_for))
    wait = available_in(pod, 30, NOW)
    assert wait == pytest.approx(30 - ready_for + AVAILABILITY_TICK)
    assert not is_available(pod, 30, NOW + timedelta(seconds=wait - AVAILABILITY_TICK))
    assert is_available(pod, 30, NOW + timedelta(seconds=wait))
    assert available_in(pod, 30, NOW + timedelta(seconds=wait)) is None


def test_no_wait_when_time_cannot_change_anything() -> None:
    assert available_in(build_pod("a", ready=False), 30, NOW) is None
    assert available_in(build_pod("a"), 0, NOW) is None
    assert available_in(build_pod("a", ready_since=timedelta(hours=1)), 30, NOW) is None


def test_ready_without_a_transition_time_waits_the_whole_min_ready_seconds() -> None:
    pod = build_pod("a")
    next(c for c in pod["status"]["conditions"] if c["type"] == "Ready").pop("lastTransitionTime")
    assert available_in(pod, 30, NOW) == 30.0
