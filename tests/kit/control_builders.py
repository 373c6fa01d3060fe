"""Builders for pods and CloneSets as plain API dicts, shared by the control unit tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def build_pod(
    name: str = "p",
    revision: str = "cs-new",
    *,
    ready: bool = True,
    phase: str = "Running",
    ready_since: timedelta = timedelta(hours=1),
    node: str | None = "node-a",
    labels: dict[str, str] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    created: datetime | None = None,
    restarts: int = 0,
    finalizers: list[str] | None = None,
) -> dict[str, Any]:
    all_labels = {"app": "demo", "controller-revision-hash": revision, **(labels or {})}
    conds = [
        {
            "type": "Ready",
            "status": "True" if ready else "False",
            "lastTransitionTime": iso(NOW - ready_since),
        }
    ]
    conds += conditions or []
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": all_labels,
            "creationTimestamp": iso(created or NOW - timedelta(days=1)),
        },
        "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
        "status": {
            "phase": phase,
            "conditions": conds,
            "containerStatuses": [{"name": "main", "restartCount": restarts, "ready": ready}],
        },
    }
    if node:
        pod["spec"]["nodeName"] = node
    if finalizers:
        pod["metadata"]["finalizers"] = finalizers
    return pod


def build_cloneset(replicas: int = 5, **update_strategy: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default", "uid": "uid-1", "generation": 3},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "demo"}},
            "template": {
                "metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:2"}]},
            },
            "updateStrategy": dict(update_strategy),
            "scaleStrategy": {},
        },
    }
