"""kruise-daemon prober rules: probe timing defaults, threshold counting, state entries and the
NodePodProbe status built from the spec, the current status and this daemon's results."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.daemon.podprobe.outcomes import (
    MESSAGE_LIMIT,
    Threshold,
    Timing,
    build_status,
    message_of,
    next_state,
)

S, F = "Succeeded", "Failed"


def test_timing_defaults_and_explicit_values():
    # upstream's worker: unset or non-positive period/timeout/thresholds count as 1 (not the kubelet's
    # 10 s period and 3 failures), which upstream's e2e "pod probe marker test2" relies on: its probe
    # walks Failed -> "data" -> "gate" within 10 s and 20 s windows with no timing fields set
    assert Timing.of({}) == Timing(0, 1, 1, 1, 1)
    given_values = {"initialDelaySeconds": 5, "periodSeconds": 2, "timeoutSeconds": 3,
                    "successThreshold": 2, "failureThreshold": 1}  # fmt: skip
    assert Timing.of(given_values) == Timing(5, 2, 3, 2, 1)
    assert Timing.of({"periodSeconds": 0, "failureThreshold": 0}) == Timing(0, 1, 1, 1, 1)
    assert Timing.of({"periodSeconds": -3, "successThreshold": -1}) == Timing(0, 1, 1, 1, 1)


@given(
    st.integers(min_value=1, max_value=4),
    st.integers(min_value=1, max_value=4),
    st.lists(st.sampled_from([S, F]), max_size=30),
)
def test_threshold_reports_only_after_enough_consecutive_outcomes(success, failure, outcomes):
    threshold = Threshold(success, failure)
    for i, outcome in enumerate(outcomes):
        run = 0
        for previous in reversed(outcomes[: i + 1]):
            if previous != outcome:
                break
            run += 1
        needed = success if outcome == S else failure
        assert threshold.observe(outcome) == (outcome if run >= needed else None)


def test_threshold_refuses_unknown_outcomes():
    with pytest.raises(ValueError, match="outcome: must be Succeeded or Failed"):
        Threshold(1, 1).observe("Unknown")


def test_next_state_moves_transition_only_on_flips_and_skips_no_change():
    first = next_state(None, S, "", "t1")
    assert first == {"state": S, "lastProbeTime": "t1", "lastTransitionTime": "t1"}
    assert next_state(first, S, "", "t2") is None
    same_state = next_state(first, S, "busy", "t2")
    assert same_state == {"state": S, "lastProbeTime": "t2", "lastTransitionTime": "t1", "message": "busy"}
    flipped = next_state(same_state, F, "down", "t3")
    assert flipped == {"state": F, "lastProbeTime": "t3", "lastTransitionTime": "t3", "message": "down"}


def test_message_is_trimmed_and_capped():
    assert message_of("  ok\n") == "ok"
    assert len(message_of("x" * 5000)) == MESSAGE_LIMIT


def test_status_keeps_spec_order_prior_states_and_drops_what_left_the_spec():
    spec = {"podProbes": [
        {"name": "a", "namespace": "ns", "uid": "ua", "probes": [{"name": "m#p1"}, {"name": "m#p2"}]},
        {"name": "b", "namespace": "ns", "uid": "ub", "probes": [{"name": "m#p1"}]},
        {"name": "c", "namespace": "ns", "uid": "uc", "probes": [{"name": "m#p1"}]},
    ]}  # fmt: skip
    current = {"podProbeStatuses": [
        {"name": "b", "namespace": "ns", "uid": "ub", "probeStates": [{"name": "m#p1", "state": F}]},
        {"name": "gone", "namespace": "ns", "uid": "ug", "probeStates": [{"name": "m#p1", "state": S}]},
        {"name": "a", "namespace": "ns", "uid": "ua", "probeStates": [{"name": "m#old", "state": S}]},
    ]}  # fmt: skip
    results = {("ua", "m#p2"): {"state": S}, ("ua", "m#p1"): {"state": F, "message": "x"}}
    status = build_status(spec, current, results)
    assert status == {"podProbeStatuses": [
        {"name": "a", "namespace": "ns", "uid": "ua",
         "probeStates": [{"name": "m#p1", "state": F, "message": "x"}, {"name": "m#p2", "state": S}]},
        {"name": "b", "namespace": "ns", "uid": "ub", "probeStates": [{"name": "m#p1", "state": F}]},
    ]}  # fmt: skip
    assert build_status({}, current, results) == {}
