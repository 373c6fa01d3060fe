"""Typed actions of one Advanced StatefulSet reconcile pass; the controller executes them in
order with thin writers (create, delete, patch) and stops at the first error.

Every action names the pod it is about so a writer needs nothing else; ``reason`` strings are
for logs and events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.keys import LIFECYCLE_STATE_PREPARING_DELETE
from kruise.api.objects import Obj, section
from kruise.control.common import lifecycle
from kruise.control.statefulset.claims import ClaimResize


@dataclass(frozen=True)
class CreatePod:
    """Create the PVCs of ``ordinal`` that are missing, then ``pod`` (at ``revision``)."""

    ordinal: int
    revision: str
    pod: dict[str, Any]


@dataclass(frozen=True)
class DeletePod:
    """Delete the pod. ``reason``: ``failed`` (recreated under the same name next pass),
    ``condemned`` (scale-in / reserved ordinal), ``specified-delete``."""

    pod: Obj
    reason: str


@dataclass(frozen=True)
class PrepareDelete:
    """A preDelete hook holds the pod: move it to lifecycle state PreparingDelete instead of
    deleting it (``mark_not_ready`` from the hook flips KruisePodReady False)."""

    pod: Obj
    reason: str
    mark_not_ready: bool


@dataclass(frozen=True)
class FixIdentity:
    """Merge-patch the identity labels back onto a live pod."""

    pod: Obj
    patch: dict[str, Any]


@dataclass(frozen=True)
class EnsureClaims:
    """The pod is Pending: create any of its PVCs that do not exist (``ordinal``'s claims)."""

    pod: Obj
    ordinal: int


@dataclass(frozen=True)
class AlignClaimOwners:
    """Bring the owner references of the pod's existing claims in line with the retention policy
    (gate StatefulSetAutoDeletePVC; see ``claimowners``). ``condemned``: the pod's ordinal left the
    live range, so under ``whenScaled: Delete`` its claims go with it. The writer compares with
    the cached claims and writes only those that differ."""

    pod: Obj
    condemned: bool


@dataclass(frozen=True)
class UpdatePod:
    """Bring the pod to the update revision: in place if the policy and the revision diff allow
    (see ``update.update_method``), otherwise by deletion (recreated next pass)."""

    pod: Obj
    revision: str


@dataclass(frozen=True)
class ResizeClaims:
    """``TryPatchPVC`` before the pod's update (``volumeClaimUpdateStrategy: OnPodRollingUpdate``):
    grow each of ``resizes`` to its template's size and mark it ``apps.kruise.io/owned-by-asts``;
    then fail on ``conflict`` (a claim that differs from its template in more than size), if any.
    The pod is updated on a later pass, once the claims' expansion completed."""

    pod: Obj
    resizes: tuple[ClaimResize, ...]
    conflict: str | None = None


Action = (
    CreatePod
    | DeletePod
    | PrepareDelete
    | FixIdentity
    | EnsureClaims
    | AlignClaimOwners
    | UpdatePod
    | ResizeClaims
)


def deletion(sts: Mapping[str, Any], pod: Obj, reason: str) -> DeletePod | PrepareDelete | None:
    """``deletePod``: a pod held by the preDelete hook goes to PreparingDelete first (None when it
    is already there: nothing to write), any other pod is deleted."""
    hook = section(sts, "spec", "lifecycle").get("preDelete")
    if lifecycle.is_hooked(hook, pod):
        if lifecycle.pod_state(pod) == LIFECYCLE_STATE_PREPARING_DELETE:
            return None
        return PrepareDelete(pod, reason, bool((hook or {}).get("markPodNotReady")))
    return DeletePod(pod, reason)
