"""Grace periods of the kubelet's own container kills (``killgrace``), by reason."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.killgrace import (
    container_kill_grace,
    pod_termination_grace,
    spec_termination_grace,
)
from tests.kit.pods import pod

LIVE_GRACE = {"name": "app", "livenessProbe": {"terminationGracePeriodSeconds": 5}}


@pytest.mark.parametrize(
    ("the_pod", "container", "probe", "expected"),
    [
        (pod(), {"name": "app"}, "", 30),  # the default terminationGracePeriodSeconds
        (pod(grace=10), {"name": "app"}, "", 10),
        (pod(grace=0), {"name": "app"}, "", 2),  # never under the kubelet's 2 s minimum
        (pod(grace=10), LIVE_GRACE, "liveness", 5),  # the probe's own grace
        (pod(grace=10), LIVE_GRACE, "startup", 10),  # ... only for the probe that failed
        (pod(grace=10), LIVE_GRACE, "", 10),  # ... and only for a probe kill
        (pod(grace=10, deletion_grace=7), LIVE_GRACE, "liveness", 7),  # a deletion's grace comes first
        (pod(grace=10, deletion_grace=0), {"name": "app"}, "", 2),
    ],
)
def test_container_kill_grace(the_pod: dict, container: dict, probe: str, expected: int) -> None:
    assert container_kill_grace(the_pod, container, probe) == expected


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        (pod(), 30),
        (pod(grace=45), 45),
        (pod(grace=45, deletion_grace=12), 12),  # the deletion's grace overrides, with no 2 s floor
        (pod(grace=45, deletion_grace=1), 1),
        (pod(grace=45, deletion_grace=0), 45),  # a force deletion falls back to the spec's
        (pod(grace=0), 1),  # the pod worker never passes less than 1 s
    ],
)
def test_pod_termination_grace(the_pod: dict, expected: int) -> None:
    assert pod_termination_grace(the_pod) == expected


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_a_pod_grace_is_at_least_one_second_and_a_kill_grace_two(spec_grace: int, deletion: int) -> None:
    the_pod = pod(grace=spec_grace, deletion_grace=deletion)
    assert pod_termination_grace(the_pod) == max(deletion or spec_grace, 1)
    assert spec_termination_grace(the_pod) == max(spec_grace, 1)
    assert container_kill_grace(the_pod, {"name": "app"}) == max(deletion, 2)
