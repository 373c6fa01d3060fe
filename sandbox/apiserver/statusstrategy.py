"""What a write to `/status` may change, kind by kind: the status strategies' PrepareForUpdate.

kube-apiserver gives each kind with a status subresource its own status strategy, and they do not
agree on metadata. A status write stores the body with these parts put back from the stored object
(everything else in the body, metadata included, is what gets stored — absent means removed):

- custom resources (apiextensions `statusStrategy`): the stored object with only `status` taken from
  the body — spec, labels, annotations, finalizers, ownerReferences in the body are all ignored;
- CustomResourceDefinition: spec, labels, annotations, ownerReferences;
- Pod: spec, ownerReferences and deletionTimestamp (labels, annotations, finalizers are written);
- Deployment: spec and labels;
- every other built-in kind served here (ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, Node,
  Namespace, PersistentVolumeClaim, Service, PodDisruptionBudget, Ingress): spec only.

Nothing is refused for carrying a changed spec; it is silently replaced. rest.BeforeUpdate then puts
back what no update may change (generation, creationTimestamp, a set deletionTimestamp), which the
caller already does for every update.
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.sandbox.apiserver.resources import ResourceType

_SPEC_ONLY: tuple[str, ...] = ("spec",)

# (group, plural) -> the paths PrepareForUpdate resets from the stored object; "metadata.x" is a
# metadata field, anything else a top-level field.
_RESETS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("spec", "metadata.ownerReferences", "metadata.deletionTimestamp"),
    ("apps", "deployments"): ("spec", "metadata.labels"),
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        "spec",
        "metadata.labels",
        "metadata.annotations",
        "metadata.ownerReferences",
    ),
}


def reset_paths(rt: ResourceType) -> tuple[str, ...] | None:
    """The parts a status write of `rt` keeps from the stored object; None means all but status."""
    if rt.is_custom:
        return None
    return _RESETS.get(rt.key, _SPEC_ONLY)


def prepare_status_update(rt: ResourceType, obj: dict[str, Any], old: dict[str, Any]) -> None:
    """Rewrite `obj` (the body of a status write, already past admission) in place into what is stored."""
    paths = reset_paths(rt)
    if paths is None:
        status, has_status = obj.get("status"), "status" in obj
        managed = (obj.get("metadata") or {}).get("managedFields")
        obj.clear()
        obj.update(copy.deepcopy(old))
        if managed is not None:  # the request's managedFields track the status change
            obj["metadata"]["managedFields"] = managed
        if has_status:
            obj["status"] = status
        else:
            obj.pop("status", None)
        return
    meta = obj.setdefault("metadata", {})
    for path in paths:
        where, key = (meta, path.split(".", 1)[1]) if path.startswith("metadata.") else (obj, path)
        source = old.get("metadata") or {} if where is meta else old
        if key in source:
            where[key] = copy.deepcopy(source[key])
        else:
            where.pop(key, None)
