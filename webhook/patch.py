"""JSONPatch (RFC 6902) between the admitted object and the handler's mutated copy.

The apiserver only needs a patch that turns one into the other, not a minimal one, so lists that
changed length are appended to when the old list is a prefix and otherwise replaced whole. That
keeps the diff linear: the `jsonpatch` library's list matching was most of the cost of admitting a
pod that 10 SidecarSets inject into (about 3 ms of 4.5 ms).

Most of an admitted object comes back unchanged, so equal subtrees are skipped after a comparison
done in C (`==`, then orjson bytes to tell `1`, `1.0` and `true` apart) instead of walked in Python.
"""

from __future__ import annotations

from typing import Any

import orjson


def _token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `1`, `1.0` and `true` are different values to a JSON document."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _unchanged(a: Any, b: Any) -> bool:
    """`_same`, fast for the common case. Python's `==` is JSON equality but for numbers and booleans
    (`1 == 1.0 == True`), which the serialized bytes tell apart; bytes that differ only in key order
    fall back to the walk."""
    if type(a) is not type(b) or a != b:
        return False
    if not isinstance(a, (dict, list)):
        return True
    try:
        if orjson.dumps(a) == orjson.dumps(b):
            return True
    except (TypeError, orjson.JSONEncodeError):  # not plain JSON (e.g. an int beyond 64 bits)
        pass
    return _same(a, b)


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_token(key)}"})
        for key, value in new.items():
            if key not in old:
                ops.append({"op": "add", "path": f"{path}/{_token(key)}", "value": value})
            elif not _unchanged(old[key], value):
                _diff(old[key], value, f"{path}/{_token(key)}", ops)
        return
    if isinstance(old, list) and isinstance(new, list):
        if len(old) == len(new):
            for i, (a, b) in enumerate(zip(old, new, strict=True)):
                if not _unchanged(a, b):
                    _diff(a, b, f"{path}/{i}", ops)
            return
        if len(old) < len(new) and _same(old, new[: len(old)]):
            ops.extend(
                {"op": "add", "path": f"{path}/{i}", "value": new[i]} for i in range(len(old), len(new))
            )
            return
    if not _same(old, new):
        ops.append({"op": "replace", "path": path or "", "value": new})


def make_patch(original: Any, mutated: Any) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    _diff(original, mutated, "", ops)
    return ops
