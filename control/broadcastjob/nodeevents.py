"""Which node events wake which BroadcastJobs (upstream ``enqueueBroadcastJobForNode``).

A new node wakes every job whose template would run there. An updated node wakes the jobs for
which the node's fitness changed — but only if the update is more than a heartbeat: the update is
ignored when the set of True node conditions is unchanged and nothing else but the
resourceVersion and the conditions' timestamps differs. Deleted nodes wake nothing (a pod on a
vanished node is left to the pod garbage collector, as upstream does).
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.api.objects import Obj, conditions_of, meta_of, spec_of, status_of
from kruise.control.broadcastjob.fitness import unfit_reason


def _true_conditions(node: Obj) -> set[str]:
    conditions = conditions_of(node)
    return {c.get("type") or "" for c in conditions if c.get("status") == "True"}


def _without_heartbeat(node: Obj) -> dict[str, Any]:
    body = copy.deepcopy(dict(node))
    meta = dict(meta_of(body))
    meta.pop("resourceVersion", None)
    body["metadata"] = meta
    status = dict(status_of(body))
    status.pop("conditions", None)
    body["status"] = status
    return body


def is_heartbeat(old: Obj, new: Obj) -> bool:
    """upstream ``shouldIgnoreNodeUpdate``."""
    if _true_conditions(old) != _true_conditions(new):
        return False
    return _without_heartbeat(old) == _without_heartbeat(new)


def _fits(template: Obj, node: Obj, as_name: str) -> bool:
    spec = copy.deepcopy(dict(spec_of(template)))
    spec["nodeName"] = as_name
    return unfit_reason(spec, node) is None


def wakes_on_add(template: Obj, node: Obj) -> bool:
    """A job wakes for a new node its pod would fit."""
    return _fits(template, node, meta_of(node).get("name") or "")


def wakes_on_update(template: Obj, old: Obj, new: Obj) -> bool:
    """A job wakes when the update is not a heartbeat and the node's fitness for its pod flipped
    (upstream judges both versions with a mock pod named for the old node)."""
    if is_heartbeat(old, new):
        return False
    name = meta_of(old).get("name") or ""
    return _fits(template, old, name) != _fits(template, new, name)
