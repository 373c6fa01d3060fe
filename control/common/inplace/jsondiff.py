"""RFC 6902 diff in the shape of gomodules' ``jsonpatch.CreatePatch``, which upstream uses to
decide whether two revisions differ only in in-place-able fields.

Objects are diffed key by key, arrays index by index (extra tail elements become add/remove),
anything else that differs is a ``replace``. Only the *paths* and *operations* matter to callers.
"""

from __future__ import annotations

from typing import Any


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def create_patch(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for key in sorted(old.keys() | new.keys()):
            child = f"{path}/{_escape(key)}"
            if key not in new:
                ops.append({"op": "remove", "path": child})
            elif key not in old:
                ops.append({"op": "add", "path": child, "value": new[key]})
            else:
                ops += create_patch(old[key], new[key], child)
        return ops
    if isinstance(old, list) and isinstance(new, list):
        ops = []
        for i in range(min(len(old), len(new))):
            ops += create_patch(old[i], new[i], f"{path}/{i}")
        for i in range(len(old), len(new)):
            ops.append({"op": "add", "path": f"{path}/{i}", "value": new[i]})
        for i in reversed(range(len(new), len(old))):
            ops.append({"op": "remove", "path": f"{path}/{i}"})
        return ops
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": path, "value": new}]


def merge_patch(old: Any, new: Any) -> Any:
    """RFC 7386 merge patch turning ``old`` into ``new`` (maps merge, removed keys become null);
    equivalent to the strategic two-way patch for the metadata maps upstream diffs."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return new
    patch: dict[str, Any] = {}
    for key in old.keys() | new.keys():
        if key not in new:
            patch[key] = None
        elif key not in old:
            patch[key] = new[key]
        elif old[key] != new[key]:
            patch[key] = merge_patch(old[key], new[key])
    return patch


def apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge recursively, `null` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result
