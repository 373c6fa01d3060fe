"""Grace periods of the kubelet's own container kills (``killgrace``), by reason."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.killgrace import (
    container_kill_grace,
    pod_termination_grace,
    spec_termination_grace,
)


def pod(spec_grace: int | None = None, deletion: int | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p"}
    if deletion is not None:
        meta["deletionGracePeriodSeconds"] = deletion
    spec: dict[str, Any] = {} if spec_grace is None else {"terminationGracePeriodSeconds": spec_grace}
    return {"metadata": meta, "spec": spec}


LIVE_GRACE = {"name": "app", "livenessProbe": {"terminationGracePeriodSeconds": 5}}


@pytest.mark.parametrize(
    ("the_pod", "container", "probe", "expected"),
    [
        (pod(), {"name": "app"}, "", 30),  # the default terminationGracePeriodSeconds
        (pod(10), {"name": "app"}, "", 10),
        (pod(0), {"name": "app"}, "", 2),  # never under the kubelet's 2 s minimum
        (pod(10), LIVE_GRACE, "liveness", 5),  # the probe's own grace
        (pod(10), LIVE_GRACE, "startup", 10),  # ... only for the probe that failed
        (pod(10), LIVE_GRACE, "", 10),  # ... and only for a probe kill
        (pod(10, deletion=7), LIVE_GRACE, "liveness", 7),  # a deletion's grace comes first
        (pod(10, deletion=0), {"name": "app"}, "", 2),
    ],
)
def test_container_kill_grace(the_pod: dict, container: dict, probe: str, expected: int) -> None:
    assert container_kill_grace(the_pod, container, probe) == expected


@pytest.mark.parametrize(
    ("the_pod", "expected"),
    [
        (pod(), 30),
        (pod(45), 45),
        (pod(45, deletion=12), 12),  # the deletion's grace overrides, with no 2 s floor
        (pod(45, deletion=1), 1),
        (pod(45, deletion=0), 45),  # a force deletion falls back to the spec's
        (pod(0), 1),  # the pod worker never passes less than 1 s
    ],
)
def test_pod_termination_grace(the_pod: dict, expected: int) -> None:
    assert pod_termination_grace(the_pod) == expected


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_a_pod_grace_is_at_least_one_second_and_a_kill_grace_two(spec_grace: int, deletion: int) -> None:
    the_pod = pod(spec_grace, deletion)
    assert pod_termination_grace(the_pod) == max(deletion or spec_grace, 1)
    assert spec_termination_grace(the_pod) == max(spec_grace, 1)
    assert container_kill_grace(the_pod, {"name": "app"}) == max(deletion, 2)
