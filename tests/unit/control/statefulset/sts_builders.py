"""Builders for Advanced StatefulSets and their pods as plain API dicts (statefulset unit tests)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from kruise.control.statefulset.scaleplan import Revisions
from tests.kit.pods import pod

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
CUR, UPD = "web-v1", "web-v2"
TEMPLATE_V1 = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
}
TEMPLATE_V2 = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "main", "image": "nginx:2"}]},
}
REVS = Revisions(CUR, UPD, TEMPLATE_V1, TEMPLATE_V2)
SAME = Revisions(UPD, UPD, TEMPLATE_V2, TEMPLATE_V2)


def iso(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def sts(
    replicas: int = 3,
    *,
    policy: str = "OrderedReady",
    partition: int = 0,
    max_unavailable: int | str = 1,
    paused: bool = False,
    reserve: list[int | str] | None = None,
    start: int | None = None,
    strategy_type: str = "RollingUpdate",
    **spec: Any,
) -> dict[str, Any]:
    rolling = {
        "partition": partition,
        "maxUnavailable": max_unavailable,
        "podUpdatePolicy": "ReCreate",
        "paused": paused,
        "minReadySeconds": 0,
    }
    body: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": "web-svc",
        "selector": {"matchLabels": {"app": "web"}},
        "template": TEMPLATE_V2,
        "podManagementPolicy": policy,
        "updateStrategy": {"type": strategy_type}
        if strategy_type == "OnDelete"
        else {"type": strategy_type, "rollingUpdate": rolling},
        **spec,
    }
    if reserve is not None:
        body["reserveOrdinals"] = reserve
    if start is not None:
        body["ordinals"] = {"start": start}
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "u-1"},
        "spec": body,
    }


def ordinal_pod(
    ordinal: int,
    revision: str = UPD,
    *,
    ready: bool = True,
    phase: str = "Running",
    ready_since: timedelta = timedelta(hours=1),
    terminating: bool = False,
    labels: dict[str, str] | None = None,
    name: str | None = None,
) -> dict[str, Any]:
    """The StatefulSet's pod at `ordinal` (named web-<ordinal> unless `name` says otherwise), of `revision`,
    ready (or not) since `ready_since` before NOW."""
    pod_name = name or f"web-{ordinal}"
    identity = {"statefulset.kubernetes.io/pod-name": pod_name, "apps.kubernetes.io/pod-index": str(ordinal)}
    ready_condition = {
        "type": "Ready",
        "status": "True" if ready else "False",
        "lastTransitionTime": iso(NOW - ready_since),
    }
    return pod(
        pod_name,
        namespace="ns",
        labels={"app": "web", "controller-revision-hash": revision, **identity, **(labels or {})},
        meta={"deletionTimestamp": iso(NOW)} if terminating else None,
        containers=[{"name": "main", "image": "nginx"}],
        phase=phase,
        conditions=[ready_condition],
    )


def pods(*ordinals: int, revision: str = UPD, **kw: Any) -> list[dict[str, Any]]:
    return [ordinal_pod(n, revision, **kw) for n in ordinals]


def names(items: list[Any]) -> list[str]:
    out = []
    for action in items:
        target = getattr(action, "pod", None)
        out.append(f"{type(action).__name__}:{(target or {}).get('metadata', {}).get('name')}")
    return out
