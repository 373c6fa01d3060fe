"""Ephemeral containers on the simulated kubelet: how long one runs and what it exits with.

An ephemeral container is started once (after the init containers, like the real kubelet) and is
never restarted. A simulated one runs for the seconds its command sleeps (`sleep 30`, or
`sh -c "sleep 30"`), else for the pod's run time (the `sandbox.kruise.io/run-seconds` annotation
or the simulator's default), then exits with the pod's `sandbox.kruise.io/exit-code` (0 unless set).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kruise.sandbox.simulator.timing import pod_exit_code, pod_run_seconds

_SLEEP = re.compile(r"(?:^|[\s;&|])sleep\s+(\d+(?:\.\d+)?)s?(?:$|[\s;&|])")


def slept_seconds(container: Mapping[str, Any]) -> float | None:
    """The seconds the container's command sleeps, when it is a `sleep N` (maybe inside `sh -c`)."""
    line = " ".join(str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])])
    match = _SLEEP.search(line)
    return float(match.group(1)) if match else None


def run_seconds(pod: Mapping[str, Any], container: Mapping[str, Any], default: float) -> float:
    slept = slept_seconds(container)
    return slept if slept is not None else pod_run_seconds(dict(pod), default)


def exit_code(pod: Mapping[str, Any]) -> int:
    return pod_exit_code(dict(pod))


def field_path(name: str) -> str:
    return f"spec.ephemeralContainers{{{name}}}"
