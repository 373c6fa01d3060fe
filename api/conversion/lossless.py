"""Making a lossy field mapping lossless: what one version cannot hold rides along in an annotation.

The per-kind mappings (`to_v1beta1`, `to_v1alpha1`) are allowed to lose information: a field with
no place in the target version, a deprecated value mapped onto its successor, the difference between
"absent" and "false". After mapping A -> B we map B straight back and diff the result with the
original A; every difference is a *stash entry*: the path, the value A really had there (`value`)
and the value the plain mapping produces there (`mapped`). The entries travel on the B object in
annotation STASH_ANNOTATION. When that B object is converted to A again, each entry is applied only
if the plain mapping still produces `mapped` at its path, i.e. only if no client changed what the
entry was derived from; an edited field is never overwritten by stale stashed data.

Upstream OpenKruise's conversions keep no such annotation (their round trips lose, e.g., SidecarSet
`spec.namespace` and the DaemonSet `Surging` type); this annotation is kruise-py's own, in the
style of Cluster API's `cluster.x-k8s.io/conversion-data`.

Lists are compared whole; dicts are compared key by key, so an entry sits at the shallowest path
where the two sides differ.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kruise.api.conversion.errors import ConversionError

STASH_ANNOTATION = "apps.kruise.io/conversion-data"

_ABSENT = object()


def same(a: object, b: object) -> bool:
    """JSON equality that tells true from 1 and 1 from 1.0, as the serialised forms differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)  # type: ignore[union-attr]
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    return a == b


def diff(original: dict[str, Any], mapped: dict[str, Any]) -> list[dict[str, Any]]:
    """Stash entries that turn `mapped` back into `original`."""
    entries: list[dict[str, Any]] = []
    _diff(original, mapped, [], entries)
    return entries


def _entry(path: list[str], value: object, mapped: object) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path}
    if value is not _ABSENT:
        entry["value"] = copy.deepcopy(value)
    if mapped is not _ABSENT:
        entry["mapped"] = copy.deepcopy(mapped)
    return entry


def _diff(original: object, mapped: object, path: list[str], out: list[dict[str, Any]]) -> None:
    if isinstance(original, dict) and isinstance(mapped, dict):
        for key in sorted(original.keys() | mapped.keys()):
            left = original.get(key, _ABSENT)
            right = mapped.get(key, _ABSENT)
            if left is _ABSENT or right is _ABSENT:
                out.append(_entry([*path, key], left, right))
            elif not same(left, right):
                _diff(left, right, [*path, key], out)
        return
    if not same(original, mapped):
        out.append(_entry(path, original, mapped))


def apply(obj: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    """Restore stashed values where the mapping still yields what it yielded when they were stashed."""
    for entry in entries:
        *parents, leaf = entry["path"]
        node: object = obj
        for key in parents:
            if not isinstance(node, dict):
                break
            node = node.setdefault(key, {}) if "mapped" not in entry else node.get(key, _ABSENT)
        if not isinstance(node, dict):
            continue
        if not same(node.get(leaf, _ABSENT), entry.get("mapped", _ABSENT)):
            continue
        if "value" in entry:
            node[leaf] = copy.deepcopy(entry["value"])
        else:
            node.pop(leaf, None)


def pop_stash(obj: dict[str, Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """Remove the stash annotation from `obj`; returns (apiVersion it describes, entries)."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(annotations, dict) or STASH_ANNOTATION not in annotations:
        return None, []
    raw = annotations.pop(STASH_ANNOTATION)
    field = f"metadata.annotations[{STASH_ANNOTATION}]"
    try:
        payload = json.loads(raw) if isinstance(raw, str) else None
    except json.JSONDecodeError as exc:
        raise ConversionError(field, f"is not valid JSON: {exc}") from exc
    if not _valid_payload(payload):
        raise ConversionError(field, "must be an object with apiVersion and a list of fields entries")
    if not annotations and payload.get("createdAnnotations"):
        del meta["annotations"]
    return payload["apiVersion"], payload["fields"]


def _valid_payload(payload: object) -> bool:
    if not isinstance(payload, dict) or not isinstance(payload.get("apiVersion"), str):
        return False
    fields = payload.get("fields")
    if not isinstance(fields, list):
        return False
    for entry in fields:
        if not isinstance(entry, dict):
            return False
        path = entry.get("path")
        if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
            return False
    return True


def put_stash(obj: dict[str, Any], api_version: str, entries: list[dict[str, Any]]) -> None:
    """Attach `entries` (describing `api_version`) to `obj`; nothing is attached when there are none."""
    if not entries:
        return
    meta = obj.setdefault("metadata", {})
    payload: dict[str, Any] = {"apiVersion": api_version, "fields": entries}
    if not isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {}
        payload["createdAnnotations"] = True
    meta["annotations"][STASH_ANNOTATION] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
