"""Wiring of the ContainerRecreateRequest controller: request events wake the request, and a pod's
metadata changes (deletion, a new UID behind the name) wake every request naming that pod."""

from __future__ import annotations

from typing import Any

from kruise.api.objects import spec_of
from kruise.kube.controller import Controller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS, object_key
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.containerrecreaterequest.reconciler import ContainerRecreateRequestReconciler

NAME = "containerrecreaterequest"


def requests_of_pod(requests: SharedInformer, pod: dict[str, Any]) -> list[str]:
    """Keys of the requests in the pod's namespace whose `spec.podName` is this pod."""
    namespace = pod["metadata"].get("namespace", "")
    return [
        object_key(r)
        for r in requests.by_index(NAMESPACE_INDEX, namespace)
        if spec_of(r).get("podName") == pod["metadata"]["name"]
    ]


def metadata_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    return old["metadata"] != new["metadata"]


def build(ctx: ManagerContext) -> Controller:
    requests = ctx.informers.informer(CONTAINER_RECREATE_REQUESTS)
    pods = ctx.informers.informer(PODS)
    reconciler = ContainerRecreateRequestReconciler(
        ctx.client, requests=requests, pods=pods, wall=ctx.clock.wall
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(requests)
    controller.watch(pods, lambda pod: requests_of_pod(requests, pod), update_filter=metadata_changed)
    return controller
