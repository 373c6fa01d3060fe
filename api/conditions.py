"""Status conditions: finding one by type and writing one, as every kind's ``SetXCondition`` does.

Upstream writes conditions with a small helper per kind, and the helpers differ in three choices:
which fields make a new condition "the same" as the one present (then the present one stays,
times and all), whether a condition that keeps its status keeps its ``lastTransitionTime``, and
whether a replaced condition keeps its place or moves to the end of the list. ``set_condition``
takes those three choices as arguments, so each kind states its upstream rule instead of
re-implementing the loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kruise.api.objects import Obj, conditions_of, items

Condition = Mapping[str, Any]


def find_condition(conditions: Iterable[Condition] | None, type_: str) -> Condition | None:
    """The first condition of ``type_`` in a list of conditions."""
    return next((c for c in conditions or [] if c.get("type") == type_), None)


def get_condition(status: Obj | None, type_: str) -> Condition | None:
    """The condition of ``type_`` in a status (anything with a ``conditions`` list)."""
    return find_condition(items(status, "conditions"), type_)


def condition_of(obj: Obj | None, type_: str) -> Condition | None:
    """The condition of ``type_`` in an object's ``status.conditions``."""
    return find_condition(conditions_of(obj), type_)


def is_true(condition: Condition | None) -> bool:
    return condition is not None and condition.get("status") == "True"


def _same(old: Condition, new: Condition, fields: Sequence[str]) -> bool:
    """Go compares string fields, where absent and empty are one value."""
    return all((old.get(f) or "") == (new.get(f) or "") for f in fields)


def set_condition(
    conditions: Iterable[Condition] | None,
    new: dict[str, Any],
    *,
    same: Sequence[str] | None = ("status",),
    keep_transition_time: bool = False,
    to_end: bool = False,
) -> list[Any]:
    """The conditions with ``new`` written in; the input is left as it was.

    - ``same``: when the present condition of that type agrees with ``new`` on these fields it stays
      as it is; ``None`` always writes ``new``.
    - ``keep_transition_time``: a written condition whose status did not change keeps the present
      ``lastTransitionTime`` (when the present one has one).
    - ``to_end``: a written condition goes to the end of the list instead of taking the old one's place.
    """
    result = list(conditions or [])
    for i, old in enumerate(result):
        if old.get("type") != new["type"]:
            continue
        if same is not None and _same(old, new, same):
            return result
        if keep_transition_time and old.get("status") == new.get("status") and old.get("lastTransitionTime"):
            new = {**new, "lastTransitionTime": old["lastTransitionTime"]}
        if to_end:
            del result[i]
            result.append(new)
        else:
            result[i] = new
        return result
    result.append(new)
    return result


def remove_condition(conditions: Iterable[Condition] | None, type_: str) -> list[Any]:
    """The conditions without any of ``type_``."""
    return [c for c in conditions or [] if c.get("type") != type_]
