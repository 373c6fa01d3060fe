"""The real-node kubelet's relist gate: a pod's next sync waits for the first relist after its last one."""

import pytest

from kruise.sandbox.simulator.pleg import RelistGate


def test_a_pod_never_synced_syncs_at_once():
    assert RelistGate().wait("ns/a", 12.3) == 0.0


def test_the_next_sync_waits_for_the_first_relist_after_the_last_one_ended():
    gate = RelistGate(period=1.0)
    gate.synced("ns/a", 10.25)
    assert gate.wait("ns/a", 10.5) == pytest.approx(0.5)
    assert gate.wait("ns/a", 11.0) == 0.0
    assert gate.wait("ns/a", 13.0) == 0.0


def test_a_sync_ending_on_a_relist_waits_a_whole_period():
    """The snapshot must be taken after the sync ended, not at the same instant."""
    gate = RelistGate(period=0.5)
    gate.synced("ns/a", 2.0)
    assert gate.wait("ns/a", 2.0) == pytest.approx(0.5)


def test_two_syncs_in_a_row_are_a_relist_apart():
    """What a sync changed is reported by the next one, and a change that follows waits one more:
    from the end of a sync to the one after next there is at least one whole period."""
    gate = RelistGate(period=1.0)
    gate.synced("ns/a", 20.9)  # the sync that waited out a postStart hook
    start = 20.9 + gate.wait("ns/a", 20.9)  # the follow-up reports the container ready
    assert start == pytest.approx(21.0)
    gate.synced("ns/a", start + 0.01)
    assert start + 0.01 + gate.wait("ns/a", start + 0.01) == pytest.approx(22.0)


def test_pods_are_gated_apart_and_forgotten():
    gate = RelistGate(period=1.0)
    gate.synced("ns/a", 5.5)
    assert gate.wait("ns/b", 5.6) == 0.0
    gate.forget("ns/a")
    assert gate.wait("ns/a", 5.6) == 0.0


def test_period_must_be_positive():
    with pytest.raises(ValueError, match="period: must be > 0"):
        RelistGate(period=0)
