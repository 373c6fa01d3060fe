"""Wake-ups for orphan pods: a pod with no controller reference that appears, or whose labels or
controller change, wakes every owner of its namespace that would adopt it (upstream's
``getPodDaemonSets`` / ``getPodStatefulSets`` on an orphan's add and update events), so the
adoption does not wait for an unrelated event. No expectation is observed: nobody waits for an
orphan. Shared by the controllers that adopt (Advanced DaemonSet, Advanced StatefulSet).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api.controllerref import controller_of
from kruise.api.objects import Obj
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import object_key
from kruise.kube.store import NAMESPACE_INDEX

WouldAdopt = Callable[[Obj, Obj], bool]
"""``(owner, pod)``: does this owner's selection (selector and any filter) take the pod? May raise
ValueError for an owner with a malformed selector, which then is skipped."""


def watch_orphans(
    controller: Controller, pods: SharedInformer, owners: SharedInformer, would_adopt: WouldAdopt
) -> None:
    def wake_adopters(pod: dict[str, Any]) -> None:
        meta = pod.get("metadata") or {}
        if controller_of(pod) is not None or meta.get("deletionTimestamp"):
            return
        for owner in owners.by_index(NAMESPACE_INDEX, meta.get("namespace", "")):
            try:
                selected = would_adopt(owner, pod)
            except ValueError:
                continue
            if selected:
                controller.queue.add(object_key(owner))

    def orphan_updated(old: dict[str, Any], new: dict[str, Any]) -> None:
        old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
        if old_meta.get("labels") != new_meta.get("labels") or controller_of(old) != controller_of(new):
            wake_adopters(new)

    pods.add_event_handler(on_add=wake_adopters, on_update=orphan_updated)
