"""The three patch flavours the apiserver accepts besides apply.

Strategic merge is driven by a table of merge keys for the lists built-in kinds mark with
`patchStrategy:"merge"` in their Go types; every other list is replaced, as the real
strategic-merge code does for lists without a strategy.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from kruise.sandbox.apiserver.errors import StatusError

# field name -> merge key; "" means a set of primitives merged without duplicates.
_MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "env": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "conditions": "type",
    "ownerReferences": "uid",
    "finalizers": "",
    "addresses": "type",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "taints": "key",
    # admissionregistration's webhooks (listType=map, key name): a re-apply of the configuration
    # (`helm upgrade`) keeps the caBundle kruise-webhook patched into each entry, as on a real cluster
    "webhooks": "name",
    "containerStatuses": "",  # status lists are atomic in practice; overridden below
}
_ATOMIC = {"containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"}


def _merge_key(field: str, parents: tuple[str, ...]) -> str | None:
    if field in _ATOMIC:
        return None
    if field == "ports":
        return (
            "containerPort"
            if parents and parents[-1] in ("containers", "initContainers", "ephemeralContainers")
            else "port"
        )
    if field == "conditions" and parents and parents[-1] == "metadata":
        return None
    return _MERGE_KEYS.get(field)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise StatusError(
            400,
            "BadRequest",
            "json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp",
        )
    try:
        return jsonpatch.JsonPatch(ops).apply(target)
    except jsonpatch.JsonPatchTestFailed as exc:
        raise StatusError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {exc}"
        ) from None
    except (
        jsonpatch.JsonPatchException,
        jsonpatch.JsonPointerException,
        KeyError,
        IndexError,
        TypeError,
    ) as exc:
        raise StatusError(
            422, "Invalid", f"the server rejected our request due to an error in our request: {exc}"
        ) from None


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        raise StatusError(
            400, "BadRequest", "couldn't get version/kind; json parse error: expected an object"
        )
    return _smp_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch, ())


def _smp_map(target: dict[str, Any], patch: dict[str, Any], parents: tuple[str, ...]) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: v for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    retain = patch.get("$retainKeys")
    # The lists as the server had them: `$setElementOrder` keeps server-only items where they were.
    before = {
        key.split("/", 1)[1]: target.get(key.split("/", 1)[1])
        for key in patch
        if key.startswith("$setElementOrder/")
    }
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            drop = set(map(_hashable, value or []))
            target[field] = [v for v in target.get(field) or [] if _hashable(v) not in drop]
            continue
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            target[key] = _smp_map(current if isinstance(current, dict) else {}, value, (*parents, key))
            if target[key] == {} and value.get("$patch") == "delete":
                target.pop(key)
        elif isinstance(value, list):
            target[key] = _smp_list(target.get(key), value, key, parents)
        else:
            target[key] = value
    if isinstance(retain, list):
        keep = set(retain)
        for key in list(target):
            if key not in keep:
                del target[key]
    for key in patch:
        if key.startswith("$setElementOrder/"):
            field = key.split("/", 1)[1]
            _apply_order(target, field, patch[key], parents, before.get(field))
    return target


def _hashable(value: Any) -> Any:
    return repr(value) if isinstance(value, dict | list) else value


def _smp_list(current: Any, patch: list[Any], field: str, parents: tuple[str, ...]) -> list[Any]:
    key = _merge_key(field, parents)
    current = current if isinstance(current, list) else []
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [item for item in patch if not (isinstance(item, dict) and "$patch" in item)]
    if key is None:
        return copy.deepcopy(patch)
    if key == "":
        result = list(current)
        for item in patch:
            if item not in result:
                result.append(item)
        return result
    result = [copy.deepcopy(item) for item in current]
    for item in patch:
        if not isinstance(item, dict):
            result.append(item)
            continue
        if key not in item:
            raise StatusError(500, "InternalError", f"map: {item} does not contain declared merge key: {key}")
        idx = next(
            (i for i, old in enumerate(result) if isinstance(old, dict) and old.get(key) == item[key]), None
        )
        if item.get("$patch") == "delete":
            if idx is not None:
                result.pop(idx)
            continue
        if idx is None:
            result.append(_smp_map({}, item, (*parents, field)))
        else:
            result[idx] = _smp_map(result[idx], item, (*parents, field))
    return result


def _apply_order(
    target: dict[str, Any], field: str, order: list[Any], parents: tuple[str, ...], before: Any
) -> None:
    """`$setElementOrder`, as the apiserver's normalizeElementOrder: the items the order list names
    are put in its order, and items only the server has keep their place among them — an item
    injected in front of the containers (a sidecar) stays in front, it is not moved behind them.

    Both groups keep their own order (named ones by the order list, server-only ones by the list
    as it was before the patch); they are interleaved by mergeSortedSlice: a server-only item goes
    before a named one when the server's list had it earlier, otherwise the named one goes first.
    """
    items = target.get(field)
    if not isinstance(items, list):
        return
    key = _merge_key(field, parents)

    def ident(item: Any) -> Any:
        return _hashable(item.get(key) if key and isinstance(item, dict) else item)

    wanted: dict[Any, int] = {}
    for i, entry in enumerate(order if isinstance(order, list) else []):
        wanted.setdefault(ident(entry), i)
    server: dict[Any, int] = {}
    for i, entry in enumerate(before if isinstance(before, list) else []):
        server.setdefault(ident(entry), i)
    named = sorted((it for it in items if ident(it) in wanted), key=lambda it: wanted[ident(it)])
    server_only = sorted(
        (it for it in items if ident(it) not in wanted), key=lambda it: server.get(ident(it), -1)
    )
    target[field] = _interleave(server_only, named, lambda it: server.get(ident(it)))


def _interleave(left: list[Any], right: list[Any], position: Any) -> list[Any]:
    """mergeSortedSlice: merge two ordered lists; `left` wins only when both items have a
    position in the server's list and the left one's is earlier."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = position(left[i]), position(right[j])
            if li is not None and ri is not None and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out
