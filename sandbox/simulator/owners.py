"""Owner references and pod readiness helpers shared by the built-in controllers."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from kruise.sandbox.simulator.client import Obj
from kruise.sandbox.simulator.informer import Informer, key_of


def controller_of(obj: Obj) -> dict | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def owner_reference(owner: Obj, *, block: bool = True) -> Obj:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": block,
    }


def pod_from_template(owner: Obj, extra_labels: dict[str, str] | None = None) -> Obj:
    """A pod from ``owner``'s ``spec.template``, owned by it (kube's ``GetPodFromTemplate``)."""
    meta = owner["metadata"]
    template = copy.deepcopy((owner.get("spec") or {}).get("template") or {})
    pod_meta = template.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "generateName": f"{meta['name']}-",
            "namespace": meta["namespace"],
            "labels": {**(pod_meta.get("labels") or {}), **(extra_labels or {})},
            "annotations": dict(pod_meta.get("annotations") or {}),
            "ownerReferences": [owner_reference(owner)],
        },
        "spec": template.get("spec") or {},
    }


def owned_by(informer: Informer, owner: Obj) -> list[Obj]:
    """Objects in ``informer`` whose controller reference is ``owner`` (same namespace)."""
    uid = owner["metadata"]["uid"]
    namespace = owner["metadata"].get("namespace")
    return [
        obj
        for obj in informer.items()
        if obj["metadata"].get("namespace") == namespace and (controller_of(obj) or {}).get("uid") == uid
    ]


def is_terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_active(pod: Obj) -> bool:
    return not is_terminal(pod) and not pod["metadata"].get("deletionTimestamp")


def ready_condition(pod: Obj) -> Obj | None:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition
    return None


def is_ready(pod: Obj) -> bool:
    condition = ready_condition(pod)
    return condition is not None and condition.get("status") == "True"


def available_in(pod: Obj, min_ready_seconds: int, now: datetime | None = None) -> float | None:
    """0 if the pod is available now, seconds until it will be if ready, None if not ready."""
    condition = ready_condition(pod)
    if condition is None or condition.get("status") != "True":
        return None
    if min_ready_seconds <= 0:
        return 0.0
    stamp = condition.get("lastTransitionTime")
    if not stamp:
        return 0.0
    since = datetime.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    elapsed = ((now or datetime.now(UTC)) - since).total_seconds()
    return max(0.0, min_ready_seconds - elapsed)


def remember(informer: Informer, obj: Obj) -> None:
    """Put our own write (a create/update response) into the cache so the next pass sees it.

    Only if it is news to the cache: not when the cache holds a newer copy, and not when the
    watch has already gone past this version without the object (it was deleted since; putting
    it back would leave a phantom that no later event removes).
    """
    key = key_of(obj)
    cached = informer.get(key)
    try:
        version = int(obj["metadata"]["resourceVersion"])
        if cached is not None and version <= int(cached["metadata"]["resourceVersion"]):
            return
    except (KeyError, ValueError):
        return
    if cached is None and informer.has_seen(version):
        return
    informer.store[key] = obj


def remember_deletion(informer: Informer, answer: Obj) -> None:
    """Put a pod DELETE's answer into the cache: a pod marked for deletion stays (terminating),
    one removed at once (unbound pods have no grace period) leaves the cache now."""
    if answer.get("kind") != "Pod":
        return  # a Status reply: nothing to record
    if answer["metadata"].get("deletionTimestamp"):
        remember(informer, answer)
        return
    key = key_of(answer)
    cached = informer.get(key)
    try:
        if cached is not None and int(cached["metadata"]["resourceVersion"]) <= int(
            answer["metadata"]["resourceVersion"]
        ):
            del informer.store[key]
    except (KeyError, ValueError):
        return
