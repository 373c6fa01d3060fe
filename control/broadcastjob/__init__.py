"""BroadcastJob logic without I/O: node fitness, the job's pods, and the reconcile plan."""

from kruise.control.broadcastjob.fitness import mock_pod_spec, template_fits, unfit_reason
from kruise.control.broadcastjob.plan import (
    DeletionCause,
    Event,
    Plan,
    PodCreation,
    PodDeletion,
    Settlement,
    StatusDraft,
    is_finished,
    parallelism_limit,
    plan_reconcile,
)
from kruise.control.broadcastjob.pods import assigned_node, group_pods, job_labels, new_pod

__all__ = [
    "DeletionCause",
    "Event",
    "Plan",
    "PodCreation",
    "PodDeletion",
    "Settlement",
    "StatusDraft",
    "assigned_node",
    "group_pods",
    "is_finished",
    "job_labels",
    "mock_pod_spec",
    "new_pod",
    "parallelism_limit",
    "plan_reconcile",
    "template_fits",
    "unfit_reason",
]
