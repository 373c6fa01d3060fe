"""Reading Kubernetes objects that arrive as plain JSON dicts.

Objects from the apiserver stay dicts (see the architecture doc), and any field of them may be
absent or ``null``. Walking them by hand (``((pod.get("metadata") or {}).get("labels") or {})``)
is how every layer used to do it, each spelling the same absent-or-null rule again; these small
accessors spell it once, with the same result as the hand walk: a missing, ``null`` or empty
section reads as an empty dict, a missing list as an empty list. They only read: a section that
is absent comes back as a fresh empty dict, so writing into it changes nothing (copy, then patch).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]
"""A Kubernetes object (or any part of one) as decoded JSON, read only: what caches and callers share."""

MutableObj = dict[str, Any]
"""An object this code builds, or has copied, and goes on to change (a cached `Obj` never is)."""


def section(obj: Obj | None, *path: str) -> Mapping[str, Any]:
    """The mapping at ``path``; ``{}`` where any step is missing, null or empty.

    ``section(x, "a", "b")`` is exactly ``((x.get("a") or {}).get("b") or {})``."""
    current: Any = obj or {}
    for key in path:
        current = current.get(key) or {}
    return current


def dig(obj: Obj | None, *path: str, default: Any = None) -> Any:
    """The value at ``path``, or ``default`` where any step is missing or null (a falsy value that is
    present, like ``0`` or ``""``, is returned as it is)."""
    *parents, last = path
    value = section(obj, *parents).get(last)
    return default if value is None else value


def items(obj: Obj | None, *path: str) -> list[Any]:
    """The list at ``path``; ``[]`` where it or any step before it is missing or null."""
    *parents, last = path
    return section(obj, *parents).get(last) or []


def meta_of(obj: Obj | None) -> Mapping[str, Any]:
    return section(obj, "metadata")


def spec_of(obj: Obj | None) -> Mapping[str, Any]:
    return section(obj, "spec")


def status_of(obj: Obj | None) -> Mapping[str, Any]:
    return section(obj, "status")


def name_of(obj: Obj | None) -> str:
    return meta_of(obj).get("name") or ""


def namespace_of(obj: Obj | None) -> str:
    return meta_of(obj).get("namespace") or ""


def uid_of(obj: Obj | None) -> str:
    return meta_of(obj).get("uid") or ""


def key_of(obj: Obj | None) -> str:
    """The cache and workqueue key: ``namespace/name``, or ``name`` for a cluster-scoped object."""
    namespace = namespace_of(obj)
    return f"{namespace}/{name_of(obj)}" if namespace else name_of(obj)


def labels_of(obj: Obj | None) -> Mapping[str, str]:
    return section(obj, "metadata", "labels")


def annotations_of(obj: Obj | None) -> Mapping[str, str]:
    return section(obj, "metadata", "annotations")


def owner_refs_of(obj: Obj | None) -> list[Mapping[str, Any]]:
    return items(obj, "metadata", "ownerReferences")


def is_deleting(obj: Obj | None) -> bool:
    """Whether the apiserver has stamped ``deletionTimestamp`` (the object waits for its finalizers)."""
    return bool(meta_of(obj).get("deletionTimestamp"))


def conditions_of(obj: Obj | None) -> list[Mapping[str, Any]]:
    """``status.conditions`` of an object."""
    return items(obj, "status", "conditions")


def template_of(workload: Obj | None) -> Mapping[str, Any]:
    """A workload's pod template (``spec.template``: a pod's metadata and spec, without the pod)."""
    return section(workload, "spec", "template")


def containers_of(pod: Obj | None) -> list[Mapping[str, Any]]:
    """``spec.containers`` of a pod or of a pod template (``containers_of(template_of(cloneset))``)."""
    return items(pod, "spec", "containers")


def init_containers_of(pod: Obj | None) -> list[Mapping[str, Any]]:
    return items(pod, "spec", "initContainers")


def container_statuses_of(pod: Obj | None) -> list[Mapping[str, Any]]:
    return items(pod, "status", "containerStatuses")


def find_named(entries: list[Mapping[str, Any]] | None, name: str) -> Mapping[str, Any] | None:
    """The entry called ``name`` of a list of named things (containers, statuses, volumes, env)."""
    return next((entry for entry in entries or [] if entry.get("name") == name), None)
