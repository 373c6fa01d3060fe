"""Wiring of the EphemeralJob controller.

A job wakes on its creation, on deletion starting and on changes of ttlSecondsAfterFinished, paused,
parallelism or replicas (upstream's filter). A pod wakes every job in its namespace whose non-empty
selector matches it when it is created or deleted and whenever its ephemeral containers or their
statuses change; seeing a job's container in the pod settles that job's create expectation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kruise.api.objects import MutableObj, meta_of, spec_of
from kruise.control.ephemeraljob import injection
from kruise.kube.controller import Controller
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import EPHEMERALJOBS, PODS, object_key
from kruise.kube.store import NAMESPACE_INDEX, unwrap_tombstone
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.ephemeraljob.reconciler import EphemeralJobReconciler

NAME = "ephemeraljob"
COMPONENT = "ephemeraljob-controller"
UPSTREAM_WORKERS = 10  # upstream runs this controller with a fixed 10 concurrent reconciles


_WATCHED_SPEC = ("ttlSecondsAfterFinished", "paused", "parallelism", "replicas")


def job_changed(old: MutableObj, new: MutableObj) -> bool:
    if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
        return False
    if new["metadata"].get("deletionTimestamp"):
        return True
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    return any(old_spec.get(k) != new_spec.get(k) for k in _WATCHED_SPEC)


def pod_handlers(
    jobs: SharedInformer, expectations: ScaleExpectations, enqueue: Callable[[str], None]
) -> dict[str, Any]:
    def wake(pod: MutableObj) -> None:
        namespace = meta_of(pod).get("namespace") or ""
        for job in jobs.by_index(NAMESPACE_INDEX, namespace):
            if not injection.selects(job, pod, empty_matches=False):
                continue
            key = object_key(job)
            if injection.contains_job_container(job, pod):
                for name in injection.expectation_names(job, pod):
                    expectations.observe(key, ScaleExpectations.CREATE, name)
            enqueue(key)

    def on_update(old: MutableObj, new: MutableObj) -> None:
        if old["metadata"].get("resourceVersion") == new["metadata"].get("resourceVersion"):
            return
        old_status, new_status = old.get("status") or {}, new.get("status") or {}
        if spec_of(old).get("ephemeralContainers") != spec_of(new).get(
            "ephemeralContainers"
        ) or old_status.get("ephemeralContainerStatuses") != new_status.get("ephemeralContainerStatuses"):
            wake(new)

    return {"on_add": wake, "on_update": on_update, "on_delete": lambda pod: wake(unwrap_tombstone(pod))}


def build(ctx: ManagerContext) -> Controller:
    jobs = ctx.informers.informer(EPHEMERALJOBS)
    pods = ctx.informers.informer(PODS)
    expectations = ScaleExpectations(ctx.clock, ctx.expectation_timeout)
    reconciler = EphemeralJobReconciler(
        ctx.client,
        jobs=jobs,
        pods=pods,
        recorder=ctx.recorder(COMPONENT),
        expectations=expectations,
        clock=ctx.clock,
    )
    workers = ctx.workers.get(NAME, UPSTREAM_WORKERS)
    controller = Controller(NAME, reconciler, workers=workers, clock=ctx.clock)
    controller.watch(jobs, update_filter=job_changed)
    pods.add_event_handler(**pod_handlers(jobs, expectations, controller.queue.add))
    return controller
