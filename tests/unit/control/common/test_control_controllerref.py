"""ControllerRef claim rules (ClaimObject), the adopt/release patch bodies and the deletion recheck."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kruise.control.common.controllerref import (
    Claim,
    adopt_patch,
    adoption_refusal,
    claim,
    release_patch,
)

OWNER = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "DaemonSet",
    "metadata": {"name": "ds", "namespace": "ns", "uid": "ds-uid"},
}


def obj(controller: str | None = None, namespace: str = "ns", deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p", "namespace": namespace, "uid": "p-uid", "labels": {"app": "x"}}
    if controller is not None:
        meta["ownerReferences"] = [
            {"uid": "other", "kind": "Node", "name": "n"},  # a plain owner, not a controller
            {"uid": controller, "controller": True, "kind": "DaemonSet", "name": "x"},
        ]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


def deleting(owner: dict[str, Any]) -> dict[str, Any]:
    return {**owner, "metadata": {**owner["metadata"], "deletionTimestamp": "2026-01-01T00:00:00Z"}}


def yes(_: Any) -> bool:
    return True


def no(_: Any) -> bool:
    return False


def test_table():
    assert claim(OWNER, obj("someone-else"), yes) is Claim.IGNORE
    assert claim(OWNER, obj("ds-uid"), yes) is Claim.OURS
    assert claim(OWNER, obj("ds-uid"), no) is Claim.RELEASE
    assert claim(deleting(OWNER), obj("ds-uid"), no) is Claim.IGNORE
    assert claim(deleting(OWNER), obj("ds-uid"), yes) is Claim.OURS
    assert claim(OWNER, obj(), yes) is Claim.ADOPT
    assert claim(OWNER, obj(), no) is Claim.IGNORE
    assert claim(deleting(OWNER), obj(), yes) is Claim.IGNORE
    assert claim(OWNER, obj(deleting=True), yes) is Claim.IGNORE
    assert claim(OWNER, obj(namespace="elsewhere"), yes) is Claim.IGNORE


@given(
    st.sampled_from([None, "ds-uid", "other-uid"]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["ns", "elsewhere"]),
)
def test_never_adopts_what_it_may_not_and_never_releases_what_is_not_its_own(
    controller, matching, owner_deleting, obj_deleting, namespace
):
    owner = deleting(OWNER) if owner_deleting else OWNER
    decision = claim(owner, obj(controller, namespace, obj_deleting), lambda _: matching)
    if decision is Claim.ADOPT:
        assert controller is None and matching and not owner_deleting and not obj_deleting
        assert namespace == "ns"
    if decision is Claim.RELEASE:
        assert controller == "ds-uid" and not matching and not owner_deleting
    if controller == "other-uid":
        assert decision is Claim.IGNORE


def test_patch_bodies_carry_the_object_uid():
    assert adopt_patch(OWNER, obj()) == {
        "metadata": {
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "DaemonSet",
                    "name": "ds",
                    "uid": "ds-uid",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "uid": "p-uid",
        }
    }
    assert release_patch(OWNER, obj("ds-uid")) == {
        "metadata": {"ownerReferences": [{"$patch": "delete", "uid": "ds-uid"}], "uid": "p-uid"}
    }


def test_adoption_recheck():
    assert adoption_refusal(OWNER, OWNER) is None
    assert "not found" in (adoption_refusal(OWNER, None) or "")
    replaced = {**OWNER, "metadata": {**OWNER["metadata"], "uid": "new"}}
    assert adoption_refusal(OWNER, replaced) == "original ns/ds is gone: got uid new, wanted ds-uid"
    assert "has just been deleted" in (adoption_refusal(OWNER, deleting(OWNER)) or "")
