"""Owner references of a pod's claims under persistentVolumeClaimRetentionPolicy, and stale claims
(upstream's TestClaimOwnerMatchesSetAndPod / TestUpdateClaimOwnerRefForSetAndPod / PodClaimIsStale)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.statefulset.claimowners import (
    WantedOwners,
    claim_is_stale,
    has_owner,
    owners_match,
    realigned_owner_refs,
    wanted_owners,
)

SET = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": "stateful-set", "namespace": "default", "uid": "ss-456"},
}
POD = {"metadata": {"name": "stateful-set-2", "namespace": "default", "uid": "pod-123"}}
OTHERS = [
    {"apiVersion": "v1", "kind": "Pod", "name": "rand1", "uid": "rand1-abc"},
    {"apiVersion": "v1", "kind": "ConfigMap", "name": "rand2", "uid": "rand2-def"},
]
SET_REF = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "name": "stateful-set",
    "uid": "ss-456",
}
POD_REF = {"apiVersion": "v1", "kind": "Pod", "name": "stateful-set-2", "uid": "pod-123"}

R, D = "Retain", "Delete"
# (whenScaled, whenDeleted, condemned) -> (set ref wanted, pod ref wanted)
TABLE = [
    (R, R, False, False, False),
    (R, R, True, False, False),
    (R, D, False, True, False),
    (R, D, True, True, False),
    (D, R, False, False, False),
    (D, R, True, False, True),
    (D, D, False, True, False),
    (D, D, True, False, True),
]


EXISTING = list(itertools.product([False, True], repeat=3))
"""(set ref, pod ref, unrelated refs) already on the claim."""


def claim(*refs):
    body = {"metadata": {"name": "data-stateful-set-2", "namespace": "default"}}
    if refs:
        body["metadata"]["ownerReferences"] = [dict(r) for r in refs]
    return body


def policy(scaled, deleted):
    return {"whenScaled": scaled, "whenDeleted": deleted}


def existing_refs(with_set, with_pod, with_others):
    refs = list(OTHERS) if with_others else []
    if with_pod:
        refs.append(POD_REF)
    if with_set:
        refs.append(SET_REF)
    return refs


@pytest.mark.parametrize(("scaled", "deleted", "condemned", "set_ref", "pod_ref"), TABLE)
def test_wanted_owners_follow_the_policy_and_condemnation(scaled, deleted, condemned, set_ref, pod_ref):
    assert wanted_owners(policy(scaled, deleted), condemned) == WantedOwners(set_ref, pod_ref)


@pytest.mark.parametrize(("scaled", "deleted", "condemned", "set_ref", "pod_ref"), TABLE)
@pytest.mark.parametrize(("with_set", "with_pod", "with_others"), EXISTING)
def test_claim_matches_only_with_exactly_the_wanted_refs(
    scaled, deleted, condemned, set_ref, pod_ref, with_set, with_pod, with_others
):
    c = claim(*existing_refs(with_set, with_pod, with_others))
    expected = with_set == set_ref and with_pod == pod_ref
    assert owners_match(c, SET, POD, policy(scaled, deleted), condemned) is expected


@pytest.mark.parametrize(("scaled", "deleted", "condemned", "set_ref", "pod_ref"), TABLE)
@pytest.mark.parametrize(("with_set", "with_pod", "with_others"), EXISTING)
def test_realigned_refs_carry_exactly_the_wanted_owners_and_keep_the_rest(
    scaled, deleted, condemned, set_ref, pod_ref, with_set, with_pod, with_others
):
    c = claim(*existing_refs(with_set, with_pod, with_others))
    refs = realigned_owner_refs(c, SET, POD, policy(scaled, deleted), condemned)
    if with_set == set_ref and with_pod == pod_ref:
        assert refs is None  # nothing to write
        return
    assert refs is not None
    updated = claim(*refs)
    assert has_owner(updated, SET) is set_ref
    assert has_owner(updated, POD) is pod_ref
    assert [r for r in refs if r["uid"] not in ("ss-456", "pod-123")] == (OTHERS if with_others else [])
    assert owners_match(updated, SET, POD, policy(scaled, deleted), condemned)
    # a second pass finds nothing left to change
    assert realigned_owner_refs(updated, SET, POD, policy(scaled, deleted), condemned) is None


def test_added_refs_are_plain_references_to_the_set_and_the_pod():
    assert realigned_owner_refs(claim(), SET, POD, policy(D, D), False) == [SET_REF]
    assert realigned_owner_refs(claim(), SET, POD, policy(D, D), True) == [POD_REF]
    typeless_set = {"metadata": SET["metadata"]}
    assert realigned_owner_refs(claim(), typeless_set, POD, policy(R, D), False) == [SET_REF]


def test_removal_does_not_touch_the_input_claim():
    c = claim(SET_REF, POD_REF)
    assert realigned_owner_refs(c, SET, POD, policy(R, R), False) == []
    assert c["metadata"]["ownerReferences"] == [SET_REF, POD_REF]


@pytest.mark.parametrize(
    "bad",
    [
        {},
        {"whenScaled": "Delete"},
        {"whenDeleted": "Delete"},
        {"whenScaled": "Keep", "whenDeleted": "Delete"},
    ],
)
def test_an_unknown_or_partial_policy_counts_as_retain_retain(bad):
    assert wanted_owners(bad, True) == WantedOwners(False, False)
    assert realigned_owner_refs(claim(SET_REF, POD_REF), SET, POD, bad, True) == []


@given(
    scaled=st.sampled_from([R, D]),
    deleted=st.sampled_from([R, D]),
    condemned=st.booleans(),
    refs=st.lists(st.sampled_from([SET_REF, POD_REF, *OTHERS]), max_size=6),
)
def test_realignment_is_idempotent_for_any_existing_refs(scaled, deleted, condemned, refs):
    p = policy(scaled, deleted)
    first = realigned_owner_refs(claim(*refs), SET, POD, p, condemned)
    aligned = claim(*(refs if first is None else first))
    assert owners_match(aligned, SET, POD, p, condemned)
    assert realigned_owner_refs(aligned, SET, POD, p, condemned) is None


OLD_POD_REF = {"apiVersion": "v1", "kind": "Pod", "name": "stateful-set-2", "uid": "pod-old"}


@pytest.mark.parametrize(
    ("scaled", "refs", "pod_uid", "stale"),
    [
        (D, [OLD_POD_REF], "pod-123", True),  # left by a previous pod of this ordinal
        (D, [OLD_POD_REF], "", True),  # the pod to be created has no UID yet
        (D, [POD_REF], "pod-123", False),  # the current pod's own claim
        (D, [SET_REF, *OTHERS], "", False),  # no pod of this name owns it
        (D, [], "", False),
        (R, [OLD_POD_REF], "", False),  # retained claims are meant to be reused
    ],
)
def test_a_claim_owned_by_another_pod_of_the_same_name_is_stale_unless_scale_in_retains(
    scaled, refs, pod_uid, stale
):
    pod = {"metadata": {"name": "stateful-set-2", "uid": pod_uid}}
    assert claim_is_stale(claim(*refs), pod, policy(scaled, R)) is stale


def test_an_unset_policy_never_makes_a_claim_stale():
    assert not claim_is_stale(claim(OLD_POD_REF), POD, {})
