"""How a pod's PersistentVolumeClaims compare with the set's ``volumeClaimTemplates``, and the
``status.volumeClaims`` summary built from that comparison.

A claim is *compatible* with its template when nothing but the size differs (storage class when
both name one, access modes in order) and its requested storage is at least the template's; it is
*ready* when the volume's reported capacity covers what the claim requests. A claim smaller than
its template *needs expansion*; the claim's expansion is *complete* once it is ready, or once the
volume is resized and only the file system waits for the pod (``FileSystemResizePending``).
Upstream counts these per template over the set's live replicas; a missing claim (not created
yet, or retained from a scaled-in ordinal) and a claim being deleted are not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from kruise.api.conditions import condition_of, is_true
from kruise.api.goquantity import Quantity
from kruise.api.objects import Obj, meta_of, section, spec_of, status_of
from kruise.control.statefulset.identity import claim_name, ordinal_of

ClaimLookup = Callable[[str], Obj | None]
"""The set's claim of that name in the set's namespace (from the informer), or None."""

CONDITION_FILE_SYSTEM_RESIZE_PENDING = "FileSystemResizePending"
ANNOTATION_PVC_OWNED_BY_ASTS = "apps.kruise.io/owned-by-asts"
"""Written on a claim the controller resizes: the name of the set that owns it."""


def _storage(quantities: Mapping[str, Any] | None) -> Decimal | None:
    value = (quantities or {}).get("storage")
    return None if value is None else Quantity.of(value).value


def _requested(claim: Obj) -> Decimal | None:
    return _storage(section(claim, "spec", "resources").get("requests"))


def _capacity(claim: Obj) -> Decimal | None:
    return _storage(status_of(claim).get("capacity"))


def compatible_without_size(claim: Obj, template: Obj) -> bool:
    """Storage class (only when both name one: a claim defaulted by the cluster's default class
    still matches a template that names none) and access modes (same list, same order)."""
    claim_spec, template_spec = claim.get("spec") or {}, template.get("spec") or {}
    claim_class, template_class = claim_spec.get("storageClassName"), template_spec.get("storageClassName")
    if claim_class is not None and template_class is not None and claim_class != template_class:
        return False
    return list(claim_spec.get("accessModes") or []) == list(template_spec.get("accessModes") or [])


def compatible_and_ready(claim: Obj, template: Obj) -> tuple[bool, bool]:
    """(requested storage >= the template's, capacity >= requested storage); both False when
    the claim differs from the template in anything but size."""
    if not compatible_without_size(claim, template):
        return False, False
    requested, wanted, capacity = _requested(claim), _requested(template), _capacity(claim)
    compatible = requested is not None and wanted is not None and requested >= wanted
    ready = capacity is not None and requested is not None and capacity >= requested
    return compatible, ready


def needs_expand(claim: Obj, template: Obj) -> bool:
    """The claim requests less storage than its template."""
    requested, wanted = _requested(claim), _requested(template)
    return requested is not None and wanted is not None and requested < wanted


def expansion_completed(claim: Obj, template: Obj) -> bool:
    """Compatible and ready, or compatible with only the file system resize left to the node."""
    compatible, ready = compatible_and_ready(claim, template)
    if not compatible:
        return False
    return ready or is_true(condition_of(claim, CONDITION_FILE_SYSTEM_RESIZE_PENDING))


def pod_claims(sts: Obj, pod: Obj, lookup: ClaimLookup) -> list[tuple[Obj, Obj]]:
    """(claim, template) for each template whose claim of this pod's ordinal exists and is not
    being deleted (``handlePVCWithCustomFn`` with terminating claims ignored)."""
    set_name, ordinal = sts["metadata"]["name"], ordinal_of(pod)
    pairs = []
    for template in spec_of(sts).get("volumeClaimTemplates") or []:
        name = claim_name(meta_of(template).get("name", ""), set_name, ordinal)
        claim = lookup(name)
        if claim is None or meta_of(claim).get("deletionTimestamp"):
            continue
        pairs.append((claim, template))
    return pairs


def volume_claim_statuses(sts: Obj, pods: Iterable[Obj], lookup: ClaimLookup) -> list[dict[str, Any]]:
    """``status.volumeClaims``: one entry per template, in template order, counting the pods whose
    claim is compatible (``compatibleReplicas``) and also ready (``compatibleReadyReplicas``)."""
    templates = spec_of(sts).get("volumeClaimTemplates") or []
    statuses = [
        {
            "volumeClaimName": meta_of(t).get("name", ""),
            "compatibleReplicas": 0,
            "compatibleReadyReplicas": 0,
        }
        for t in templates
    ]
    by_name = {s["volumeClaimName"]: s for s in statuses}
    for pod in pods:
        for claim, template in pod_claims(sts, pod, lookup):
            compatible, ready = compatible_and_ready(claim, template)
            if compatible:
                entry = by_name[meta_of(template).get("name", "")]
                entry["compatibleReplicas"] += 1
                entry["compatibleReadyReplicas"] += int(ready)
    return statuses


@dataclass(frozen=True)
class ClaimResize:
    """One claim to grow to its template's size: the claim's name, the storage class it names
    (whose ``allowVolumeExpansion`` the writer checks first; None: nothing to check) and the
    template's ``spec.resources`` it takes over."""

    name: str
    storage_class: str | None
    resources: Mapping[str, Any]


@dataclass(frozen=True)
class PodClaims:
    """Where a pod's claims stand under ``volumeClaimUpdateStrategy: OnPodRollingUpdate``.

    ``ready``: every claim's volume covers what the claim requests (``IsOwnedPVCsReady``; a pod
    that is otherwise available counts as unavailable without it). ``matched``: every claim asks
    for at least its template's storage and differs in nothing else (``IsClaimsCompatible``).
    ``completed``: every claim is compatible and ready or waits only for the file system
    (``IsOwnedPVCsCompleted``). ``resizes``: the claims to grow, in template order, up to
    ``conflict``, the first claim that differs from its template in more than size — upstream's
    ``TryPatchPVC`` patches the claims before it, then fails on it (such a claim only goes away
    by deletion)."""

    ready: bool
    matched: bool
    completed: bool
    resizes: tuple[ClaimResize, ...] = ()
    conflict: str | None = None


def pod_claims_state(sts: Obj, pod: Obj, lookup: ClaimLookup) -> PodClaims:
    """The pod's existing, not-deleting claims against the templates (see ``PodClaims``)."""
    ready = matched = completed = True
    resizes: list[ClaimResize] = []
    conflict: str | None = None
    for claim, template in pod_claims(sts, pod, lookup):
        ready = ready and compatible_and_ready(claim, template)[1]
        completed = completed and expansion_completed(claim, template)
        same_but_size = compatible_without_size(claim, template)
        grow = same_but_size and needs_expand(claim, template)
        if same_but_size and not grow:
            continue
        matched = False
        if conflict is not None:
            continue
        name = meta_of(claim).get("name", "")
        if not grow:
            conflict = name
            continue
        resizes.append(
            ClaimResize(
                name,
                spec_of(claim).get("storageClassName"),
                dict(section(template, "spec", "resources")),
            )
        )
    return PodClaims(ready, matched, completed, tuple(resizes), conflict)
