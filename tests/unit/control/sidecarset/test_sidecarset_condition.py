"""The SidecarSetUpgradable pod condition: one `{sidecarSet: bool}` record shared by all SidecarSets."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from kruise.control.sidecarset.condition import with_upgradable
from tests.kit.pods import pod

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = datetime(2026, 1, 2, tzinfo=UTC)


def ready_pod(*conditions):
    """A ready pod with `conditions` after its Ready one."""
    return pod(namespace=None, ready=True, conditions=list(conditions))


def upgradable(p):
    return next(c for c in p["status"]["conditions"] if c["type"] == "SidecarSetUpgradable")


def test_first_not_upgradable_sidecarset_adds_a_false_condition():
    out = with_upgradable(ready_pod(), "a", False, T0)
    assert upgradable(out) == {
        "type": "SidecarSetUpgradable",
        "status": "False",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "reason": "UpdateImmutableField",
        "message": '{"a":false}',
    }
    assert out["status"]["conditions"][0] == {"type": "Ready", "status": "True"}  # others untouched
    assert with_upgradable(out, "a", False, T1) is None  # nothing to write again


def test_true_only_while_every_sidecarset_is_upgradable():
    blocked = with_upgradable(with_upgradable(ready_pod(), "a", False, T0), "b", True, T1)
    assert upgradable(blocked)["status"] == "False"
    assert json.loads(upgradable(blocked)["message"]) == {"a": False, "b": True}
    assert upgradable(blocked)["lastTransitionTime"] == "2026-01-01T00:00:00Z"  # status did not flip
    cleared = with_upgradable(blocked, "a", True, T1)
    assert upgradable(cleared)["status"] == "True"
    assert upgradable(cleared)["reason"] == "AllSidecarsetUpgradable"
    assert upgradable(cleared)["lastTransitionTime"] == "2026-01-02T00:00:00Z"


def test_a_foreign_message_starts_a_new_record():
    out = with_upgradable(
        ready_pod({"type": "SidecarSetUpgradable", "status": "True", "message": "hello"}), "a", True, T0
    )
    assert upgradable(out)["message"] == '{"a":true}'


@given(st.lists(st.tuples(st.sampled_from("abc"), st.booleans()), min_size=1, max_size=8))
def test_status_is_the_conjunction_of_the_latest_entries(writes):
    p = ready_pod()
    latest: dict[str, bool] = {}
    for name, value in writes:
        p = with_upgradable(p, name, value, T0) or p
        latest[name] = value
    condition = upgradable(p)
    assert json.loads(condition["message"]) == latest
    assert condition["status"] == ("True" if all(latest.values()) else "False")
    assert [c["type"] for c in p["status"]["conditions"]].count("SidecarSetUpgradable") == 1
