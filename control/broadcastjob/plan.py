"""One reconcile of a BroadcastJob as data: pods to delete and create, the status, events, requeue.

The controller lists nodes and the job's pods, calls :func:`plan_reconcile`, and carries the
plan out in upstream's order:

1. ``delete_job``: the job finished and its ``ttlSecondsAfterFinished`` has passed — delete it, stop.
   A finished job (condition Complete or Failed True, completion policy not Never) is otherwise
   left alone; ``status`` is None then.
2. record ``events`` (duplicates found, ``Continue``, ``Paused``, the FailFast warning,
   ``TooManyActivePods``);
3. delete ``deletes`` (record ``SuccessfulDelete`` "Delete pod: X" for each deleted);
4. create ``creates`` in slow-start batches 1, 2, 4 … stopping after a batch with an error when
   pods remain (``SuccessfulCreate`` "Created pod: X" / ``FailedCreate`` "Error creating: …");
5. ``settle(deleted, created)`` gives the status to write (to the status subresource) and the
   closing events (the failure reason, or ``JobComplete``), counted as upstream counts: every
   deleted pod moves from active to failed — also an unfit node's pod — and every create that was
   attempted (not timed out) adds to active;
6. if ``error`` is set (a bad ``parallelism``) return it after the status write, so the key backs
   off; else requeue after ``requeue_after`` when set.

Upstream's FailurePolicy Pause sets ``spec.paused`` on its in-memory copy but writes only the
status, so only ``phase: paused`` persists: ``pause_requested`` says the policy fired, the
reconciler decides what to write. Conditions carry the condition type as their reason
("Complete" / "Failed"); the specific cause (``DeadlineExceeded``, "failed pod is found") is the
reason of the Warning event, as upstream records it.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kruise.api import broadcastjob as api
from kruise.api.objects import Obj, meta_of, section
from kruise.api.timestamps import parse_time, rfc3339
from kruise.control.broadcastjob.fitness import mock_pod_spec, unfit_reason
from kruise.control.broadcastjob.pods import (
    assigned_node,
    group_pods,
    is_deleting,
    is_pod_active,
    job_labels,
    new_pod,
    owned_pods,
    pod_name,
)
from kruise.control.common.nodeeligibility import node_name

EVENT_NORMAL = "Normal"
EVENT_WARNING = "Warning"

REASON_CONTINUE = "Continue"
REASON_PAUSED = "Paused"
REASON_DUPLICATE_POD = "DuplicatePodCreatedOnSameNode"
REASON_TOO_MANY_ACTIVE = "TooManyActivePods"
REASON_JOB_COMPLETE = "JobComplete"
REASON_FAILED_POD_FOUND = "failed pod is found"
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
REASON_SUCCESSFUL_CREATE = "SuccessfulCreate"
REASON_FAILED_CREATE = "FailedCreate"
REASON_SUCCESSFUL_DELETE = "SuccessfulDelete"

MESSAGE_FAIL_FAST = "failure policy is FailurePolicyTypeFailFast and failed pod is found"


@dataclass(frozen=True)
class Event:
    type: str
    reason: str
    message: str


class DeletionCause(enum.StrEnum):
    JOB_FAILED = "JobFailed"
    """The job failed (FailFast or past its deadline): every active pod goes."""
    NODE_UNFIT = "NodeUnfit"
    """The pod no longer fits its node (labels, taints, unschedulable, resources changed)."""


@dataclass(frozen=True)
class PodDeletion:
    name: str
    uid: str | None
    node: str
    cause: DeletionCause


@dataclass(frozen=True)
class PodCreation:
    """A pod to create on ``node``; the node name is also its scale-expectation identity."""

    node: str
    pod: dict[str, Any]


@dataclass(frozen=True)
class _Finish:
    condition_type: str
    message: str
    """For Failed: the failure message; for Complete it is rendered at settle time."""
    event_reason: str


@dataclass(frozen=True)
class StatusDraft:
    """The status before the writes' outcomes are known."""

    start_time: str
    phase: str
    desired: int
    active: int
    failed: int
    succeeded: int
    conditions: tuple[dict[str, Any], ...]
    completion_time: str | None


@dataclass(frozen=True)
class Settlement:
    status: dict[str, Any]
    events: tuple[Event, ...]


@dataclass(frozen=True)
class ReconcilePlan:
    delete_job: bool = False
    status: StatusDraft | None = None
    deletes: tuple[PodDeletion, ...] = ()
    creates: tuple[PodCreation, ...] = ()
    events: tuple[Event, ...] = ()
    requeue_after: timedelta | None = None
    pause_requested: bool = False
    error: str | None = None
    job_key: str = ""
    now: str = ""
    _finish: _Finish | None = field(default=None, repr=False)

    def settle(self, deleted: int | None = None, created: int | None = None) -> Settlement:
        """The status to write and the closing events, given how many deletes succeeded and how
        many creates were attempted (default: all of them)."""
        if self.status is None:
            raise ValueError("settle: this plan writes no status (the job is finished)")
        deleted = len(self.deletes) if deleted is None else deleted
        created = len(self.creates) if created is None else created
        draft = self.status
        failed = draft.failed + deleted
        active = draft.active - deleted + created
        conditions = [dict(c) for c in draft.conditions]
        events: list[Event] = []
        finish = self._finish
        if finish is not None:
            counts = f"{draft.succeeded} pods succeeded, {failed} pods failed"
            if finish.condition_type == api.CONDITION_COMPLETE:
                message = f"Job completed, {counts}"
                text = f"Job {self.job_key} is completed, {counts}"
                events.append(Event(EVENT_NORMAL, REASON_JOB_COMPLETE, text))
            else:
                message = finish.message
                events.append(Event(EVENT_WARNING, finish.event_reason, f"{message}: {counts}"))
            conditions.append(
                {
                    "type": finish.condition_type,
                    "status": "True",
                    "lastProbeTime": self.now,
                    "lastTransitionTime": self.now,
                    "reason": finish.condition_type,
                    "message": message,
                }
            )
        status: dict[str, Any] = {}
        if conditions:
            status["conditions"] = conditions
        status["startTime"] = draft.start_time
        if draft.completion_time:
            status["completionTime"] = draft.completion_time
        status.update(
            active=active, succeeded=draft.succeeded, failed=failed, desired=draft.desired, phase=draft.phase
        )
        return Settlement(status, tuple(events))


def parallelism_limit(parallelism: int | str | None, desired: int) -> int:
    """intstr.GetValueFromIntOrPercent(parallelism or MaxInt32, desired, roundUp=true).

    Raises ValueError with upstream's wording for a string that is not a percentage."""
    if parallelism is None:
        return api.UNLIMITED_PARALLELISM
    if isinstance(parallelism, int):
        return parallelism
    if not parallelism.endswith("%"):
        raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")
    digits = parallelism[:-1]
    try:
        percent = int(digits, 10)
    except ValueError:
        raise ValueError(
            f'invalid value "{parallelism}": strconv.Atoi: parsing "{digits}": invalid syntax'
        ) from None
    return math.ceil(percent * desired / 100)


def is_finished(job: api.BroadcastJob) -> bool:
    """upstream ``IsJobFinished``: never with policy Never; else a True Complete/Failed condition."""
    if job.spec.completion_policy.type == api.COMPLETION_NEVER:
        return False
    conditions = (job.status.conditions if job.status else None) or []
    return any(
        c.type in (api.CONDITION_COMPLETE, api.CONDITION_FAILED) and c.status == "True" for c in conditions
    )


def labelled_template(job: api.BroadcastJob) -> dict[str, Any]:
    """upstream ``addLabelToPodTemplate``: the template with the job's name and uid labels."""
    template = dict(job.spec.template)
    meta = dict(meta_of(template))
    meta["labels"] = {
        **section(meta, "labels"),
        **job_labels(job.metadata.name or "", job.metadata.uid or ""),
    }
    template["metadata"] = meta
    return template


@dataclass(frozen=True)
class NodeSplit:
    """upstream ``getNodesToRunPod``: ``desired`` maps every node that should run a pod to its pod
    (None: not created yet), ``to_run`` are the nodes without a pod, in order; ``unfit`` pods
    run on nodes they no longer fit and are not being deleted already."""

    desired: dict[str, Obj | None]
    to_run: tuple[str, ...]
    unfit: tuple[Obj, ...]


def split_nodes(template: Obj, nodes: Sequence[Obj], node_to_pod: Mapping[str, Obj]) -> NodeSplit:
    desired: dict[str, Obj | None] = {}
    to_run: list[str] = []
    unfit: list[Obj] = []
    for node in nodes:
        name = node_name(node)
        pod = node_to_pod.get(name)
        if pod is not None:
            if unfit_reason(pod.get("spec") or {}, node) is not None and not is_deleting(pod):
                unfit.append(pod)
                continue
            desired[name] = pod
        elif unfit_reason(mock_pod_spec(template, node), node) is None:
            to_run.append(name)
            desired[name] = None
    return NodeSplit(desired, tuple(to_run), tuple(unfit))


def _is_complete(job: api.BroadcastJob, desired: Mapping[str, Obj | None]) -> bool:
    """upstream ``isJobComplete``: Always (not Never), at least one desired node, and on every
    desired node a pod exists that is no longer active."""
    if job.spec.completion_policy.type == api.COMPLETION_NEVER or not desired:
        return False
    return all(pod is not None and not is_pod_active(pod) for pod in desired.values())


def _past_deadline(job: api.BroadcastJob, start: datetime, now: datetime) -> bool:
    seconds = job.spec.completion_policy.active_deadline_seconds
    return seconds is not None and now - start >= timedelta(seconds=seconds)


def _deadline_requeue(job: api.BroadcastJob, start: datetime, now: datetime) -> timedelta | None:
    """The time left before ``activeDeadlineSeconds`` (policy Always), on every pass of a running job.

    Upstream requeues for the deadline only on the pass that sets ``startTime``; that requeue lives
    in the manager's queue, so a manager restarted after it would never fail a job whose pods run
    quietly past the deadline (no pod event comes to wake it). Requeueing for what is left on every
    pass gives the same moment on the first pass and survives a restart."""
    seconds = job.spec.completion_policy.active_deadline_seconds
    if job.spec.completion_policy.type != api.COMPLETION_ALWAYS or seconds is None:
        return None
    left = start + timedelta(seconds=seconds) - now
    return left if left > timedelta(0) else None


def _ttl_requeue(job: api.BroadcastJob) -> timedelta | None:
    """finishJob's requeue: a second past the TTL, so the next pass finds it expired."""
    ttl = job.spec.completion_policy.ttl_seconds_after_finished
    return timedelta(seconds=ttl + 1) if ttl is not None else None


def _finished_job(job: api.BroadcastJob, now: datetime) -> ReconcilePlan:
    """upstream ``pastTTLDeadline``: delete once the TTL since completionTime has passed."""
    ttl = job.spec.completion_policy.ttl_seconds_after_finished
    completed = parse_time(job.status.completion_time if job.status else None)
    if ttl is None or completed is None:
        return ReconcilePlan()
    left = timedelta(seconds=ttl) - (now - completed)
    if left <= timedelta(0):
        return ReconcilePlan(delete_job=True)
    return ReconcilePlan(requeue_after=left)


def plan_reconcile(
    job: api.BroadcastJob,
    nodes: Sequence[Obj],
    pods: Sequence[Obj],
    now: datetime,
    *,
    by_scheduler: bool = True,
) -> ReconcilePlan:
    """One reconcile pass of ``job`` over all ``nodes`` and the namespace's ``pods`` (the job's are
    picked out by labels and controller reference)."""
    if is_finished(job):
        return _finished_job(job, now)
    name = job.metadata.name or ""
    namespace = job.metadata.namespace or ""
    uid = job.metadata.uid or ""
    spec = job.spec
    policy = spec.completion_policy
    status = job.status or api.BroadcastJobStatus()
    stamp = rfc3339(now)
    template = labelled_template(job)

    start = parse_time(status.start_time) or now
    requeue_after = _deadline_requeue(job, start, now)
    phase = status.phase or api.PHASE_RUNNING

    events: list[Event] = []
    mine = owned_pods(pods, name, uid)
    node_to_pod: dict[str, Obj] = {}
    for pod in mine:
        node = assigned_node(pod)
        if node in node_to_pod:
            events.append(
                Event(
                    EVENT_WARNING,
                    REASON_DUPLICATE_POD,
                    f"Duplicated pod {pod_name(pod)} found on same node {node}",
                )
            )
        node_to_pod[node] = pod
    ordered_nodes = sorted(nodes, key=node_name)
    failure_policy = spec.failure_policy or api.FailurePolicy()
    groups = group_pods(mine, failure_policy.restart_limit or 0)
    split = split_nodes(template, ordered_nodes, node_to_pod)
    active, failed, succeeded = len(groups.active), len(groups.failed), len(groups.succeeded)
    desired = len(split.desired)
    conditions = tuple(c.to_dict() for c in status.conditions or [])

    def draft(phase: str, completion_time: str | None = status.completion_time) -> StatusDraft:
        return StatusDraft(
            start_time=rfc3339(start),
            phase=phase,
            desired=desired,
            active=active,
            failed=failed,
            succeeded=succeeded,
            conditions=conditions,
            completion_time=completion_time,
        )

    common = {"job_key": f"{namespace}/{name}", "now": stamp, "requeue_after": requeue_after}
    if phase == api.PHASE_FAILED:
        return ReconcilePlan(status=draft(phase), events=tuple(events), **common)
    if spec.paused and phase in (api.PHASE_RUNNING, api.PHASE_PAUSED):
        return ReconcilePlan(status=draft(api.PHASE_PAUSED), events=tuple(events), **common)
    if not spec.paused and phase == api.PHASE_PAUSED:
        phase = api.PHASE_RUNNING
        events.append(Event(EVENT_NORMAL, REASON_CONTINUE, "continue to process job"))

    failure: _Finish | None = None
    if failed > 0:
        if failure_policy.type == api.FAILURE_POLICY_PAUSE:
            events.append(Event(EVENT_WARNING, REASON_PAUSED, "job is paused, due to failed pod"))
            return ReconcilePlan(
                status=draft(api.PHASE_PAUSED), events=tuple(events), pause_requested=True, **common
            )
        if failure_policy.type == api.FAILURE_POLICY_FAIL_FAST:
            failure = _Finish(api.CONDITION_FAILED, MESSAGE_FAIL_FAST, REASON_FAILED_POD_FOUND)
            counts = f"{succeeded} pods succeeded, {failed} pods failed"
            events.append(Event(EVENT_WARNING, REASON_FAILED_POD_FOUND, f"{MESSAGE_FAIL_FAST}: {counts}"))
    if failure is None and policy.type != api.COMPLETION_NEVER and _past_deadline(job, start, now):
        message = f"Job {namespace}/{name} was active longer than specified deadline"
        failure = _Finish(api.CONDITION_FAILED, message, REASON_DEADLINE_EXCEEDED)

    if failure is not None:
        deletes = tuple(_deletion(pod, DeletionCause.JOB_FAILED) for pod in groups.active)
        common["requeue_after"] = _ttl_requeue(job)
        return ReconcilePlan(
            status=draft(api.PHASE_FAILED, stamp),
            deletes=deletes,
            events=tuple(events),
            _finish=failure,
            **common,
        )

    deletes = tuple(_deletion(pod, DeletionCause.NODE_UNFIT) for pod in split.unfit)
    active_after_deletes = active - len(deletes)
    creates: list[PodCreation] = []
    error: str | None = None
    if not job.metadata.deletion_timestamp and split.to_run:
        try:
            limit = parallelism_limit(spec.parallelism, desired)
        except ValueError as problem:
            error = f"spec.parallelism: {problem}"
        else:
            if active_after_deletes > limit:
                text = "Number of active pods exceed parallelism limit"
                events.append(Event(EVENT_WARNING, REASON_TOO_MANY_ACTIVE, text))
            elif active_after_deletes < limit:
                count = min(limit - active_after_deletes, len(split.to_run))
                for node in split.to_run[:count]:
                    pod = new_pod(template, name, namespace, uid, node, by_scheduler=by_scheduler)
                    creates.append(PodCreation(node, pod))

    finish: _Finish | None = None
    completion_time = status.completion_time
    if _is_complete(job, split.desired):
        phase = api.PHASE_COMPLETED
        completion_time = stamp
        finish = _Finish(api.CONDITION_COMPLETE, "", REASON_JOB_COMPLETE)
        common["requeue_after"] = _ttl_requeue(job)
    return ReconcilePlan(
        status=draft(phase, completion_time),
        deletes=deletes,
        creates=tuple(creates),
        events=tuple(events),
        error=error,
        _finish=finish,
        **common,
    )


def _deletion(pod: Obj, cause: DeletionCause) -> PodDeletion:
    meta = pod.get("metadata") or {}
    return PodDeletion(meta.get("name") or "", meta.get("uid"), assigned_node(pod), cause)
