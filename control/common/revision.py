"""ControllerRevision naming, hashing and history bookkeeping, byte-compatible with upstream.

Upstream CloneSet stores each template as a ControllerRevision whose ``data`` is a strategic-merge
patch ``{"spec":{"template":{..., "$patch":"replace"}}}`` and whose name is ``<owner>-<hash>``.
The hash is Kubernetes' ``HashControllerRevision``: FNV-1 (not 1a) 32-bit over the raw JSON bytes,
then the decimal collision count, rendered through ``rand.SafeEncodeString``. Reproducing the exact
bytes Go would produce matters: pods created by a Go controller carry these names in their
``controller-revision-hash`` label, and a different hash would make every pod look outdated.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from kruise.api.controllerref import new_controller_ref
from kruise.api.keys import (
    ANNOTATION_CLONESET_VOLUMECLAIMTEMPLATE_HASH,
    LABEL_CONTROLLER_HASH,
    LABEL_CONTROLLER_REVISION_HASH,
    LABEL_LIFECYCLE_STATE,
    LABEL_POD_TEMPLATE_HASH,
    LIFECYCLE_STATE_PREPARING_UPDATE,
)
from kruise.api.objects import labels_of, meta_of, section, spec_of

# k8s.io/apimachinery/pkg/util/rand: consonants and digits chosen so encoded strings never spell words.
SAFE_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193
# ControllerRevisionName keeps names within the 253-char limit: prefix(223) + "-" + hash.
_MAX_PREFIX = 223
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def fnv1_32(data: bytes) -> int:
    """Go's ``hash/fnv.New32`` (multiply, then xor), which Kubernetes' history package uses."""
    value = _FNV32_OFFSET
    for byte in data:
        value = (value * _FNV32_PRIME) & 0xFFFFFFFF
        value ^= byte
    return value


def fnv1a_32(data: bytes) -> int:
    """Go's ``hash/fnv.New32a`` (xor, then multiply), used by Kruise's own template hashes."""
    value = _FNV32_OFFSET
    for byte in data:
        value ^= byte
        value = (value * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def spew_bytes(data: bytes) -> bytes:
    """What ``hashutil.DeepHashObject`` feeds its hasher for a ``[]byte``: spew's ``%#v`` rendering
    (the type in parentheses, then the decimal bytes in brackets), not the bytes themselves."""
    return b"([]uint8)[" + " ".join(str(b) for b in data).encode() + b"]"


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: map each byte onto the safe alphabet."""
    return "".join(SAFE_ALPHANUMS[b % len(SAFE_ALPHANUMS)] for b in text.encode())


def go_json(value: Any) -> bytes:
    """Compact JSON with sorted keys and Go's HTML-safe escaping, as ``json.Marshal`` of a map."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return text.encode()


def revision_for_write(revision: Mapping[str, Any]) -> dict[str, Any]:
    """The revision as a request body whose ``data`` is Go's canonical encoding, byte for byte.

    kube-apiserver keeps ``data`` as the raw bytes it was sent and compares them byte-wise on
    every later write, while any patch re-encodes them the way Go does (compact, HTML-escaped,
    sorted keys for strategic/apply patches). Bytes that are not already canonical therefore
    make a later label patch or the garbage collector's ownerReference patch fail with
    ``data: Invalid value: ...: field is immutable``.
    """
    return {**revision, "data": orjson.Fragment(go_json(revision.get("data")))}


def hash_revision_data(raw: bytes, collision_count: int | None) -> str:
    """``history.HashControllerRevision`` for a revision whose data is raw JSON."""
    payload = raw + (str(collision_count).encode() if collision_count is not None else b"")
    digest = fnv1_32(payload)
    return safe_encode_string(str(digest))


def controller_revision_name(prefix: str, hash_: str) -> str:
    return f"{prefix[:_MAX_PREFIX]}-{hash_}"


def short_hash(revision: str) -> str:
    """The real hash is always the last ``-`` separated part of a revision name."""
    return revision.split("-")[-1]


def equal_to_revision_hash(pod: Mapping[str, Any], revision: str) -> bool:
    """A pod matches a revision by full name or by the hash suffix (CloneSetShortHash pods)."""
    label = labels_of(pod).get(LABEL_CONTROLLER_REVISION_HASH, "")
    return label == revision or short_hash(label) == short_hash(revision)


def is_pod_update(
    pod: Mapping[str, Any], update_revision: str, preparing_update_as_update: bool = False
) -> bool:
    """``revision.IsPodUpdate``: the pod is at the update revision, or — gate
    PreparingUpdateAsUpdate on — it is in lifecycle state PreparingUpdate (its update has begun,
    only a hook still holds it), so scaling counts it as already updated and does not create or
    keep an extra old-revision pod in its place."""
    if preparing_update_as_update:
        state = labels_of(pod).get(LABEL_LIFECYCLE_STATE)
        if state == LIFECYCLE_STATE_PREPARING_UPDATE:
            return True
    return equal_to_revision_hash(pod, update_revision)


def revision_labels_for_pod(revision: str, short_hash_gate: bool = False) -> dict[str, str]:
    """Labels a CloneSet writes on pods of ``revision`` (``clonesetutils.WriteRevisionHash``)."""
    short = short_hash(revision)
    return {
        LABEL_CONTROLLER_REVISION_HASH: short if short_hash_gate else revision,
        LABEL_POD_TEMPLATE_HASH: short,
    }


def go_encoded_template(template: Mapping[str, Any]) -> dict[str, Any]:
    """The template as Go's encoder would emit it from typed structs.

    Non-pointer structs are never omitted by ``omitempty``: ``metadata.creationTimestamp`` is
    always ``null`` and each container's ``resources`` is at least ``{}``.
    """
    out = copy.deepcopy(dict(template))
    metadata = dict(meta_of(out))
    metadata.setdefault("creationTimestamp", None)
    out["metadata"] = metadata
    spec = dict(spec_of(out))
    spec.setdefault("containers", None)
    for key in _CONTAINER_LISTS:
        if spec.get(key):
            spec[key] = [{**c, "resources": c.get("resources") or {}} for c in spec[key]]
    out["spec"] = spec
    return out


def cloneset_revision_data(template: Mapping[str, Any]) -> dict[str, Any]:
    """The strategic-merge patch CloneSet stores as revision data."""
    encoded = go_encoded_template(template)
    encoded["$patch"] = "replace"
    return {"spec": {"template": encoded}}


def template_from_revision_data(data: Mapping[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`cloneset_revision_data`: the template a revision restores."""
    template = copy.deepcopy(dict(data["spec"]["template"]))
    template.pop("$patch", None)
    return template


def new_cloneset_revision(
    cloneset: Mapping[str, Any],
    revision: int,
    collision_count: int | None,
    vct_hash: str | None = None,
) -> dict[str, Any]:
    """A candidate ControllerRevision for the CloneSet's current template (``NewRevision``)."""
    meta = cloneset["metadata"]
    template = cloneset["spec"]["template"]
    data = cloneset_revision_data(template)
    hash_ = hash_revision_data(go_json(data), collision_count)
    labels = dict(labels_of(template))
    labels[LABEL_CONTROLLER_HASH] = hash_
    annotations = dict(section(meta, "annotations"))
    if vct_hash is not None:
        annotations[ANNOTATION_CLONESET_VOLUMECLAIMTEMPLATE_HASH] = vct_hash
    owner = new_controller_ref(cloneset, api_version="apps.kruise.io/v1alpha1", kind="CloneSet")
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": controller_revision_name(meta["name"], hash_),
            "labels": labels,
            "ownerReferences": [owner],
        },
        "data": data,
        "revision": revision,
    }
    if meta.get("namespace"):
        body["metadata"]["namespace"] = meta["namespace"]
    if annotations:
        body["metadata"]["annotations"] = annotations
    return body


def revisions_equal(lhs: Mapping[str, Any] | None, rhs: Mapping[str, Any] | None) -> bool:
    """``history.EqualRevision``: same data (hash labels are only a shortcut for inequality)."""
    if lhs is None or rhs is None:
        return lhs is rhs
    return go_json(lhs.get("data")) == go_json(rhs.get("data"))


def sort_revisions(revisions: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``history.SortControllerRevisions``: by revision number, then creation time, then name."""
    return sorted(
        revisions,
        key=lambda r: (
            int(r.get("revision") or 0),
            meta_of(r).get("creationTimestamp") or "",
            meta_of(r).get("name", ""),
        ),
    )


def next_revision_number(revisions: Iterable[Mapping[str, Any]]) -> int:
    ordered = sort_revisions(revisions)
    return int(ordered[-1].get("revision") or 0) + 1 if ordered else 1


@dataclass(frozen=True)
class RevisionChoice:
    """What the controller must do to have current and update revisions in the API.

    ``action`` is ``"reuse"`` (update revision is already the newest stored one), ``"rollback"``
    (an equal older revision exists: patch its ``revision`` to ``new_number``) or ``"create"``
    (create ``update``; on AlreadyExists with different data bump collisionCount and recompute).
    ``annotations`` is set only for a rollback whose stored revision must also take the candidate's
    volumeClaimTemplates hash (written with the ``revision`` patch).
    """

    action: str
    update: Mapping[str, Any]
    current: Mapping[str, Any]
    new_number: int
    annotations: Mapping[str, str] | None = None


def choose_revisions(
    cloneset: Mapping[str, Any],
    revisions: Iterable[Mapping[str, Any]],
    vct_hash: str | None = None,
) -> RevisionChoice:
    """``getActiveRevisions``: derive update/current revisions from stored history.

    ``vct_hash`` (CloneSet only) is the ``cloneset-volumeclaimtemplate-hash`` of the current
    volumeClaimTemplates. Reusing the newest revision keeps its recorded hash (a change of the
    templates alone makes no new revision, as upstream); rolling back to an older equal revision
    carries the new hash onto it when its own is missing or different.
    """
    ordered = sort_revisions(revisions)
    status = cloneset.get("status") or {}
    number = next_revision_number(ordered)
    candidate = new_cloneset_revision(cloneset, number, status.get("collisionCount") or 0, vct_hash)
    equal = [r for r in ordered if revisions_equal(r, candidate)]
    annotations = None
    if equal and revisions_equal(ordered[-1], equal[-1]):
        action, update = "reuse", ordered[-1]
    elif equal:
        action, update = "rollback", {**equal[-1], "revision": number}
        stored = meta_of(equal[-1]).get("annotations") or {}
        if vct_hash is not None and stored.get(ANNOTATION_CLONESET_VOLUMECLAIMTEMPLATE_HASH) != vct_hash:
            annotations = {**stored, ANNOTATION_CLONESET_VOLUMECLAIMTEMPLATE_HASH: vct_hash}
            update["metadata"] = {**update["metadata"], "annotations": annotations}
    else:
        action, update = "create", candidate
    current_name = status.get("currentRevision")
    update_name = update["metadata"]["name"]
    current = next(
        (r for r in ordered if current_name and r["metadata"]["name"] == current_name),
        None,
    )
    if current is None or current["metadata"]["name"] == update_name:
        current = update
    return RevisionChoice(
        action=action, update=update, current=current, new_number=number, annotations=annotations
    )


def revisions_to_truncate(
    revisions: Iterable[Mapping[str, Any]],
    live_names: Iterable[str],
    history_limit: int,
) -> list[str]:
    """Names of revisions to delete, oldest first: unreferenced ones beyond ``history_limit``.

    ``live_names`` holds current/update revision names and every pod's revision label.
    """
    live = set(live_names)
    dead = [
        r["metadata"]["name"]
        for r in sort_revisions(revisions)
        if r["metadata"]["name"] not in live and short_hash(r["metadata"]["name"]) not in live
    ]
    excess = len(dead) - history_limit
    return dead[:excess] if excess > 0 else []
