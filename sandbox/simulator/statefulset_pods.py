"""The identity and storage of apps/v1 StatefulSet pods, as kube-controller-manager gives them.

Pure helpers for ``statefulset.py``: a pod is ``<set>-<ordinal>`` with the labels
``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
``controller-revision-hash`` (the name of its ControllerRevision), hostname = its name and
subdomain = ``spec.serviceName``; each ``volumeClaimTemplates`` entry becomes the PVC
``<claim>-<set>-<ordinal>`` mounted as the volume of the claim's name (replacing a template volume
of that name). ``persistentVolumeClaimRetentionPolicy`` is applied the upstream way, through owner
references the garbage collector acts on: ``whenDeleted: Delete`` makes the set an owner of each
claim, ``whenScaled: Delete`` makes a condemned pod (ordinal out of range) the owner of its claims.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kruise.sandbox.simulator.owners import available_in, is_ready, pod_from_template

Obj = dict[str, Any]

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def start_ordinal(sts: Obj) -> int:
    return int(((sts.get("spec") or {}).get("ordinals") or {}).get("start") or 0)


def ordinal_range(sts: Obj) -> range:
    """The ordinals the set wants: ``[start, start + replicas)``."""
    start = start_ordinal(sts)
    return range(start, start + int((sts.get("spec") or {}).get("replicas", 1)))


def ordinal_of(pod: Obj, set_name: str) -> int | None:
    """The pod's ordinal if its name is ``<set_name>-<n>``, else None (the pod is ignored)."""
    match = _ORDINAL.match(pod["metadata"].get("name") or "")
    if not match or match.group(1) != set_name:
        return None
    return int(match.group(2))


def revision_of(pod: Obj) -> str:
    return (pod["metadata"].get("labels") or {}).get(REVISION_LABEL, "")


def claim_name(template: Obj, set_name: str, ordinal: int) -> str:
    return f"{template['metadata']['name']}-{set_name}-{ordinal}"


def claims_for(sts: Obj, ordinal: int) -> list[Obj]:
    """The PVCs of the pod at ``ordinal``, from ``volumeClaimTemplates`` (labels: the selector's)."""
    meta = sts["metadata"]
    spec = sts.get("spec") or {}
    selector_labels = (spec.get("selector") or {}).get("matchLabels") or {}
    claims = []
    for template in spec.get("volumeClaimTemplates") or []:
        claim = copy.deepcopy(template)
        claim_meta = claim.setdefault("metadata", {})
        claim_meta["name"] = claim_name(template, meta["name"], ordinal)
        claim_meta["namespace"] = meta["namespace"]
        claim_meta["labels"] = {**(claim_meta.get("labels") or {}), **selector_labels}
        claim.pop("status", None)
        claims.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim", **claim})
    return claims


def with_storage(sts: Obj, pod: Obj, ordinal: int) -> None:
    """Mount each claim as the volume of its template's name (updateStorage)."""
    templates = (sts.get("spec") or {}).get("volumeClaimTemplates") or []
    names = {t["metadata"]["name"] for t in templates}
    volumes = [
        {
            "name": t["metadata"]["name"],
            "persistentVolumeClaim": {"claimName": claim_name(t, sts["metadata"]["name"], ordinal)},
        }
        for t in templates
    ]
    spec = pod.setdefault("spec", {})
    spec["volumes"] = volumes + [v for v in spec.get("volumes") or [] if v.get("name") not in names]
    if not spec["volumes"]:
        del spec["volumes"]


def identity_labels(set_name: str, ordinal: int) -> dict[str, str]:
    return {POD_NAME_LABEL: f"{set_name}-{ordinal}", POD_INDEX_LABEL: str(ordinal)}


def new_pod(sts: Obj, template: Obj, ordinal: int, revision: str) -> Obj:
    """The pod for ``ordinal`` from ``template`` (the current or update revision's) at ``revision``."""
    set_name = sts["metadata"]["name"]
    pod = pod_from_template({**sts, "spec": {"template": template}})
    pod["metadata"]["name"] = f"{set_name}-{ordinal}"
    pod["metadata"]["labels"] |= {**identity_labels(set_name, ordinal), REVISION_LABEL: revision}
    pod["spec"]["hostname"] = pod["metadata"]["name"]
    service = (sts.get("spec") or {}).get("serviceName")
    if service:
        pod["spec"]["subdomain"] = service
    with_storage(sts, pod, ordinal)
    return pod


def identity_matches(sts: Obj, pod: Obj, ordinal: int) -> bool:
    labels = pod["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in identity_labels(sts["metadata"]["name"], ordinal).items())


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and is_ready(pod)


def available_wait(pod: Obj, min_ready_seconds: int) -> float | None:
    """0 when Running and available, seconds to go when Running and Ready, None otherwise."""
    if not running_and_ready(pod):
        return None
    return available_in(pod, min_ready_seconds)


def is_healthy(pod: Obj | None) -> bool:
    """Running, Ready and not terminating (a pod not yet created is not healthy)."""
    return pod is not None and running_and_ready(pod) and not is_terminating(pod)


def is_created(pod: Obj) -> bool:
    return bool((pod.get("status") or {}).get("phase"))


def claim_owner_changes(sts: Obj, claim: Obj, pod: Obj, ordinal: int) -> list[Obj] | None:
    """The claim's ownerReferences under the retention policy, or None when they already fit."""
    policy = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
    delete_with_set = policy.get("whenDeleted") == "Delete"
    delete_on_scale = policy.get("whenScaled") == "Delete"
    condemned = ordinal not in ordinal_range(sts)
    want_set = delete_with_set and not (delete_on_scale and condemned)
    want_pod = delete_on_scale and condemned
    refs = list(claim["metadata"].get("ownerReferences") or [])
    changed = False
    for owner, wanted, kind, version in (
        (sts, want_set, "StatefulSet", "apps/v1"),
        (pod, want_pod, "Pod", "v1"),
    ):
        uid = owner["metadata"].get("uid")
        has = any(r.get("uid") == uid for r in refs)
        if wanted and not has and uid:
            refs.append({"apiVersion": version, "kind": kind, "name": owner["metadata"]["name"], "uid": uid})
            changed = True
        elif not wanted and has:
            refs = [r for r in refs if r.get("uid") != uid]
            changed = True
    return refs if changed else None
