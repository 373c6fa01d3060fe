"""New pods for an ordinal, and the identity/storage invariants an existing pod must keep.

``new_pod`` is upstream's ``newStatefulSetPod`` + ``setPodRevision``; ``identity_matches`` and
``storage_matches`` decide whether a live pod needs ``identity_patch`` (only its labels can be
fixed on a live pod; hostname and subdomain are set once at creation).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.api.controllerref import new_controller_ref
from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH, LABEL_POD_INDEX, LABEL_STATEFULSET_POD_NAME
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of, status_of
from kruise.control.common.revision import is_pod_update
from kruise.control.statefulset.identity import (
    OrdinalRange,
    claim_name,
    ordinal_of,
    parent_and_ordinal,
    pod_name,
)

DEFAULT_API_VERSION = "apps.kruise.io/v1beta1"


def revision_of(pod: Obj) -> str:
    """The ``controller-revision-hash`` label ("" when absent)."""
    return labels_of(pod).get(LABEL_CONTROLLER_REVISION_HASH, "")


def retention_policy(sts: Mapping[str, Any], auto_delete_pvc: bool = True) -> Mapping[str, Any]:
    """The ``persistentVolumeClaimRetentionPolicy`` the controller acts on. Gate
    StatefulSetAutoDeletePVC (beta, on) off: none — claims are always retained (no owner reference
    to the set, no deletion on scale-in), whatever the set says, as upstream skips every
    retention step then."""
    if not auto_delete_pvc:
        return {}
    return spec_of(sts).get("persistentVolumeClaimRetentionPolicy") or {}


def claims_for_ordinal(sts: Mapping[str, Any], ordinal: int) -> list[dict[str, Any]]:
    """The PVCs one ordinal uses, in volumeClaimTemplates order: ``<claim>-<set>-<ordinal>``,
    in the set's namespace, labelled with the selector's matchLabels."""
    meta, spec = sts["metadata"], sts.get("spec") or {}
    match_labels = section(spec, "selector").get("matchLabels") or {}
    claims = []
    for template in spec.get("volumeClaimTemplates") or []:
        claim = copy.deepcopy(dict(template))
        claim_meta = dict(meta_of(claim))
        claim_meta["name"] = claim_name(claim_meta.get("name", ""), meta["name"], ordinal)
        if meta.get("namespace"):
            claim_meta["namespace"] = meta["namespace"]
        claim_meta["labels"] = {**section(claim_meta, "labels"), **match_labels}
        claim["metadata"] = claim_meta
        claim.setdefault("apiVersion", "v1")
        claim.setdefault("kind", "PersistentVolumeClaim")
        claim.pop("status", None)
        claims.append(claim)
    return claims


def _template_claim_names(sts: Mapping[str, Any]) -> list[str]:
    templates = spec_of(sts).get("volumeClaimTemplates") or []
    return [meta_of(t).get("name", "") for t in templates]


def identity_labels(sts: Mapping[str, Any], ordinal: int, *, pod_index_label: bool) -> dict[str, str]:
    name = pod_name(sts["metadata"]["name"], ordinal)
    labels = {LABEL_STATEFULSET_POD_NAME: name}
    if pod_index_label:
        labels[LABEL_POD_INDEX] = str(ordinal)
    return labels


def new_pod(
    sts: Mapping[str, Any],
    template: Mapping[str, Any],
    ordinal: int,
    revision: str,
    *,
    pod_index_label: bool = True,
) -> dict[str, Any]:
    """The pod to create for ``ordinal`` from ``template`` (the template of ``revision``).

    Claim volumes come first and replace template volumes of the same name, as upstream.
    """
    if ordinal < 0:
        raise ValueError(f"ordinal: must be >= 0, got {ordinal}")
    meta = sts["metadata"]
    spec = sts.get("spec") or {}
    tmeta = template.get("metadata") or {}
    name = pod_name(meta["name"], ordinal)
    pod_meta: dict[str, Any] = {
        "name": name,
        "generateName": f"{meta['name']}-",
        "labels": {
            **section(tmeta, "labels"),
            **identity_labels(sts, ordinal, pod_index_label=pod_index_label),
            LABEL_CONTROLLER_REVISION_HASH: revision,
        },
        "ownerReferences": [new_controller_ref(sts, api_version=DEFAULT_API_VERSION, kind="StatefulSet")],
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    if meta.get("namespace"):
        pod_meta["namespace"] = meta["namespace"]
    pod_spec = copy.deepcopy(dict(spec_of(template)))
    pod_spec["hostname"] = name
    if spec.get("serviceName"):
        pod_spec["subdomain"] = spec["serviceName"]
    claim_volumes = [
        {
            "name": template_name,
            "persistentVolumeClaim": {"claimName": claim_name(template_name, meta["name"], ordinal)},
        }
        for template_name in _template_claim_names(sts)
    ]
    if claim_volumes:
        taken = {v["name"] for v in claim_volumes}
        pod_spec["volumes"] = claim_volumes + [
            v for v in pod_spec.get("volumes") or [] if v.get("name") not in taken
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": pod_spec}


def identity_matches(sts: Mapping[str, Any], pod: Obj, *, pod_index_label: bool = True) -> bool:
    """``identityMatches``: the pod's name parses to this set and an ordinal, it lives in the
    set's namespace and carries the pod-name label. Like upstream, a missing pod-index label
    alone does not trigger a fix (it is rewritten whenever identity is fixed)."""
    meta = pod.get("metadata") or {}
    sts_meta = sts["metadata"]
    parent, ordinal = parent_and_ordinal(meta.get("name") or "")
    if ordinal < 0 or parent != sts_meta["name"]:
        return False
    if (meta.get("namespace") or "") != (sts_meta.get("namespace") or ""):
        return False
    labels = meta.get("labels") or {}
    wanted = identity_labels(sts, ordinal, pod_index_label=pod_index_label)
    return labels.get(LABEL_STATEFULSET_POD_NAME) == wanted[LABEL_STATEFULSET_POD_NAME]


def storage_matches(sts: Mapping[str, Any], pod: Obj) -> bool:
    """Every volumeClaimTemplate is mounted from this ordinal's PVC."""
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    volumes = {v.get("name"): v for v in spec_of(pod).get("volumes") or []}
    set_name = sts["metadata"]["name"]
    for template_name in _template_claim_names(sts):
        source = section(volumes, template_name).get("persistentVolumeClaim") or {}
        if source.get("claimName") != claim_name(template_name, set_name, ordinal):
            return False
    return True


def identity_patch(sts: Mapping[str, Any], pod: Obj, *, pod_index_label: bool = True) -> dict[str, Any]:
    """Merge patch restoring the identity labels of a live pod (``updateIdentity``)."""
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        raise ValueError(f"pod {(pod.get('metadata') or {}).get('name')!r}: name has no ordinal suffix")
    return {"metadata": {"labels": identity_labels(sts, ordinal, pod_index_label=pod_index_label)}}


def needs_current_revision(
    sts: Mapping[str, Any],
    live_range: OrdinalRange,
    ordinal: int,
    live: Mapping[int, Obj],
    update_revision: str,
    *,
    preparing_update_as_update: bool = False,
) -> bool:
    """Whether a pod newly created at ``ordinal`` takes the current revision
    (``isCurrentRevisionNeeded``). ``live`` holds the pods (existing or about to be created)
    of the other live ordinals.

    - OnDelete: never (new pods are always at the update revision);
    - ordered rolling update: the first ``partition`` live ordinals keep the current revision;
    - unorderedUpdate: while fewer than ``partition`` other pods are not updated (``IsPodUpdate``:
      with gate PreparingUpdateAsUpdate a PreparingUpdate pod counts as updated).
    """
    strategy = spec_of(sts).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return False
    rolling = strategy.get("rollingUpdate")
    if rolling is None:
        current = int((status_of(sts).get("currentReplicas")) or 0)
        return ordinal < live_range.start + current
    partition = int(rolling.get("partition") or 0)
    if rolling.get("unorderedUpdate") is None:
        position = sum(1 for n in range(live_range.start, ordinal) if n not in live_range.reserved)
        return position + 1 <= partition
    not_updated = sum(
        1
        for n, pod in live.items()
        if n != ordinal and not is_pod_update(pod, update_revision, preparing_update_as_update)
    )
    return not_updated < partition
