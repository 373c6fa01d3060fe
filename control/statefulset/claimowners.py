"""Who should own a pod's PersistentVolumeClaims under ``persistentVolumeClaimRetentionPolicy``
(gate StatefulSetAutoDeletePVC), and whether a claim left by an earlier pod blocks a new one.

The garbage collector does the deleting; the controller only keeps the owner references right:

- ``whenDeleted: Delete`` — the claim is owned by the set (it goes with the set), except that a
  claim also marked for deletion on scale-in is handed to its pod once that pod is condemned;
- ``whenScaled: Delete`` — the claim of a condemned pod (ordinal outside the live range or
  reserved) is owned by that pod, so it goes with the pod; a live pod does not own its claim;
- ``Retain`` drops the respective reference. A policy that is not one of the four
  Retain/Delete combinations counts as Retain/Retain, as upstream.

A claim owned by a pod of the same name but another UID is *stale*: it belongs to a pod that is
gone and the collector is about to remove it, so the ordinal's next pod must wait rather than
mount it (upstream's ``PodClaimIsStale``; only when ``whenScaled`` is not Retain, since retained
claims are meant to be reused).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.objects import Obj, meta_of, owner_refs_of
from kruise.api.statefulset import PVC_DELETE, PVC_RETAIN

DEFAULT_SET_API_VERSION = "apps.kruise.io/v1beta1"


@dataclass(frozen=True)
class WantedOwners:
    """Whether the claim should reference the set and whether it should reference its pod."""

    set_ref: bool
    pod_ref: bool


def wanted_owners(policy: Mapping[str, Any], condemned: bool) -> WantedOwners:
    """The references a claim of a pod should carry under ``policy`` (the set's
    ``persistentVolumeClaimRetentionPolicy``); ``condemned``: the pod's ordinal is no longer live."""
    scaled, deleted = policy.get("whenScaled"), policy.get("whenDeleted")
    known = {PVC_RETAIN, PVC_DELETE}
    if scaled not in known or deleted not in known:
        return WantedOwners(set_ref=False, pod_ref=False)
    pod_ref = scaled == PVC_DELETE and condemned
    # a condemned pod's claim under Delete/Delete goes with the pod, not with the set
    set_ref = deleted == PVC_DELETE and not pod_ref
    return WantedOwners(set_ref=set_ref, pod_ref=pod_ref)


def _refs(obj: Obj) -> list[Mapping[str, Any]]:
    return list(owner_refs_of(obj))


def _uid(obj: Obj) -> str:
    return meta_of(obj).get("uid") or ""


def has_owner(claim: Obj, owner: Obj) -> bool:
    """The claim has a reference with the owner's UID (upstream compares UIDs only)."""
    uid = _uid(owner)
    return any((ref.get("uid") or "") == uid for ref in _refs(claim))


def set_owner_ref(sts: Obj) -> dict[str, Any]:
    """A plain (non-controller) reference to the set, as the claim of ``whenDeleted: Delete`` carries."""
    return {
        "apiVersion": sts.get("apiVersion") or DEFAULT_SET_API_VERSION,
        "kind": sts.get("kind") or "StatefulSet",
        "name": sts["metadata"]["name"],
        "uid": _uid(sts),
    }


def pod_owner_ref(pod: Obj) -> dict[str, Any]:
    """A plain reference to the pod, as the claim of a condemned pod under ``whenScaled: Delete`` carries."""
    return {
        "apiVersion": pod.get("apiVersion") or "v1",
        "kind": pod.get("kind") or "Pod",
        "name": meta_of(pod).get("name") or "",
        "uid": _uid(pod),
    }


def owners_match(claim: Obj, sts: Obj, pod: Obj, policy: Mapping[str, Any], condemned: bool) -> bool:
    """``claimOwnerMatchesSetAndPod``: the claim references the set and the pod exactly as the policy
    wants; references to anything else are ignored."""
    wanted = wanted_owners(policy, condemned)
    return has_owner(claim, sts) == wanted.set_ref and has_owner(claim, pod) == wanted.pod_ref


def realigned_owner_refs(
    claim: Obj, sts: Obj, pod: Obj, policy: Mapping[str, Any], condemned: bool
) -> list[dict[str, Any]] | None:
    """``updateClaimOwnerRefForSetAndPod``: the claim's new ``ownerReferences`` (other owners kept in
    order, a missing wanted reference appended, an unwanted one removed), or None when they already
    match and nothing is to be written."""
    if owners_match(claim, sts, pod, policy, condemned):
        return None
    wanted = wanted_owners(policy, condemned)
    refs = [dict(ref) for ref in _refs(claim)]
    for owner, want, build in ((sts, wanted.set_ref, set_owner_ref), (pod, wanted.pod_ref, pod_owner_ref)):
        uid = _uid(owner)
        present = any((ref.get("uid") or "") == uid for ref in refs)
        if want and not present:
            refs.append(build(owner))
        elif not want and present:
            refs = [ref for ref in refs if (ref.get("uid") or "") != uid]
    return refs


def claim_is_stale(claim: Obj, pod: Obj, policy: Mapping[str, Any]) -> bool:
    """``PodClaimIsStale`` for one claim of ``pod`` (a pod about to be created has no UID yet): under
    ``whenScaled`` other than Retain, a reference named like the pod with another UID marks a claim
    of a pod that is gone. An unset policy is Retain."""
    if (policy.get("whenScaled") or PVC_RETAIN) == PVC_RETAIN:
        return False
    name, uid = meta_of(pod).get("name") or "", _uid(pod)
    return any(ref.get("name") == name and (ref.get("uid") or "") != uid for ref in _refs(claim))
