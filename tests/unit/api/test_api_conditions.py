"""One condition writer for every kind's upstream rule."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.api.conditions import (
    condition_of,
    find_condition,
    get_condition,
    is_true,
    remove_condition,
    set_condition,
)

TYPES = st.sampled_from(["Ready", "Failed", "Scaled"])
CONDITIONS = st.lists(
    st.fixed_dictionaries(
        {
            "type": TYPES,
            "status": st.sampled_from(["True", "False"]),
            "reason": st.sampled_from(["", "A", "B"]),
            "lastTransitionTime": st.sampled_from(["t0", "t1"]),
        }
    ),
    max_size=4,
    unique_by=lambda c: c["type"],
)


def test_find_get_and_of() -> None:
    status = {"conditions": [{"type": "Ready", "status": "True"}]}
    assert find_condition(status["conditions"], "Ready") == {"type": "Ready", "status": "True"}
    assert get_condition(status, "Ready") is status["conditions"][0]
    assert condition_of({"status": status}, "Ready") is status["conditions"][0]
    assert get_condition(None, "Ready") is None and condition_of({}, "Ready") is None
    assert is_true(get_condition(status, "Ready")) and not is_true(None)


@given(CONDITIONS, TYPES, st.sampled_from(["True", "False"]), st.booleans(), st.booleans())
def test_written_once_per_type_and_input_untouched(
    conditions: list[dict[str, Any]], type_: str, status: str, keep: bool, to_end: bool
) -> None:
    before = [dict(c) for c in conditions]
    new = {"type": type_, "status": status, "reason": "R", "lastTransitionTime": "now"}
    result = set_condition(
        conditions, new, same=("status", "reason"), keep_transition_time=keep, to_end=to_end
    )
    assert conditions == before
    assert [c["type"] for c in result].count(type_) == 1
    written = find_condition(result, type_)
    assert written is not None and written["status"] == status and written["reason"] == "R"
    old = find_condition(before, type_)
    if keep and old is not None and old["status"] == status:
        assert written["lastTransitionTime"] == old["lastTransitionTime"]
    elif old is None or old["status"] != status:
        assert written["lastTransitionTime"] == "now"
    assert [c for c in result if c["type"] != type_] == [c for c in before if c["type"] != type_]


def test_the_same_condition_stays_with_its_times() -> None:
    old = {"type": "Ready", "status": "True", "reason": "A", "lastTransitionTime": "t0"}
    new = {"type": "Ready", "status": "True", "reason": "B", "lastTransitionTime": "now"}
    assert set_condition([old], new) == [old]
    assert set_condition([old], new, same=("status", "reason")) == [{**new}]
    assert set_condition([old], new, same=("status", "reason"), keep_transition_time=True) == [
        {**new, "lastTransitionTime": "t0"}
    ]
    assert set_condition([old], {**new, "reason": "A"}, same=None) == [{**new, "reason": "A"}]


def test_absent_and_empty_strings_are_the_same_as_in_go() -> None:
    old = {"type": "Ready", "status": "True"}
    assert set_condition(
        [old], {"type": "Ready", "status": "True", "message": ""}, same=("status", "message")
    ) == [old]


def test_place_or_end() -> None:
    a, b = {"type": "A", "status": "True"}, {"type": "B", "status": "True"}
    new = {"type": "A", "status": "False"}
    assert set_condition([a, b], new) == [new, b]
    assert set_condition([a, b], new, to_end=True) == [b, new]
    assert set_condition(None, new) == [new]
    assert remove_condition([a, b], "A") == [b] and remove_condition(None, "A") == []
