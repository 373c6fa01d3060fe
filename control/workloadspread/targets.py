"""Which WorkloadSpread a new pod belongs to: its `targetRef` names the pod's controller, or the
controller's controller (a Deployment through its ReplicaSet), and its `targetFilter` selects the
pod's labels. Owners are looked up through a callable so the webhook answers from its caches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kruise.api.controllerref import controller_of
from kruise.api.objects import labels_of, meta_of, section, spec_of, status_of
from kruise.control.sidecarset.matching import SelectorError, selector_matches
from kruise.control.workloadspread.whitelist import ReplicasPathError, Whitelist, replicas_at

OwnerLookup = Callable[[Mapping[str, Any], str], Mapping[str, Any] | None]
"""(ownerReference, namespace) → the owner object, or None when it does not exist."""

# Kinds whose pods a WorkloadSpread may govern, with the API groups each may come from.
WORKLOAD_GROUPS: dict[str, tuple[str, ...]] = {
    "Deployment": ("apps",),
    "CloneSet": ("apps.kruise.io",),
    "ReplicaSet": ("apps",),
    "Job": ("batch",),
    "StatefulSet": ("apps", "apps.kruise.io"),
}


class OwnerNotFound(LookupError):
    """An owner on the pod's controller chain is not known (yet): upstream fails the admission so
    the workload controller retries, rather than admit a pod its WorkloadSpread never saw."""


MAX_OWNER_DEPTH = 8
"""Owner chains are short (pod → ReplicaSet → Deployment); a cycle must not loop forever."""


def group_of(api_version: str) -> str:
    """The group of `group/version` ("" for the core `v1`)."""
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def is_workload(ref: Mapping[str, Any], extra: Iterable[tuple[str, str]] = ()) -> bool:
    """Whether the reference is a kind WorkloadSpread handles; `extra` holds whitelisted (group, kind)."""
    kind, group = ref.get("kind", ""), group_of(ref.get("apiVersion", ""))
    if group in WORKLOAD_GROUPS.get(kind, ()):
        return True
    return (group, kind) in set(extra)


def references(
    target: Mapping[str, Any],
    owner: Mapping[str, Any] | None,
    namespace: str,
    lookup: OwnerLookup,
    extra: Iterable[tuple[str, str]] = (),
) -> bool:
    """Whether `target` is `owner` or an ancestor of it along controller references.

    Raises OwnerNotFound when the chain runs into a workload `lookup` does not know."""
    extra = tuple(extra)
    for _ in range(MAX_OWNER_DEPTH):
        if owner is None:
            return False
        same = (
            group_of(target.get("apiVersion", "")) == group_of(owner.get("apiVersion", ""))
            and target.get("kind") == owner.get("kind")
            and target.get("name") == owner.get("name")
        )
        if same:
            return True
        if not is_workload(owner, extra):
            return False
        parent = lookup(owner, namespace)
        if parent is None:
            raise OwnerNotFound(f"{owner.get('kind')} {namespace}/{owner.get('name')} not found")
        owner = controller_of(parent)
    return False


def pod_selected(ws: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """`targetFilter` absent selects every pod; a filter without selector selects none."""
    target_filter = spec_of(ws).get("targetFilter")
    if target_filter is None:
        return True
    labels = labels_of(pod)
    return selector_matches(target_filter.get("selector"), labels)


def is_active(pod: Mapping[str, Any]) -> bool:
    phase = status_of(pod).get("phase")
    return phase not in ("Succeeded", "Failed") and not meta_of(pod).get("deletionTimestamp")


def matching_spread(
    pod: Mapping[str, Any],
    spreads: Sequence[Mapping[str, Any]],
    lookup: OwnerLookup,
    extra: Iterable[tuple[str, str]] = (),
) -> Mapping[str, Any] | None:
    """The WorkloadSpread governing a new pod (the first that matches), or None.

    A finished or deleting pod, a pod without a controller, or one whose controller is not a
    workload kind is governed by none. A WorkloadSpread being deleted or with an invalid filter is
    skipped. OwnerNotFound propagates (see `references`).
    """
    extra = tuple(extra)
    owner = controller_of(pod)
    if not is_active(pod) or owner is None or not is_workload(owner, extra):
        return None
    namespace = meta_of(pod).get("namespace") or ""
    for ws in spreads:
        target = spec_of(ws).get("targetRef")
        if not target or meta_of(ws).get("deletionTimestamp"):
            continue
        if not references(target, owner, namespace, lookup, extra):
            continue
        try:
            if pod_selected(ws, pod):
                return ws
        except SelectorError:
            continue
    return None


def _path_value(obj: Any, path: str) -> int:
    """An integer at a dotted path (list indexes as numbers); absent → 0, like upstream's NestedField
    errors which it reports and counts as nothing."""
    for part in path.split("."):
        if isinstance(obj, Mapping) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
            obj = obj[int(part)]
        else:
            return 0
    return obj if isinstance(obj, int) and not isinstance(obj, bool) else 0


def is_builtin_target(target: Mapping[str, Any]) -> bool:
    """Whether a targetRef names one of the built-in workload kinds (not a whitelisted custom one)."""
    groups = WORKLOAD_GROUPS.get(str(target.get("kind") or ""), ())
    return group_of(str(target.get("apiVersion") or "")) in groups


def workload_replicas(
    ws: Mapping[str, Any], workload: Mapping[str, Any] | None, whitelist: Whitelist | None = None
) -> int:
    """The replicas percentages refer to: the sum of `targetFilter.replicasPathList` when given,
    else `spec.parallelism` of a Job and `spec.replicas` of another built-in workload, else (a
    whitelisted custom workload) the value at its `replicasPath`; 0 when unknown. A replicasPath
    that does not lead to an integer counts 0, as upstream's webhook reports and ignores it."""
    if workload is None:
        return 0
    paths = section(ws, "spec", "targetFilter").get("replicasPathList") or []
    if paths:
        return sum(_path_value(workload, p) for p in paths)
    target = spec_of(ws).get("targetRef") or {}
    if target and not is_builtin_target(target):
        path = (whitelist or Whitelist()).replicas_path(
            group_of(str(target.get("apiVersion") or "")), str(target.get("kind") or "")
        )
        try:
            return replicas_at(workload, path or "")
        except ReplicasPathError:
            return 0
    field = "parallelism" if workload.get("kind") == "Job" else "replicas"
    value = spec_of(workload).get(field)
    return value if isinstance(value, int) else 0
