"""Who controls an object, and the reference a controller stamps on what it creates."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kruise.api.controllerref import (
    controlled_by,
    controller_of,
    controller_uid,
    new_controller_ref,
    with_controller,
)

REFS = st.lists(
    st.fixed_dictionaries({"uid": st.sampled_from(["a", "b", "c"]), "controller": st.booleans()}), max_size=4
)


@given(REFS, st.sampled_from(["a", "b", "c"]))
def test_the_first_controller_reference_decides(refs: list[dict[str, object]], uid: str) -> None:
    obj = {"metadata": {"ownerReferences": refs}}
    controllers = [r for r in refs if r["controller"]]
    assert controller_of(obj) == (controllers[0] if controllers else None)
    assert controlled_by(obj, uid) == bool(controllers and controllers[0]["uid"] == uid)
    assert controller_uid(obj) == (controllers[0]["uid"] if controllers else None)


def test_no_owner_references() -> None:
    assert controller_of({}) is None and not controlled_by({"metadata": None}, "a")


def test_new_controller_ref_prefers_the_owners_own_type() -> None:
    owner = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "c", "uid": "u"},
    }
    assert new_controller_ref(owner, api_version="x/v1", kind="X") == {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "name": "c",
        "uid": "u",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    bare = new_controller_ref({"metadata": {"name": "c"}}, api_version="x/v1", kind="X")
    assert (bare["apiVersion"], bare["kind"], bare["uid"]) == ("x/v1", "X", "")


def test_a_reference_may_leave_the_owners_deletion_unblocked() -> None:
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "uid": "u1"}}
    assert new_controller_ref(owner, block_owner_deletion=False) == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": "web",
        "uid": "u1",
        "controller": True,
    }
    assert new_controller_ref(owner)["blockOwnerDeletion"] is True


@given(REFS, st.sampled_from(["a", "b", "d"]))
def test_with_controller_leaves_one_controller_last(refs: list[dict[str, object]], uid: str) -> None:
    own = {"uid": uid, "controller": True, "blockOwnerDeletion": True}
    out = with_controller(refs, own)
    assert out[-1] == own
    assert [r for r in out if r.get("controller")] == [own]
    assert [r for r in out if r["uid"] == uid] == [own]
    assert out[:-1] == [r for r in refs if r["uid"] != uid and not r["controller"]]
