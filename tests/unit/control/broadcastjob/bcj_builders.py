"""Nodes, pods and BroadcastJobs as plain API dicts for the BroadcastJob unit tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kruise.api.broadcastjob import BroadcastJob
from kruise.control.broadcastjob.pods import new_pod

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
UID = "uid-1"


def node(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
    allocatable: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": spec,
        "status": {"allocatable": allocatable or {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def job(
    *,
    name: str = "bcj",
    parallelism: int | str | None = None,
    completion: str = "Always",
    deadline: int | None = None,
    ttl: int | None = None,
    failure: str = "FailFast",
    restart_limit: int | None = None,
    paused: bool = False,
    status: dict[str, Any] | None = None,
    restart_policy: str = "Never",
    pod_spec: dict[str, Any] | None = None,
    deleting: bool = False,
) -> BroadcastJob:
    completion_policy: dict[str, Any] = {"type": completion}
    if deadline is not None:
        completion_policy["activeDeadlineSeconds"] = deadline
    if ttl is not None:
        completion_policy["ttlSecondsAfterFinished"] = ttl
    failure_policy: dict[str, Any] = {"type": failure}
    if restart_limit is not None:
        failure_policy["restartLimit"] = restart_limit
    spec: dict[str, Any] = {
        "template": {
            "metadata": {"labels": {"app": "probe"}},
            "spec": {
                "containers": [{"name": "main", "image": "busybox"}],
                "restartPolicy": restart_policy,
                **(pod_spec or {}),
            },
        },
        "completionPolicy": completion_policy,
        "failurePolicy": failure_policy,
        "paused": paused,
    }
    if parallelism is not None:
        spec["parallelism"] = parallelism
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": UID}
    if deleting:
        meta["deletionTimestamp"] = "2026-03-01T11:00:00Z"
    body: dict[str, Any] = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob", "metadata": meta}
    body["spec"] = spec
    if status is not None:
        body["status"] = status
    return BroadcastJob.from_dict(body)


def job_pod(
    j: BroadcastJob,
    node_name: str,
    *,
    name: str | None = None,
    phase: str = "Running",
    restarts: int = 0,
    deleting: bool = False,
) -> dict[str, Any]:
    """A pod the controller would have created on ``node_name``, in ``phase``."""
    pod = new_pod(j.spec.template, j.metadata.name or "", "ns", UID, node_name)
    pod["metadata"]["name"] = name or f"{j.metadata.name}-{node_name}"
    pod["metadata"]["uid"] = f"uid-{pod['metadata']['name']}"
    if deleting:
        pod["metadata"]["deletionTimestamp"] = "2026-03-01T11:59:00Z"
    pod["spec"]["nodeName"] = node_name
    pod["status"] = {
        "phase": phase,
        "containerStatuses": [{"name": "main", "restartCount": restarts}],
    }
    return pod
