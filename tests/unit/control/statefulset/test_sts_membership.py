"""Which pods an Advanced StatefulSet claims: upstream's ClaimPods with the ``isMemberOf`` filter
(selector matches and the parent in the pod's name ``<parent>-<ordinal>`` is the set), fed to the
ControllerRef rules (adopt an orphan, keep an owned pod, release one that stops qualifying)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.common.controllerref import Claim, adoption_refusal, claim
from kruise.control.statefulset.identity import is_member, member_selection, parent_and_ordinal

INT32_MAX = 2**31 - 1

# DNS-label-like set names: may themselves contain dashes and digit runs ("web-1", "a-2-b")
set_names = st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
ordinals = st.integers(min_value=0, max_value=INT32_MAX)


def _pod(name: str, *, labels: dict[str, str] | None = None, owner_uid: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}", "labels": labels or {}}
    if owner_uid is not None:
        meta["ownerReferences"] = [{"kind": "StatefulSet", "name": "x", "uid": owner_uid, "controller": True}]
    return {"metadata": meta}


def _set(name: str, *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": "set-uid"}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "metadata": meta}


def _app_selected(pod: Any) -> bool:
    return pod["metadata"].get("labels", {}).get("app") == "web"


@given(set_names, ordinals)
def test_a_pod_named_set_dash_ordinal_is_a_member_of_that_set(set_name, ordinal):
    pod = _pod(f"{set_name}-{ordinal}")
    assert parent_and_ordinal(pod["metadata"]["name"]) == (set_name, ordinal)
    assert is_member(set_name, pod)


@given(set_names, set_names, ordinals)
def test_a_pod_is_a_member_of_exactly_the_set_its_name_starts_with(owner, other, ordinal):
    """The parse is greedy up to the last dash, so "web-1-2" belongs to "web-1", never to "web"."""
    pod = _pod(f"{owner}-{ordinal}")
    assert is_member(other, pod) == (other == owner)


@given(set_names, st.integers(min_value=INT32_MAX + 1, max_value=10**40))
def test_an_ordinal_beyond_int32_keeps_the_parent(set_name, ordinal):
    """Upstream's ParseInt(…, 32) fails and leaves ordinal -1, but the parent (and membership) stays."""
    pod = _pod(f"{set_name}-{ordinal}")
    assert parent_and_ordinal(pod["metadata"]["name"]) == (set_name, -1)
    assert is_member(set_name, pod)


def test_thousands_of_digits_do_not_break_the_parse():
    assert parent_and_ordinal("web-" + "7" * 5000) == ("web", -1)
    assert parent_and_ordinal("web-" + "0" * 5000 + "3") == ("web", 3)


@given(set_names, st.from_regex(r"[a-z0-9-]{0,12}[a-z-]", fullmatch=True))
def test_a_name_without_a_numeric_suffix_is_nobodys_member(set_name, tail):
    pod = _pod(f"{set_name}{tail}")
    assert parent_and_ordinal(pod["metadata"]["name"]) == ("", -1)
    assert not is_member(set_name, pod)


@pytest.mark.parametrize(
    ("name", "labels", "owner_uid", "deleting", "expected"),
    [
        # orphans
        ("web-0", {"app": "web"}, None, False, Claim.ADOPT),
        ("web-7", {"app": "web"}, None, False, Claim.ADOPT),
        ("web-0", {"app": "other"}, None, False, Claim.IGNORE),
        ("webx-0", {"app": "web"}, None, False, Claim.IGNORE),  # another set's name
        ("web-1-0", {"app": "web"}, None, False, Claim.IGNORE),  # set "web-1"'s pod
        ("web", {"app": "web"}, None, False, Claim.IGNORE),  # no ordinal
        ("web-0", {"app": "web"}, None, True, Claim.IGNORE),  # no adoption while the set is deleted
        # owned by this set
        ("web-0", {"app": "web"}, "set-uid", False, Claim.OURS),
        ("web-0", {"app": "other"}, "set-uid", False, Claim.RELEASE),  # relabelled
        ("webx-0", {"app": "web"}, "set-uid", False, Claim.RELEASE),  # not a member by name
        ("web-0", {"app": "other"}, "set-uid", True, Claim.IGNORE),  # deleting: nothing released
        ("web-0", {"app": "web"}, "set-uid", True, Claim.OURS),
        # owned by another controller
        ("web-0", {"app": "web"}, "someone", False, Claim.IGNORE),
    ],
)
def test_claim_decisions_with_the_membership_filter(name, labels, owner_uid, deleting, expected):
    owner = _set("web", deleting=deleting)
    pod = _pod(name, labels=labels, owner_uid=owner_uid)
    assert claim(owner, pod, member_selection("web", _app_selected)) is expected


@given(set_names, set_names, ordinals, st.booleans(), st.sampled_from([None, "set-uid", "someone"]))
def test_claim_never_takes_a_pod_of_another_sets_name(owner_name, pod_set, ordinal, selected, owner_uid):
    """Whatever its labels or owner, a pod named after another set is never OURS nor adopted."""
    owner = _set(owner_name)
    pod = _pod(f"{pod_set}-{ordinal}", labels={"app": "web"} if selected else {}, owner_uid=owner_uid)
    decision = claim(owner, pod, member_selection(owner_name, _app_selected))
    if pod_set != owner_name or not selected:
        assert decision in (Claim.IGNORE, Claim.RELEASE)
        assert decision is not Claim.RELEASE or owner_uid == "set-uid"
    elif owner_uid is None:
        assert decision is Claim.ADOPT
    elif owner_uid == "set-uid":
        assert decision is Claim.OURS
    else:
        assert decision is Claim.IGNORE


def test_revision_adoption_rechecks_only_the_uid():
    """adoptOrphanRevisions reads the set afresh and compares uids; unlike ClaimPods it does not
    look at the deletionTimestamp (upstream adopts revisions of a set being deleted)."""
    owner = _set("web")
    deleting = _set("web", deleting=True)
    replaced = {"metadata": {**owner["metadata"], "uid": "new-uid"}}
    assert adoption_refusal(owner, deleting, check_deletion=False) is None
    assert adoption_refusal(owner, deleting) is not None
    refusal = adoption_refusal(owner, replaced, check_deletion=False)
    assert refusal is not None and "new-uid" in refusal
