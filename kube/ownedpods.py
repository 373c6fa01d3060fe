"""Pod events of a controller that creates and deletes its own pods (CloneSet, Advanced StatefulSet, Advanced
DaemonSet): wake the owner, and mark the owner's expectations observed.

A pod that appears counts as an observed creation, one that starts terminating or disappears as an observed
deletion (upstream's handlers treat a terminating pod as deleted), and every update feeds the
resourceVersion expectations of pods the controller just wrote. Written once so that the controllers cannot
drift apart on this bookkeeping, which is what keeps a reconcile from acting twice on a stale cache.
"""

from __future__ import annotations

from collections.abc import Callable

from kruise.api.objects import MutableObj, meta_of
from kruise.kube.controller import Controller
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.store import DeletedFinalStateUnknown, unwrap_tombstone


def pod_name(pod: MutableObj) -> str:
    return pod["metadata"]["name"]


def terminating(pod: MutableObj) -> bool:
    return bool(meta_of(pod).get("deletionTimestamp"))


def watch_owned_pods(
    controller: Controller,
    pods: SharedInformer,
    owner_keys: Callable[[MutableObj], list[str]],
    scale_expectations: ScaleExpectations,
    rv_expectations: ResourceVersionExpectations,
    *,
    creation_name: Callable[[MutableObj], str] = pod_name,
) -> None:
    """`creation_name` is the name a creation was expected under: the pod's name, or — for pods created
    with generateName, whose name is known only after the create — what the controller keyed it by (the
    DaemonSet's target node)."""

    def added(pod: MutableObj) -> None:
        for key in owner_keys(pod):
            if terminating(pod):
                scale_expectations.observe(key, ScaleExpectations.DELETE, pod_name(pod))
            else:
                scale_expectations.observe(key, ScaleExpectations.CREATE, creation_name(pod))
            controller.queue.add(key)

    def updated(old: MutableObj, new: MutableObj) -> None:
        rv_expectations.observe(new)
        for key in set(owner_keys(old)) | set(owner_keys(new)):
            if terminating(new):
                scale_expectations.observe(key, ScaleExpectations.DELETE, pod_name(new))
            controller.queue.add(key)

    def deleted(obj: MutableObj | DeletedFinalStateUnknown) -> None:
        pod = unwrap_tombstone(obj)
        for key in owner_keys(pod):
            scale_expectations.observe(key, ScaleExpectations.DELETE, pod_name(pod))
            controller.queue.add(key)

    pods.add_event_handler(on_add=added, on_update=updated, on_delete=deleted)
