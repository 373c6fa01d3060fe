"""The snapshot a paged list's later pages are served from (sandbox/apiserver/listpages.py)."""

from __future__ import annotations

import pytest

from kruise.sandbox.apiserver.listpages import ListSnapshots, list_key

SCOPE = (("", "v1", "pods"), "", "", "")


def obj(ns: str, name: str) -> dict:
    return {"metadata": {"namespace": ns, "name": name}}


def ordered(*keys: tuple[str, str]) -> list[dict]:
    return sorted((obj(ns, name) for ns, name in keys), key=list_key)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_pages_follow_the_key_of_the_last_item_served():
    snapshots = ListSnapshots()
    items = ordered(("a", "p1"), ("a", "p2"), ("b", "p0"), ("b", "p3"), ("c", "p1"))
    snap = snapshots.keep(SCOPE, items)
    page, remaining = snapshots.page(snap, SCOPE, ("a", "p2"), 2)
    assert [list_key(o) for o in page] == [("b", "p0"), ("b", "p3")] and remaining == 1
    page, remaining = snapshots.page(snap, SCOPE, ("b", "p3"), 2)
    assert [list_key(o) for o in page] == [("c", "p1")] and remaining == 0


def test_a_limit_of_zero_serves_the_rest():
    snapshots = ListSnapshots()
    snap = snapshots.keep(SCOPE, ordered(("a", "x"), ("a", "y"), ("a", "z")))
    page, remaining = snapshots.page(snap, SCOPE, ("a", "x"), 0)
    assert [o["metadata"]["name"] for o in page] == ["y", "z"] and remaining == 0


def test_a_key_between_items_resumes_after_it():
    """The token's key need not be in the snapshot (a page served by a scan before it was kept)."""
    snapshots = ListSnapshots()
    snap = snapshots.keep(SCOPE, ordered(("a", "p1"), ("a", "p3")))
    page, _ = snapshots.page(snap, SCOPE, ("a", "p2"), 5)
    assert [o["metadata"]["name"] for o in page] == ["p3"]


def test_the_items_are_the_ones_kept_not_copies():
    snapshots = ListSnapshots()
    items = ordered(("a", "p1"), ("a", "p2"))
    snap = snapshots.keep(SCOPE, items)
    page, _ = snapshots.page(snap, SCOPE, ("a", "p1"), 1)
    assert page[0] is items[1]


def test_another_scope_or_an_unknown_id_gets_none():
    snapshots = ListSnapshots()
    snap = snapshots.keep(SCOPE, ordered(("a", "p1"), ("a", "p2")))
    other = (("", "v1", "pods"), "", "app=web", "")
    assert snapshots.page(snap, other, ("a", "p1"), 1) is None
    assert snapshots.page(snap + 1, SCOPE, ("a", "p1"), 1) is None
    assert snapshots.page("1", SCOPE, ("a", "p1"), 1) is None
    assert snapshots.page(None, SCOPE, ("a", "p1"), 1) is None


def test_dropped_snapshots_are_gone():
    snapshots = ListSnapshots()
    snap = snapshots.keep(SCOPE, ordered(("a", "p1")))
    snapshots.drop(snap)
    snapshots.drop(snap)
    assert snapshots.page(snap, SCOPE, ("", ""), 1) is None and len(snapshots) == 0


def test_the_least_recently_paged_is_evicted_beyond_capacity():
    snapshots = ListSnapshots(capacity=2)
    first = snapshots.keep(SCOPE, ordered(("a", "p1")))
    second = snapshots.keep(SCOPE, ordered(("a", "p1")))
    assert snapshots.page(first, SCOPE, ("", ""), 1) is not None  # first is now the more recent
    snapshots.keep(SCOPE, ordered(("a", "p1")))
    assert snapshots.page(second, SCOPE, ("", ""), 1) is None
    assert snapshots.page(first, SCOPE, ("", ""), 1) is not None and len(snapshots) == 2


def test_a_snapshot_unused_for_max_age_expires():
    clock = Clock()
    snapshots = ListSnapshots(max_age=300, clock=clock)
    used = snapshots.keep(SCOPE, ordered(("a", "p1")))
    idle = snapshots.keep(SCOPE, ordered(("a", "p1")))
    clock.now = 200
    assert snapshots.page(used, SCOPE, ("", ""), 1) is not None
    clock.now = 301
    assert snapshots.page(idle, SCOPE, ("", ""), 1) is None
    assert snapshots.page(used, SCOPE, ("", ""), 1) is not None


@pytest.mark.parametrize(("capacity", "max_age", "field"), [(0, 300, "capacity"), (16, 0, "max_age")])
def test_bad_limits_are_refused_naming_the_field(capacity, max_age, field):
    with pytest.raises(ValueError, match=field):
        ListSnapshots(capacity=capacity, max_age=max_age)
