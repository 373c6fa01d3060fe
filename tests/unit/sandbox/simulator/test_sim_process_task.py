"""Helpers of the process containers' CRI task: Go's duration text and the exec command mapping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.process_task import go_duration, start_failed
from kruise.sandbox.simulator.processes import ProcessImage, StartError, not_found


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (1, "1s"), (59, "59s"), (60, "1m0s"), (90, "1m30s"), (3600, "1h0m0s")]
)
def test_go_duration_prints_as_go_does(seconds: int, text: str) -> None:
    assert go_duration(seconds) == text


@given(st.integers(min_value=0, max_value=10**6))
def test_go_duration_round_trips(seconds: int) -> None:
    text = go_duration(seconds)
    hours, _, rest = text.rpartition("h")
    minutes, _, secs = rest.rpartition("m")
    assert int(hours or 0) * 3600 + int(minutes or 0) * 60 + int(secs.removesuffix("s")) == seconds


def test_process_image_maps_exec_commands_like_the_container_command() -> None:
    image = ProcessImage("tools:*", {"sh": ["/bin/sh"], "check": ["/usr/bin/python3", "-m", "check"]}, "sh")
    assert image.local(["check", "--fast"]) == ["/usr/bin/python3", "-m", "check", "--fast"]
    assert image.local(["curl"]) is None
    assert image.local([]) is None
    with pytest.raises(StartError) as caught:
        image.argv(["curl"], [])
    assert str(caught.value) == f"failed to create containerd task: {not_found('curl')}"
    assert not_found("curl") == 'exec: "curl": executable file not found in $PATH'


def test_start_failed_uses_containerds_wording() -> None:
    assert start_failed("abc", not_found("curl")) == (
        'failed to exec in container: failed to start exec "abc": OCI runtime exec failed: exec failed: '
        'unable to start container process: exec: "curl": executable file not found in $PATH: unknown'
    )
