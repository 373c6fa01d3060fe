"""Server-side apply, simplified.

The applied configuration is merged into the live object (strategic for built-ins, merge for
custom resources); fields this manager applied before but omits now are removed unless another
manager's managedFields still claim them. Ownership is tracked at map-key granularity (lists are
atomic) and conflicts with other managers are not detected: every apply behaves as `force=true`.
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.sandbox.apiserver.patches import merge_patch, strategic_merge_patch


def _paths(fields: dict[str, Any], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Leaf paths of a FieldsV1 map (`f:key` only)."""
    out: set[tuple[str, ...]] = set()
    for key, sub in fields.items():
        if not key.startswith("f:"):
            continue
        path = (*prefix, key[2:])
        if isinstance(sub, dict) and any(k.startswith("f:") for k in sub):
            out |= _paths(sub, path)
        else:
            out.add(path)
    return out


def _value_paths(value: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    if isinstance(value, dict) and value:
        out: set[tuple[str, ...]] = set()
        for key, sub in value.items():
            out |= _value_paths(sub, (*prefix, key))
        return out
    return {prefix}


def _remove(obj: dict[str, Any], path: tuple[str, ...]) -> None:
    target: Any = obj
    for part in path[:-1]:
        target = target.get(part) if isinstance(target, dict) else None
        if target is None:
            return
    if isinstance(target, dict):
        target.pop(path[-1], None)


def server_side_apply(
    live: dict[str, Any], applied: dict[str, Any], manager: str, strategic: bool
) -> dict[str, Any]:
    applied = copy.deepcopy(applied)
    applied.pop("status", None) if live.get("kind") != "Scale" else None
    meta = applied.get("metadata") or {}
    for key in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"):
        meta.pop(key, None)
    entries = live["metadata"].get("managedFields") or []
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    others: set[tuple[str, ...]] = set()
    for e in entries:
        if e is not mine:
            others |= _paths(e.get("fieldsV1") or {})
    body = {k: v for k, v in applied.items() if k not in ("apiVersion", "kind")}
    merged = strategic_merge_patch(live, body) if strategic else merge_patch(live, body)
    if mine is not None:
        now = _value_paths({k: v for k, v in applied.items() if k not in ("apiVersion", "kind")})
        for path in _paths(mine.get("fieldsV1") or {}):
            if path[0] in ("metadata",) and len(path) < 3:
                continue
            if not any(path[: len(p)] == p or p[: len(path)] == path for p in now) and path not in others:
                _remove(merged, path)
    return merged


def _skip_meta(path: tuple[str, ...]) -> bool:
    """Identity and system metadata is never owned by a manager."""
    return path[0] in ("apiVersion", "kind") or (
        path[0] == "metadata"
        and (len(path) < 2 or path[1] not in ("labels", "annotations", "finalizers", "ownerReferences"))
    )


def owned_paths(obj: dict[str, Any], sub: str = "") -> set[tuple[str, ...]]:
    paths = {p for p in _value_paths(obj) if p and not _skip_meta(p)}
    if sub == "status":
        return {p for p in paths if p[0] == "status"}
    return {p for p in paths if p[0] != "status"} if sub == "" else paths


def changed_paths(old: dict[str, Any] | None, new: dict[str, Any], sub: str = "") -> set[tuple[str, ...]]:
    """Leaf paths whose value differs (set or changed) between `old` and `new`."""
    now = owned_paths(new, sub)
    if old is None:
        return now
    return {p for p in now if _get(old, p) != _get(new, p)}


def _get(obj: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(obj, dict) or part not in obj:
            return _MISSING
        obj = obj[part]
    return obj


_MISSING = object()


def to_fields_v1(paths: set[tuple[str, ...]]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path in sorted(paths):
        node = root
        for part in path:
            node = node.setdefault(f"f:{part}", {})
    return root


def fields_paths(fields: dict[str, Any]) -> set[tuple[str, ...]]:
    return _paths(fields)


def record_manager(
    entries: list[dict[str, Any]], entry: dict[str, Any], paths: set[tuple[str, ...]], replace: bool
) -> list[dict[str, Any]]:
    """Give `paths` to `entry`'s manager: strip them from the other managers (dropping emptied entries)."""
    key = (entry["manager"], entry["operation"], entry.get("subresource", ""))
    result = []
    mine = set(paths)
    for old in entries:
        old_key = (old.get("manager"), old.get("operation"), old.get("subresource", ""))
        owned = fields_paths(old.get("fieldsV1") or {})
        if old_key == key:
            if not replace:
                mine |= {p for p in owned if not any(p[: len(q)] == q or q[: len(p)] == p for q in paths)}
            continue
        kept = {p for p in owned if not any(p[: len(q)] == q or q[: len(p)] == p for q in paths)}
        if kept:
            result.append({**old, "fieldsV1": to_fields_v1(kept)})
    if mine:
        result.append({**entry, "fieldsV1": to_fields_v1(mine)})
    return result
