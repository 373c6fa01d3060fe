"""Conversion between the served versions of a Kruise kind (what `/convert` answers).

`convert(obj, to_version)` takes one object as JSON and returns it in `to_version`. Each kind's
module holds a plain field mapping in both directions (`to_v1beta1`, `to_v1alpha1`); this module
wraps it so that round trips are lossless (see `lossless`), and checks the apiVersion and kind.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from types import ModuleType
from typing import Any

from kruise.api.conversion import (
    advancedcronjob,
    broadcastjob,
    cloneset,
    crr,
    daemonset,
    imagelistpulljob,
    imagepulljob,
    nodeimage,
    persistentpodstate,
    pub,
    resourcedistribution,
    sidecarset,
    statefulset,
    uniteddeployment,
    workloadspread,
)
from kruise.api.conversion.errors import ConversionError
from kruise.api.conversion.lossless import STASH_ANNOTATION, apply, diff, pop_stash, put_stash

__all__ = ["STASH_ANNOTATION", "VERSIONS", "ConversionError", "convert", "convertible"]

VERSIONS = ("v1alpha1", "v1beta1")

_MODULES: tuple[ModuleType, ...] = (
    daemonset,
    sidecarset,
    broadcastjob,
    advancedcronjob,
    cloneset,
    statefulset,
    imagepulljob,
    imagelistpulljob,
    nodeimage,
    crr,
    pub,
    uniteddeployment,
    persistentpodstate,
    resourcedistribution,
    workloadspread,
)
_BY_KIND: dict[tuple[str, str], ModuleType] = {(m.GROUP, m.KIND): m for m in _MODULES}


def convertible(group: str, kind: str) -> bool:
    """Whether `kind.group` has a v1alpha1 <-> v1beta1 conversion here."""
    return (group, kind) in _BY_KIND


def _target(to_version: str, group: str) -> str:
    """`to_version` may be a bare version or group/version (ConversionReview's desiredAPIVersion)."""
    target_group, _, version = to_version.rpartition("/")
    if target_group and target_group != group:
        raise ConversionError("desiredAPIVersion", f"cannot convert a {group} object to group {target_group}")
    if version not in VERSIONS:
        raise ConversionError("desiredAPIVersion", f"version {version!r} is not one of {', '.join(VERSIONS)}")
    return version


def _mapping(module: ModuleType, version: str) -> Callable[[dict[str, Any]], None]:
    return module.to_v1beta1 if version == "v1beta1" else module.to_v1alpha1


def convert(obj: dict[str, Any], to_version: str) -> dict[str, Any]:
    """`obj` in `to_version`; the input is not modified. Raises ConversionError naming the field."""
    if not isinstance(obj, dict):
        raise ConversionError("object", f"must be a JSON object, got {type(obj).__name__}")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or api_version.count("/") != 1:
        raise ConversionError("apiVersion", f"must be group/version, got {api_version!r}")
    if not isinstance(kind, str) or not kind:
        raise ConversionError("kind", f"must be a non-empty string, got {kind!r}")
    group, version = api_version.split("/")
    module = _BY_KIND.get((group, kind))
    if module is None:
        raise ConversionError("kind", f"{kind}.{group} has no conversion between versions")
    if version not in VERSIONS:
        raise ConversionError("apiVersion", f"version {version!r} is not one of {', '.join(VERSIONS)}")
    target = _target(to_version, group)
    if target == version:
        return copy.deepcopy(obj)
    target_api_version = f"{group}/{target}"

    source = copy.deepcopy(obj)
    stash_version, entries = pop_stash(source)
    result = copy.deepcopy(source)
    _mapping(module, target)(result)
    result["apiVersion"] = target_api_version
    if stash_version == target_api_version:
        apply(result, entries)

    back = copy.deepcopy(result)
    _mapping(module, version)(back)
    back["apiVersion"] = api_version
    put_stash(result, api_version, diff(source, back))
    return result
