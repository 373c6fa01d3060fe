"""`KruisePodReady` not-ready keys: how Kruise takes a pod out of Service endpoints without deleting it.

The condition's message is a JSON list of `{"userAgent", "key"}` entries (sorted, as upstream
dumps it); any entry makes the condition False, and because the pod carries the readiness gate,
Ready goes False too. Lifecycle hooks with `markPodNotReady` add `preDeleteHook` /
`preUpdateHook` under user agent `Lifecycle`, and remove `preUpdateHook` once updated.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from kruise.api.conditions import condition_of, set_condition
from kruise.api.controllerref import controller_of
from kruise.api.keys import (
    CONDITION_KRUISE_POD_READY,
    KRUISE_POD_READY_KEY_PRE_DELETE_HOOK,
    KRUISE_POD_READY_KEY_PRE_UPDATE_HOOK,
    LIFECYCLE_STATE_PREPARING_DELETE,
    LIFECYCLE_STATE_PREPARING_UPDATE,
    LIFECYCLE_STATE_UPDATED,
)
from kruise.api.objects import MutableObj, spec_of
from kruise.control.common.inplace.engine import RefreshResult, recompute_ready
from kruise.control.common.lifecycle import rfc3339

LIFECYCLE_USER_AGENT = "Lifecycle"


def _has_gate(pod: Mapping[str, Any]) -> bool:
    gates = spec_of(pod).get("readinessGates") or []
    return any(g.get("conditionType") == CONDITION_KRUISE_POD_READY for g in gates)


def _messages(condition: Mapping[str, Any] | None) -> list[dict[str, str]]:
    raw = (condition or {}).get("message") or ""
    try:
        parsed = json.loads(raw) if raw else []
    except ValueError:
        return []
    return [m for m in parsed if isinstance(m, dict)] if isinstance(parsed, list) else []


def _dump(messages: list[dict[str, str]]) -> str:
    ordered = sorted(messages, key=lambda m: (m.get("userAgent", ""), m.get("key", "")))
    return json.dumps(
        [{"userAgent": m.get("userAgent", ""), "key": m.get("key", "")} for m in ordered],
        separators=(",", ":"),
    )


def add_not_ready_key(pod: Mapping[str, Any], user_agent: str, key: str, now: datetime) -> MutableObj | None:
    """The pod (for a status write) with the key added, or None when nothing changes."""
    if not _has_gate(pod):
        return None
    condition = condition_of(pod, CONDITION_KRUISE_POD_READY)
    messages = _messages(condition)
    if any(m.get("userAgent") == user_agent and m.get("key") == key for m in messages):
        return None
    messages.append({"userAgent": user_agent, "key": key})
    clone: MutableObj = copy.deepcopy(dict(pod))
    status = clone.setdefault("status", {})
    new = {
        **(condition or {}),
        "type": CONDITION_KRUISE_POD_READY,
        "status": "False",
        "message": _dump(messages),
        "lastTransitionTime": rfc3339(now),
    }
    status["conditions"] = set_condition(status.get("conditions"), new, same=None)
    recompute_ready(clone, now)
    return clone


def remove_not_ready_key(
    pod: Mapping[str, Any], user_agent: str, key: str, now: datetime
) -> MutableObj | None:
    """The pod with the key removed (True again when no key is left), or None when absent."""
    if not _has_gate(pod):
        return None
    condition = condition_of(pod, CONDITION_KRUISE_POD_READY)
    if condition is None:
        return None
    messages = _messages(condition)
    kept = [m for m in messages if not (m.get("userAgent") == user_agent and m.get("key") == key)]
    if len(kept) == len(messages):
        return None
    clone: MutableObj = copy.deepcopy(dict(pod))
    updated = {**condition, "message": _dump(kept), "lastTransitionTime": rfc3339(now)}
    if not kept:
        updated["status"] = "True"
    clone["status"]["conditions"] = set_condition(clone["status"]["conditions"], updated, same=None)
    return clone


def lifecycle_readiness_change(pod: Mapping[str, Any], state: str, now: datetime) -> MutableObj | None:
    """`executePodNotReadyPolicy`: the status write a markPodNotReady hook needs when the pod
    moves to `state`, or None."""
    if state == LIFECYCLE_STATE_PREPARING_DELETE:
        return add_not_ready_key(pod, LIFECYCLE_USER_AGENT, KRUISE_POD_READY_KEY_PRE_DELETE_HOOK, now)
    if state == LIFECYCLE_STATE_PREPARING_UPDATE:
        return add_not_ready_key(pod, LIFECYCLE_USER_AGENT, KRUISE_POD_READY_KEY_PRE_UPDATE_HOOK, now)
    if state == LIFECYCLE_STATE_UPDATED:
        return remove_not_ready_key(pod, LIFECYCLE_USER_AGENT, KRUISE_POD_READY_KEY_PRE_UPDATE_HOOK, now)
    return None


def lacks_condition(pod: Mapping[str, Any]) -> bool:
    """The pod carries the `KruisePodReady` readiness gate but not yet the condition."""
    return _has_gate(pod) and condition_of(pod, CONDITION_KRUISE_POD_READY) is None


OWNERS_WRITING_READINESS = frozenset({"CloneSet", "StatefulSet", "DaemonSet", "BroadcastJob"})
"""Kruise workload kinds (group apps.kruise.io) whose controller writes a new pod's first
`KruisePodReady` itself, in the one pods/status write it makes anyway (CloneSet, Advanced
StatefulSet and Advanced DaemonSet with `InPlaceUpdateReady`; BroadcastJob alone)."""


def written_by_owner(pod: Mapping[str, Any]) -> bool:
    """The pod's controller writes its first `KruisePodReady` in its own status write (one write per
    new pod instead of two); the pod-readiness controller leaves such pods alone so the two never race
    for the same condition. Pods of any other owner (a native Deployment under the
    `KruisePodReadinessGate` feature gate) stay with the pod-readiness controller."""
    ref = controller_of(pod)
    return (
        ref is not None
        and ref.get("kind") in OWNERS_WRITING_READINESS
        and str(ref.get("apiVersion", "")).split("/")[0] == "apps.kruise.io"
    )


def with_initial_condition(pod: Mapping[str, Any], now: datetime) -> MutableObj | None:
    """The pod (for a status write) with `KruisePodReady=True` added when it has the gate and no
    condition yet — what the pod-readiness controller would write — or None. `Ready` is left to the
    kubelet, as that controller leaves it."""
    if not lacks_condition(pod):
        return None
    clone: MutableObj = copy.deepcopy(dict(pod))
    clone.setdefault("status", {}).setdefault("conditions", []).append(
        {"type": CONDITION_KRUISE_POD_READY, "status": "True", "lastTransitionTime": rfc3339(now)}
    )
    return clone


def fold_initial_condition(step: RefreshResult, pod: Mapping[str, Any], now: datetime) -> RefreshResult:
    """A gated pod still without `KruisePodReady` gets it in this refresh's status write (a new pod's
    first refresh writes `InPlaceUpdateReady` when it has that gate, or nothing else when it has not):
    the readiness-gate conditions in one patch. Object writes (a next container batch) and errors are
    left as they are; the condition then rides in a later refresh."""
    if step.pod is not None or step.error is not None:
        return step
    status_pod = with_initial_condition(step.status_pod or pod, now)
    return step if status_pod is None else replace(step, status_pod=status_pod)
