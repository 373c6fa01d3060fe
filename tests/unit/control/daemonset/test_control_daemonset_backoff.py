"""Failed daemon pod backoff (client-go flowcontrol.Backoff as the daemon controller uses it) and
its effect on the manage plan."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.common.nodeeligibility import NodeFit
from kruise.control.daemonset.backoff import (
    INITIAL_BACKOFF,
    MAX_BACKOFF,
    FailedPodsBackoff,
    backoff_key,
)
from kruise.control.daemonset.manage import group_by_node, plan_manage
from tests.kit.control_builders import NOW, build_pod

RUN = NodeFit(True, True)


def test_upstream_numbers():
    assert (INITIAL_BACKOFF, MAX_BACKOFF) == (1.0, 900.0)


def test_key_names_uid_observed_generation_and_node():
    ds = {"metadata": {"uid": "u-1"}, "status": {"observedGeneration": 3}}
    assert backoff_key(ds, "node-a") == "u-1/3/node-a"
    assert backoff_key({"metadata": {"uid": "u-1"}}, "node-a") == "u-1/0/node-a"


def test_first_failure_is_admitted_then_held_for_one_second():
    b = FailedPodsBackoff()
    assert b.admit("k", 100.0) == 0.0
    assert b.get("k") == 1.0
    assert b.admit("k", 100.5) == 1.0  # held: the whole delay, not the 0.5 s left
    assert b.admit("k", 101.0) == 0.0  # exactly one delay later it is admitted again
    assert b.get("k") == 2.0


def test_later_checks_in_the_window_aim_at_the_first_checks_moment():
    """A pass woken early inside the hold (a paced status write, say) must not move the deletion:
    it asks for the time left to the moment the first held check promised."""
    b = FailedPodsBackoff()
    b.admit("k", 100.0)
    b.admit("k", 101.0)  # second failure admitted; the delay is now 2 s
    assert b.admit("k", 101.0) == 2.0  # first held check: the whole delay, until 103
    assert b.admit("k", 102.0) == 1.0  # woken early: still 103, not 104
    assert b.admit("k", 102.5) == 0.5
    assert b.admit("k", 103.0) == 0.0  # the hold ends there
    assert b.admit("k", 103.0) == 4.0  # the next hold starts afresh from its own first check


def test_first_held_check_after_the_bump_counts_from_itself():
    """Upstream requeues after Get(key) from the pass that first sees the pod held: that moment may
    be after the bump's delay has ended, and the pass then finds the key free anyway."""
    b = FailedPodsBackoff()
    b.admit("k", 0.0)
    assert b.admit("k", 0.75) == 1.0  # the first held check requeues until 1.75
    assert b.admit("k", 1.0) == 0.0  # but a pass at the bump's end is admitted, as upstream


def test_keys_are_independent():
    b = FailedPodsBackoff()
    b.admit("a", 0.0)
    assert b.admit("b", 0.0) == 0.0
    assert b.get("a") == b.get("b") == 1.0


def test_two_failed_pods_on_one_node_in_one_pass_delete_only_the_first():
    b = FailedPodsBackoff()
    assert [b.admit("k", 5.0), b.admit("k", 5.0)] == [0.0, 1.0]


def test_long_quiet_period_restarts_at_initial_and_gc_drops_it():
    b = FailedPodsBackoff()
    t = 0.0
    for _ in range(12):
        b.next("k", t)
        t += b.get("k")
    assert b.get("k") == MAX_BACKOFF
    b.next("k", t + 2 * MAX_BACKOFF + 0.1)
    assert b.get("k") == INITIAL_BACKOFF
    b.gc(t + 10 * MAX_BACKOFF)
    assert len(b) == 0


def test_exactly_twice_the_maximum_is_not_yet_expired():
    b = FailedPodsBackoff()
    b.next("k", 0.0)
    b.next("k", 2 * MAX_BACKOFF)
    assert b.get("k") == 2.0


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="initial"):
        FailedPodsBackoff(initial=0)
    with pytest.raises(ValueError, match="maximum"):
        FailedPodsBackoff(initial=10, maximum=5)


@given(st.lists(st.floats(min_value=0.0, max_value=3 * MAX_BACKOFF), min_size=1, max_size=30))
def test_delay_is_always_a_capped_power_of_two(gaps):
    """Whatever the spacing of bumps, the delay is initial·2ⁿ capped at the maximum, grows by
    exactly one doubling per bump inside the window and restarts after 2·maximum of quiet."""
    b = FailedPodsBackoff()
    t, previous = 0.0, None
    for gap in gaps:
        t += gap
        b.next("k", t)
        delay = b.get("k")
        expected = (
            INITIAL_BACKOFF if previous is None or gap > 2 * MAX_BACKOFF else min(previous * 2, MAX_BACKOFF)
        )
        assert delay == expected
        assert delay == MAX_BACKOFF or (delay / INITIAL_BACKOFF).is_integer()
        previous = delay


@given(st.integers(min_value=1, max_value=40), st.floats(min_value=0.0, max_value=1.0))
def test_a_failing_node_is_admitted_once_per_delay(rounds, fraction):
    """Checking again before the delay has passed is held (requeue after the delay); checking at
    the delay's end is admitted. The admitted moments follow 1, 2, 4 … capped at 900 s."""
    b = FailedPodsBackoff()
    t = 0.0
    assert b.admit("k", t) == 0.0
    for _ in range(rounds):
        delay = b.get("k")
        early = t + fraction * delay * 0.999
        assert b.admit("k", early) == delay
        t += delay
        assert b.admit("k", t) == 0.0
        assert b.get("k") == min(delay * 2, MAX_BACKOFF)


def _plan(pods: list[dict[str, Any]], admit, surge: bool = False):
    return plan_manage(
        [{"metadata": {"name": "a"}, "spec": {}}],
        lambda n: RUN,
        group_by_node(pods),
        "new",
        allow_surge=surge,
        min_ready_seconds=0,
        now=NOW,
        admit_failed=admit,
    )


def test_held_failed_pod_is_kept_and_requeues_after_the_delay():
    failed = build_pod("ds-a", "new", node="a", phase="Failed", ready=False)
    asked: list[str] = []

    def hold(node: str) -> float:
        asked.append(node)
        return 4.0

    held = _plan([failed], hold)
    assert asked == ["a"]
    assert held.pods_to_delete == () and held.failed_pods == () and held.nodes_to_create == ()
    assert held.requeue_after == 4.0
    # with surge a node left without a running pod gets a new one even while the failed one is held
    assert _plan([failed], hold, surge=True).nodes_to_create == ("a",)
    admitted = _plan([failed], lambda node: 0.0)
    assert admitted.pods_to_delete == ("ds-a",) and admitted.failed_pods == (("ds-a", "a"),)
    assert admitted.requeue_after == 0.0


@given(
    st.integers(min_value=0, max_value=12),
    st.lists(st.floats(min_value=0.0, max_value=0.999), min_size=1, max_size=10),
)
def test_every_held_check_in_one_window_aims_at_one_moment(bumps, fractions):
    """However many passes run inside one hold, and whenever, each asks to come back at the moment
    the first held check set: its time plus the whole delay."""
    b = FailedPodsBackoff()
    t = 0.0
    b.admit("k", t)
    for _ in range(bumps):
        t += b.get("k")
        assert b.admit("k", t) == 0.0
    delay = b.get("k")
    checks = sorted(t + f * delay for f in fractions)
    deadline = checks[0] + delay
    for now in checks:
        assert now + b.admit("k", now) == pytest.approx(deadline)
