"""The ``kruise.io/cloneset-volumeclaimtemplate-hash`` a CloneSet revision carries, and the in-place rule
that reads it (gate ``RecreatePodWhenChangeVCTInCloneSetGate``).

PVCs are never updated in place, so upstream records a hash of ``spec.volumeClaimTemplates`` on each
revision; with the gate on, a pod whose revision's hash differs from the update revision's is recreated
(getting PVCs from the new templates) instead of updated in place. The hash must equal Go's so revisions
written by a Go kruise-manager compare equal to ours: each template is reduced to ``{name, spec}``,
sorted by name, encoded as Go's ``json.Marshal`` of ``[]PersistentVolumeClaim`` (struct field order,
``creationTimestamp: null`` and ``status: {}`` included), and those bytes are hashed with FNV-1a through
``hashutil.DeepHashObject`` — which hashes spew's ``%#v`` rendering of the byte slice, not the bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.api.keys import ANNOTATION_CLONESET_VOLUMECLAIMTEMPLATE_HASH
from kruise.api.objects import annotations_of, meta_of, section, spec_of
from kruise.api.workload_common import UPDATE_TYPE_IN_PLACE_ONLY
from kruise.control.common.revision import fnv1a_32, spew_bytes
from kruise.control.sidecarset.gojson import dumps, to_go


def _selector(raw: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``*metav1.LabelSelector`` in Go field order (map keys sorted, as Go marshals maps)."""
    if raw is None:
        return None
    out: dict[str, Any] = {}
    labels = raw.get("matchLabels")
    if labels:
        out["matchLabels"] = {k: str(labels[k]) for k in sorted(labels)}
    expressions = raw.get("matchExpressions")
    if expressions:
        out["matchExpressions"] = [
            {
                "key": str(e.get("key", "")),
                "operator": str(e.get("operator", "")),
                **({"values": [str(v) for v in e["values"]]} if e.get("values") else {}),
            }
            for e in expressions
        ]
    return out


def _object_ref(raw: Mapping[str, Any] | None, namespaced: bool) -> dict[str, Any] | None:
    """``*TypedLocalObjectReference`` / ``*TypedObjectReference`` in Go field order."""
    if raw is None:
        return None
    out: dict[str, Any] = {"apiGroup": raw.get("apiGroup")} if raw.get("apiGroup") is not None else {}
    out["kind"] = str(raw.get("kind", ""))
    out["name"] = str(raw.get("name", ""))
    if namespaced and raw.get("namespace") is not None:
        out["namespace"] = str(raw["namespace"])
    return out


def _claim_spec(raw: Mapping[str, Any]) -> dict[str, Any]:
    """``PersistentVolumeClaimSpec`` as Go re-encodes it (omitempty fields dropped, quantities canonical)."""
    out: dict[str, Any] = {}
    if raw.get("accessModes"):
        out["accessModes"] = [str(m) for m in raw["accessModes"]]
    selector = _selector(raw.get("selector"))
    if selector is not None:
        out["selector"] = selector
    resources = raw.get("resources") or {}
    out["resources"] = {
        key: to_go(resources[key], "{q}") for key in ("limits", "requests") if resources.get(key)
    }
    if raw.get("volumeName"):
        out["volumeName"] = str(raw["volumeName"])
    for key in ("storageClassName", "volumeMode"):
        if raw.get(key) is not None:
            out[key] = str(raw[key])
    for key, namespaced in (("dataSource", False), ("dataSourceRef", True)):
        ref = _object_ref(raw.get(key), namespaced)
        if ref is not None:
            out[key] = ref
    if raw.get("volumeAttributesClassName") is not None:
        out["volumeAttributesClassName"] = str(raw["volumeAttributesClassName"])
    return out


def templates_json(templates: Sequence[Mapping[str, Any]] | None) -> bytes:
    """Go's ``json.Marshal`` of the templates reduced to name and spec, sorted by name (stable)."""
    if not templates:
        return b"null"
    claims = [
        {
            "metadata": {"name": str(meta_of(t).get("name", "")), "creationTimestamp": None},
            "spec": _claim_spec(spec_of(t)),
            "status": {},
        }
        for t in templates
    ]
    claims.sort(key=lambda c: c["metadata"]["name"])
    return dumps(claims)


def expected_hash(templates: Sequence[Mapping[str, Any]] | None) -> int:
    """``getExpectHash``: FNV-1a 32 over ``DeepHashObject`` of the encoded templates."""
    return fnv1a_32(spew_bytes(templates_json(templates)))


def revision_annotation(cloneset: Mapping[str, Any]) -> str:
    """The annotation value ``PatchVCTemplateHash`` writes: the hash, or "" without templates."""
    templates = spec_of(cloneset).get("volumeClaimTemplates")
    return str(expected_hash(templates)) if templates else ""


def revision_hash(revision: Mapping[str, Any]) -> str | None:
    """``GetVCTemplatesHash``: the annotation's value, None when the revision has none."""
    annotations = annotations_of(revision)
    return annotations.get(ANNOTATION_CLONESET_VOLUMECLAIMTEMPLATE_HASH)


def can_update_in_place(old_revision: Mapping[str, Any], new_revision: Mapping[str, Any]) -> bool:
    """``CanVCTemplateInplaceUpdate``: only two recorded, different hashes forbid in-place.

    A revision without the annotation (written before the feature, or by a manager that does not
    write it) never forces a recreate: upstream cannot know its templates and prefers no churn.
    """
    old, new = revision_hash(old_revision), revision_hash(new_revision)
    if old is None or new is None:
        return True
    return old == new


def vct_change_forces_recreate(
    cloneset: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    target: Mapping[str, Any] | None,
    *,
    recreate_on_vct_change: bool,
) -> bool:
    """Gate ``RecreatePodWhenChangeVCTInCloneSetGate``: the two revisions record different
    volumeClaimTemplates hashes, so the pod must be recreated to get claims from the new templates.
    InPlaceOnly ignores the hashes (upstream's ``IgnoreVolumeClaimTemplatesHashDiff``)."""
    if not recreate_on_vct_change or old is None or target is None:
        return False
    if section(cloneset, "spec", "updateStrategy").get("type") == UPDATE_TYPE_IN_PLACE_ONLY:
        return False
    return not can_update_in_place(old, target)
