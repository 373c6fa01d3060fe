"""New pods and their PVCs for a CloneSet (``newVersionedPods`` + ``GetPodFromTemplate``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kruise.api.controllerref import new_controller_ref
from kruise.api.keys import (
    ANNOTATION_LIFECYCLE_TIMESTAMP,
    CONDITION_INPLACE_UPDATE_READY,
    LABEL_CLONESET_INSTANCE_ID,
    LABEL_LIFECYCLE_STATE,
    LIFECYCLE_STATE_PREPARING_NORMAL,
)
from kruise.api.objects import meta_of, section, spec_of
from kruise.control.common.lifecycle import rfc3339
from kruise.control.common.revision import revision_labels_for_pod


def pvc_name(claim_template_name: str, cloneset_name: str, instance_id: str) -> str:
    return f"{claim_template_name}-{cloneset_name}-{instance_id}"


def pvcs_for_instance(cloneset: Mapping[str, Any], instance_id: str) -> dict[str, dict[str, Any]]:
    """Template name -> PVC for one instance: selector labels + instance id, owned by the CloneSet."""
    meta, spec = cloneset["metadata"], cloneset["spec"]
    match_labels = section(spec, "selector").get("matchLabels") or {}
    claims: dict[str, dict[str, Any]] = {}
    for template in spec.get("volumeClaimTemplates") or []:
        claim = copy.deepcopy(dict(template))
        claim_meta = dict(meta_of(claim))
        template_name = claim_meta.get("name", "")
        claim_meta["name"] = pvc_name(template_name, meta["name"], instance_id)
        if meta.get("namespace"):
            claim_meta["namespace"] = meta["namespace"]
        claim_meta["labels"] = {
            **section(claim_meta, "labels"),
            **match_labels,
            LABEL_CLONESET_INSTANCE_ID: instance_id,
        }
        claim_meta["ownerReferences"] = [
            *(claim_meta.get("ownerReferences") or []),
            new_controller_ref(cloneset, api_version="apps.kruise.io/v1alpha1", kind="CloneSet"),
        ]
        claim["metadata"] = claim_meta
        claim.setdefault("apiVersion", "v1")
        claim.setdefault("kind", "PersistentVolumeClaim")
        claim.pop("status", None)
        claims[template_name] = claim
    return claims


def inject_readiness_gate(pod: dict[str, Any]) -> None:
    gates = pod["spec"].setdefault("readinessGates", [])
    if not any(g.get("conditionType") == CONDITION_INPLACE_UPDATE_READY for g in gates):
        gates.append({"conditionType": CONDITION_INPLACE_UPDATE_READY})


def new_pod(
    cloneset: Mapping[str, Any],
    template: Mapping[str, Any],
    revision: str,
    instance_id: str,
    now: datetime,
    *,
    short_hash_gate: bool = False,
) -> dict[str, Any]:
    """The pod object to create for ``instance_id`` at ``revision`` from ``template``.

    PVC volumes replace template volumes of the same name and come first, as upstream orders them.
    """
    meta = cloneset["metadata"]
    tmeta = template.get("metadata") or {}
    labels = {
        **section(tmeta, "labels"),
        **revision_labels_for_pod(revision, short_hash_gate),
        LABEL_CLONESET_INSTANCE_ID: instance_id,
        LABEL_LIFECYCLE_STATE: LIFECYCLE_STATE_PREPARING_NORMAL,
    }
    annotations = {**section(tmeta, "annotations"), ANNOTATION_LIFECYCLE_TIMESTAMP: rfc3339(now)}
    pod_meta: dict[str, Any] = {
        "name": f"{meta['name']}-{instance_id}",
        "generateName": f"{meta['name']}-",
        "labels": labels,
        "annotations": annotations,
        "ownerReferences": [
            new_controller_ref(cloneset, api_version="apps.kruise.io/v1alpha1", kind="CloneSet")
        ],
    }
    if meta.get("namespace"):
        pod_meta["namespace"] = meta["namespace"]
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": copy.deepcopy(dict(spec_of(template))),
    }
    inject_readiness_gate(pod)
    claims = {
        name: claim["metadata"]["name"] for name, claim in pvcs_for_instance(cloneset, instance_id).items()
    }
    if claims:
        volumes = [
            {"name": name, "persistentVolumeClaim": {"claimName": claim}} for name, claim in claims.items()
        ]
        volumes += [v for v in pod["spec"].get("volumes") or [] if v.get("name") not in claims]
        pod["spec"]["volumes"] = volumes
    return pod
