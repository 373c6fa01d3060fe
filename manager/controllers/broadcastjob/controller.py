"""Wiring of the BroadcastJob controller: informers for jobs, pods and nodes, and the expectations.

Pods are expected and observed by the node they are bound to (a created pod's name is generated,
its node is known up front, and a job runs at most one pod per node), as upstream does. A pod's
add event observes its creation (or its deletion, if it arrives already terminating) and its
delete event observes the deletion. Node events wake the jobs whose pods would newly fit or stop
fitting (:mod:`kruise.control.broadcastjob.nodeevents`).
"""

from __future__ import annotations

from typing import Any

from kruise.api import broadcastjob as api
from kruise.api.objects import meta_of, spec_of
from kruise.control.broadcastjob.nodeevents import is_heartbeat, wakes_on_add, wakes_on_update
from kruise.control.broadcastjob.pods import assigned_node
from kruise.kube.controller import Controller, enqueue_object, enqueue_owner
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import BROADCASTJOBS, NODES, PODS, object_key
from kruise.kube.store import DeletedFinalStateUnknown, unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.broadcastjob.reconciler import BroadcastJobReconciler

NAME = "broadcastjob"
RECORDER = "broadcastjob-controller"

owner_key = enqueue_owner(api.KIND, api.GROUP)


def build(ctx: ManagerContext) -> Controller:
    jobs = ctx.informers.informer(BROADCASTJOBS)
    pods = ctx.informers.informer(PODS)
    nodes = ctx.informers.informer(NODES)
    expectations = ScaleExpectations(ctx.clock, ctx.expectation_timeout)
    rv_expectations = ResourceVersionExpectations(ctx.clock, ctx.expectation_timeout)
    reconciler = BroadcastJobReconciler(
        ctx.client,
        ctx.recorder(RECORDER),
        jobs=jobs,
        pods=pods,
        nodes=nodes,
        expectations=expectations,
        wall=ctx.clock.wall,
        clock=ctx.clock,
        by_scheduler=ctx.assign_bcj_pods_by_scheduler,
        rv_expectations=rv_expectations,
    )
    controller = Controller(NAME, reconciler, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(jobs, enqueue_object)

    def pod_added(pod: dict[str, Any]) -> None:
        action = ScaleExpectations.DELETE if _terminating(pod) else ScaleExpectations.CREATE
        for key in owner_key(pod):
            expectations.observe(key, action, assigned_node(pod))
            controller.queue.add(key)

    def pod_updated(old: dict[str, Any], new: dict[str, Any]) -> None:
        for key in set(owner_key(old)) | set(owner_key(new)):
            controller.queue.add(key)

    def pod_deleted(obj: dict[str, Any] | DeletedFinalStateUnknown) -> None:
        pod = unwrap_tombstone(obj)
        rv_expectations.delete(meta_of(pod).get("uid", ""))
        for key in owner_key(pod):
            expectations.observe(key, ScaleExpectations.DELETE, assigned_node(pod))
            controller.queue.add(key)

    pods.add_event_handler(on_add=pod_added, on_update=pod_updated, on_delete=pod_deleted)

    def node_added(node: dict[str, Any]) -> None:
        for job in _jobs(jobs):
            if wakes_on_add(_template(job), node):
                controller.queue.add(object_key(job))

    def node_updated(old: dict[str, Any], new: dict[str, Any]) -> None:
        if is_heartbeat(old, new):
            return
        for job in _jobs(jobs):
            if wakes_on_update(_template(job), old, new):
                controller.queue.add(object_key(job))

    nodes.add_event_handler(on_add=node_added, on_update=node_updated)
    return controller


def _jobs(jobs: SharedInformer) -> list[dict[str, Any]]:
    return list(jobs.list())


def _template(job: dict[str, Any]) -> dict[str, Any]:
    """The job's pod template (the labels the controller adds do not change where it fits)."""
    return spec_of(job).get("template") or {}


def _terminating(pod: dict[str, Any]) -> bool:
    return bool(meta_of(pod).get("deletionTimestamp"))
