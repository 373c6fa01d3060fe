"""Pure rules of kruise-daemon's PodProbeMarker prober: probe timing, thresholds, and the status.

A probe's raw outcome (Succeeded or Failed) becomes its reported state only after
`successThreshold` consecutive successes or `failureThreshold` consecutive failures, as the
kubelet counts. The NodePodProbe status is the current status kept for the pods and probes the spec
still lists (so a restarted daemon does not wipe what its predecessor reported), with this daemon's
own results laid over it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.objects import Obj
from kruise.api.podprobemarker import PROBE_FAILED, PROBE_SUCCEEDED

# Upstream's daemon (pkg/daemon/podprobe worker.go, prober.go), not the kubelet: nothing defaults a
# PodProbeMarker's probe fields (no webhook defaulting, no CRD defaults), and the worker takes a value
# below 1 as 1 — an unset probe runs every second, reports after one outcome, times out after a second.
DEFAULT_PERIOD_SECONDS = 1
DEFAULT_TIMEOUT_SECONDS = 1
DEFAULT_SUCCESS_THRESHOLD = 1
DEFAULT_FAILURE_THRESHOLD = 1
MESSAGE_LIMIT = 1024
"""Longest probe message kept: the output goes into a pod condition."""


def _positive(value: Any, default: int) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


@dataclass(frozen=True)
class Timing:
    initial_delay: int
    period: int
    timeout: int
    success_threshold: int
    failure_threshold: int

    @classmethod
    def of(cls, probe: Obj) -> Timing:
        """The core v1.Probe timing fields; an unset or zero value is upstream's daemon's 1 (delay 0)."""
        delay = probe.get("initialDelaySeconds")
        return cls(
            initial_delay=int(delay) if isinstance(delay, int) and delay > 0 else 0,
            period=_positive(probe.get("periodSeconds"), DEFAULT_PERIOD_SECONDS),
            timeout=_positive(probe.get("timeoutSeconds"), DEFAULT_TIMEOUT_SECONDS),
            success_threshold=_positive(probe.get("successThreshold"), DEFAULT_SUCCESS_THRESHOLD),
            failure_threshold=_positive(probe.get("failureThreshold"), DEFAULT_FAILURE_THRESHOLD),
        )


@dataclass
class Threshold:
    """Consecutive-outcome counting of one probe."""

    success_threshold: int
    failure_threshold: int
    last: str | None = None
    run: int = 0

    def observe(self, outcome: str) -> str | None:
        """The state to report after this outcome, or None while the run is below its threshold."""
        if outcome not in (PROBE_SUCCEEDED, PROBE_FAILED):
            raise ValueError(f"outcome: must be {PROBE_SUCCEEDED} or {PROBE_FAILED}, got {outcome!r}")
        if outcome == self.last:
            self.run += 1
        else:
            self.last, self.run = outcome, 1
        needed = self.success_threshold if outcome == PROBE_SUCCEEDED else self.failure_threshold
        return outcome if self.run >= needed else None


def message_of(output: str) -> str:
    text = output.strip()
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT]


def next_state(current: Obj | None, state: str, message: str, now: str) -> dict[str, Any] | None:
    """The probe's new state entry (name left to the caller); None when nothing would change.

    `lastProbeTime` moves with each change written; `lastTransitionTime` only when the state flips.
    """
    if current is not None and current.get("state") == state and (current.get("message") or "") == message:
        return None
    transition = (
        now if current is None or current.get("state") != state else current.get("lastTransitionTime")
    )
    entry = {"state": state, "lastProbeTime": now, "lastTransitionTime": transition or now}
    if message:
        entry["message"] = message
    return entry


def build_status(spec: Obj, current: Obj, results: Mapping[tuple[str, str], Obj]) -> dict[str, Any]:
    """The NodePodProbe status: one entry per spec pod that has any probe state, states in spec order.

    `results` maps (pod uid, probe name) to this daemon's state entry (without `name`); a probe with
    no local result keeps the state the current status holds for it.
    """
    kept: dict[tuple[str, str], Obj] = {}
    for entry in current.get("podProbeStatuses") or []:
        for state in entry.get("probeStates") or []:
            kept[(entry.get("uid", ""), state.get("name", ""))] = state
    statuses = []
    for pod in spec.get("podProbes") or []:
        states = []
        for probe in pod.get("probes") or []:
            key = (pod.get("uid", ""), probe.get("name", ""))
            if key in results:
                states.append({"name": probe["name"], **results[key]})
            elif key in kept:
                states.append(dict(kept[key]))
        if states:
            statuses.append(
                {"name": pod["name"], "namespace": pod["namespace"], "uid": pod["uid"], "probeStates": states}
            )
    return {"podProbeStatuses": statuses} if statuses else {}
