"""How long a simulated ephemeral container runs and what it exits with."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator import ephemeral
from kruise.sandbox.simulator.timing import EXIT_CODE_ANNOTATION, RUN_SECONDS_ANNOTATION


@pytest.mark.parametrize(
    ("container", "seconds"),
    [
        ({"command": ["sleep", "30"]}, 30.0),
        ({"command": ["sleep"], "args": ["2.5"]}, 2.5),
        ({"command": ["sh", "-c", "echo hi; sleep 7"]}, 7.0),
        ({"command": ["/bin/sh", "-c", "sleep 12s && echo done"]}, 12.0),
        ({"command": ["sleep", "infinity"]}, None),
        ({"command": ["nosleep", "3"]}, None),
        ({"command": ["sh"]}, None),
        ({}, None),
    ],
)
def test_slept_seconds_reads_a_sleep_command(container, seconds):
    assert ephemeral.slept_seconds(container) == seconds


@given(st.integers(min_value=0, max_value=10**6))
def test_any_whole_sleep_is_its_run_time(n):
    assert ephemeral.run_seconds({}, {"command": ["sleep", str(n)]}, 5.0) == float(n)


def test_without_a_sleep_the_pod_run_time_applies():
    pod = {"metadata": {"annotations": {RUN_SECONDS_ANNOTATION: "9"}}}
    assert ephemeral.run_seconds(pod, {"command": ["sh"]}, 5.0) == 9.0
    assert ephemeral.run_seconds({"metadata": {}}, {}, 5.0) == 5.0


def test_exit_code_follows_the_pod_annotation():
    assert ephemeral.exit_code({"metadata": {"annotations": {EXIT_CODE_ANNOTATION: "3"}}}) == 3
    assert ephemeral.exit_code({"metadata": {}}) == 0
    assert ephemeral.field_path("dbg") == "spec.ephemeralContainers{dbg}"
