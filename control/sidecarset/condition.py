"""The `SidecarSetUpgradable` pod condition (pure): whether each SidecarSet that covers a pod can still
update its sidecars in place.

One condition serves every SidecarSet of the pod: its message is a JSON object `{sidecarSetName: bool}`
and it is True (reason AllSidecarsetUpgradable) only while every entry is. A SidecarSet whose change goes
beyond images records `false` (reason UpdateImmutableField) — the pod keeps its old sidecars until its
owner recreates it; a successful in-place update records `true`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kruise.api.keys import CONDITION_SIDECARSET_UPGRADABLE
from kruise.api.objects import conditions_of
from kruise.api.timestamps import rfc3339

REASON_ALL_UPGRADABLE = "AllSidecarsetUpgradable"
REASON_IMMUTABLE_FIELD = "UpdateImmutableField"


def _message_entries(condition: Mapping[str, Any] | None) -> dict[str, Any]:
    """The condition's `{sidecarSet: upgradable}` record; a message that is not a JSON object (someone
    else wrote it) starts a new record rather than blocking the controller."""
    raw = (condition or {}).get("message")
    try:
        parsed = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def with_upgradable(
    pod: Mapping[str, Any], sidecarset_name: str, upgradable: bool, now: datetime
) -> dict[str, Any] | None:
    """The pod with `sidecarset_name`'s entry set in its SidecarSetUpgradable condition, or None when the
    condition would not change. lastTransitionTime moves only when the status flips (kube's
    `UpdatePodCondition`)."""
    conditions = list(conditions_of(pod))
    types = [c.get("type") for c in conditions]
    index = types.index(CONDITION_SIDECARSET_UPGRADABLE) if CONDITION_SIDECARSET_UPGRADABLE in types else None
    old = conditions[index] if index is not None else None
    entries = _message_entries(old)
    entries[sidecarset_name] = upgradable
    status = "True" if all(v is not False for v in entries.values()) else "False"
    condition = {
        "type": CONDITION_SIDECARSET_UPGRADABLE,
        "status": status,
        "lastTransitionTime": rfc3339(now),
        "reason": REASON_ALL_UPGRADABLE if status == "True" else REASON_IMMUTABLE_FIELD,
        "message": json.dumps(dict(sorted(entries.items())), separators=(",", ":")),
    }
    if old is not None and old.get("status") == status and old.get("lastTransitionTime"):
        condition["lastTransitionTime"] = old["lastTransitionTime"]
    if old is not None and all(old.get(k) == v for k, v in condition.items()):
        return None
    if index is None:
        conditions.append(condition)
    else:
        conditions[index] = {**old, **condition}
    clone: dict[str, Any] = copy.deepcopy(dict(pod))
    clone.setdefault("status", {})["conditions"] = conditions
    return clone
