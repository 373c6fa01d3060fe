"""Ephemeral containers on the simulated kubelet: how long one runs and what it exits with.

An ephemeral container is started once (after the init containers, like the real kubelet) and is
never restarted. A simulated one whose command the image table knows (``imagecommands``: `ls x`,
`sh`, `sleep 3`, ...) ends as that command does; else it runs for the seconds its command sleeps
(`sh -c "echo; sleep 30"`), else for the pod's run time (the `sandbox.kruise.io/run-seconds`
annotation or the simulator's default), and exits 0. The pod's `sandbox.kruise.io/exit-code`,
when set, is its exit code either way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from kruise.sandbox.simulator import imagecommands
from kruise.sandbox.simulator.timing import annotated_exit_code, pod_run_seconds

_SLEEP = re.compile(r"(?:^|[\s;&|])sleep\s+(\d+(?:\.\d+)?)s?(?:$|[\s;&|])")


def slept_seconds(container: Mapping[str, Any]) -> float | None:
    """The seconds the container's command sleeps, when it is a `sleep N` (maybe inside `sh -c`)."""
    line = " ".join(str(a) for a in [*(container.get("command") or []), *(container.get("args") or [])])
    match = _SLEEP.search(line)
    return float(match.group(1)) if match else None


def run_seconds(pod: Mapping[str, Any], container: Mapping[str, Any], default: float) -> float:
    verdict = imagecommands.outcome(container)
    if isinstance(verdict, imagecommands.Exits):
        return verdict.seconds
    slept = slept_seconds(container)
    return slept if slept is not None else pod_run_seconds(dict(pod), default)


def exit_code(pod: Mapping[str, Any], container: Mapping[str, Any] | None = None) -> int:
    annotated = annotated_exit_code(dict(pod))
    if annotated is not None:
        return annotated
    verdict = imagecommands.outcome(container) if container is not None else None
    return verdict.code if isinstance(verdict, imagecommands.Exits) else 0


def field_path(name: str) -> str:
    return f"spec.ephemeralContainers{{{name}}}"
