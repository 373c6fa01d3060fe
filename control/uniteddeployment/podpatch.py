"""Strategic merge of a subset's `patch` into a pod template, as the apiserver merges a PodTemplateSpec.

A subset patch is a partial PodTemplateSpec (say `{"metadata":{"labels":{"zone":"a"}},
"spec":{"containers":[{"name":"main","resources":{...}}]}}`): maps merge, lists that Kubernetes
declares with a merge key (containers by name, env by name, volumes by name, ...) merge item by item,
every other list is replaced; `null` deletes a field and `$patch: replace|delete` work as in kubectl.
"""

from __future__ import annotations

import copy
from typing import Any

# PodTemplateSpec lists with patchStrategy=merge, by field name; "" merges primitives as a set.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "env": "name",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "finalizers": "",
}


class PatchError(ValueError):
    """The subset patch is not a strategic merge patch of a pod template."""


def _merge_key(field: str, parents: tuple[str, ...]) -> str | None:
    if field == "ports":
        containers = ("containers", "initContainers", "ephemeralContainers")
        return "containerPort" if parents and parents[-1] in containers else None
    return MERGE_KEYS.get(field)


def patch_pod_template(template: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """A new template: `template` with `patch` strategically merged in (the input is not modified)."""
    if not isinstance(patch, dict):
        raise PatchError(f"patch: Invalid value: must be an object, got {type(patch).__name__}")
    return _merge_map(copy.deepcopy(template), patch, ())


def _merge_map(target: dict[str, Any], patch: dict[str, Any], parents: tuple[str, ...]) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            target[key] = _merge_map(
                dict(current) if isinstance(current, dict) else {}, value, (*parents, key)
            )
        elif isinstance(value, list):
            target[key] = _merge_list(target.get(key), value, key, parents)
        else:
            target[key] = copy.deepcopy(value)
    return target


def _merge_list(current: Any, patch: list[Any], field: str, parents: tuple[str, ...]) -> list[Any]:
    key = _merge_key(field, parents)
    if key is None or not isinstance(current, list):
        return [copy.deepcopy(v) for v in patch if not (isinstance(v, dict) and v.get("$patch") == "delete")]
    if key == "":
        merged = list(current)
        for value in patch:
            if value not in merged:
                merged.append(copy.deepcopy(value))
        return merged
    merged = [copy.deepcopy(item) for item in current]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(f"patch: Invalid value: items of {field} need the merge key {key!r}")
        index = next(
            (i for i, old in enumerate(merged) if isinstance(old, dict) and old.get(key) == item[key]),
            None,
        )
        if item.get("$patch") == "delete":
            if index is not None:
                merged.pop(index)
            continue
        if index is None:
            merged.append(_merge_map({}, item, (*parents, field)))
        else:
            merged[index] = _merge_map(merged[index], item, (*parents, field))
    return merged
