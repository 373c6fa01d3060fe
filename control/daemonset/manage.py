"""The manage step of an Advanced DaemonSet: which nodes need a daemon pod, which pods must go.

Upstream's ``manage``/``podsShouldBeOnNode``, as a plan. For every Node:

- the pod should run there and the node has no pod of the DaemonSet at all ⇒ create one;
- the pod may keep running there ⇒ failed pods (unless the node's failed-pod backoff holds them, see
  :mod:`kruise.control.daemonset.backoff`) and PreparingDelete pods are deleted; without surge
  every live pod but the oldest is deleted; with surge at most one old and one new pod are kept
  (the old one goes once it is not ready, or once the new one is available for minReadySeconds)
  and a node left with no live pod gets a new one;
- the pod may not run there (any more) ⇒ every live pod is deleted.

A node whose pod is terminating counts as having a pod, so without surge the replacement is created
only once the old pod is gone — that is what keeps a rollout within ``maxUnavailable``.
Pods bound (by node affinity) to a node that no longer exists and never got scheduled are deleted
too; scheduled pods on a deleted node are the pod garbage collector's business, as upstream.

The status (``desiredNumberScheduled`` …) is computed here as well, from the same grouping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.api.conditions import condition_of
from kruise.api.keys import (
    CONDITION_INPLACE_UPDATE_READY,
    LABEL_CONTROLLER_REVISION_HASH,
    LIFECYCLE_STATE_PREPARING_DELETE,
)
from kruise.api.objects import Obj, labels_of, meta_of, spec_of
from kruise.control.common import lifecycle, podstatus
from kruise.control.common.nodeeligibility import NodeFit, node_name, target_node_name
from kruise.control.daemonset.rollingupdate import is_pod_updated

Node = Mapping[str, Any]
FitOf = Callable[[Node], NodeFit]
AdmitFailed = Callable[[str], float]


def pod_name(pod: Obj) -> str:
    return meta_of(pod).get("name") or ""


def _deleting(pod: Obj) -> bool:
    return bool(meta_of(pod).get("deletionTimestamp"))


def creation_order_key(pod: Obj) -> tuple[int, str, str]:
    """podByCreationTimestampAndPhase: scheduled pods first, then oldest first, then by name."""
    meta = pod.get("metadata") or {}
    scheduled = 0 if spec_of(pod).get("nodeName") else 1
    return scheduled, meta.get("creationTimestamp") or "", meta.get("name") or ""


def group_by_node(pods: Sequence[Obj]) -> dict[str, list[Obj]]:
    """getNodesToDaemonPods: pods keyed by the node they are bound to; pods naming no node are
    left out (upstream logs and skips them)."""
    grouped: dict[str, list[Obj]] = {}
    for pod in pods:
        target = target_node_name(pod)
        if target is None:
            continue
        grouped.setdefault(target, []).append(pod)
    return grouped


@dataclass(frozen=True)
class ManagePlan:
    """``nodes_to_create``: nodes that get a new pod, sorted. ``pods_to_delete``: pod names.
    ``failed_pods``: ``(pod, node)`` of failed pods among the deletions (each gets a Warning event).
    ``requeue_after``: seconds until a surged new pod turns available or a failed pod's backoff
    ends, whichever is first (0 when nothing waits)."""

    nodes_to_create: tuple[str, ...] = ()
    pods_to_delete: tuple[str, ...] = ()
    failed_pods: tuple[tuple[str, str], ...] = ()
    requeue_after: float = 0.0


def _surge_prune(
    running: Sequence[Obj], update_hash: str, min_ready: int, now: datetime
) -> tuple[list[str], float]:
    """With surge: keep the oldest new and the oldest old pod; the old one goes when it is not ready
    or the new one is available. Returns (pods to delete, seconds to wait for availability)."""
    delete: list[str] = []
    oldest_new: Obj | None = None
    oldest_old: Obj | None = None
    for pod in sorted(running, key=creation_order_key):
        labels = labels_of(pod)
        if labels.get(LABEL_CONTROLLER_REVISION_HASH) == update_hash:
            if oldest_new is None:
                oldest_new = pod
                continue
        elif oldest_old is None:
            oldest_old = pod
            continue
        delete.append(pod_name(pod))
    wait = 0.0
    if oldest_new is not None and oldest_old is not None:
        if not podstatus.is_ready(oldest_old) or podstatus.is_available(oldest_new, min_ready, now):
            delete.append(pod_name(oldest_old))
        elif podstatus.is_ready(oldest_new) and min_ready > 0:
            wait = podstatus.available_in(oldest_new, min_ready, now) or 0.0
    return delete, wait


def plan_manage(
    nodes: Sequence[Node],
    fit_of: FitOf,
    node_to_pods: Mapping[str, Sequence[Obj]],
    update_hash: str,
    *,
    allow_surge: bool,
    min_ready_seconds: int,
    now: datetime,
    admit_failed: AdmitFailed | None = None,
) -> ManagePlan:
    """One manage pass. ``fit_of(node)`` is the DaemonSet's
    :func:`kruise.control.common.nodeeligibility.should_run_on_node` for that node. ``admit_failed(node)`` is
    asked once per failed pod: 0 lets it be deleted now, a positive delay keeps it and requeues after
    that delay (without surge the node still counts as having a pod, so no replacement is created;
    with surge a node left with no running pod gets one, as upstream).
    Without it every failed pod is deleted at once."""
    create: list[str] = []
    delete: list[str] = []
    failed: list[tuple[str, str]] = []
    wait = 0.0
    for node in nodes:
        name = node_name(node)
        fit = fit_of(node)
        pods = node_to_pods.get(name)
        if fit.should_run and not pods:
            create.append(name)
            continue
        if not pods:
            continue
        if not fit.should_continue_running:
            delete.extend(pod_name(p) for p in pods if not _deleting(p))
            continue
        running: list[Obj] = []
        for pod in pods:
            if _deleting(pod):
                continue
            if podstatus.phase(pod) == "Failed":
                held = admit_failed(name) if admit_failed is not None else 0.0
                if held > 0:
                    wait = held if not wait or held < wait else wait
                    continue
                delete.append(pod_name(pod))
                failed.append((pod_name(pod), name))
            elif lifecycle.pod_state(pod) == LIFECYCLE_STATE_PREPARING_DELETE:
                delete.append(pod_name(pod))
            else:
                running.append(pod)
        if not allow_surge:
            delete.extend(pod_name(p) for p in sorted(running, key=creation_order_key)[1:])
            continue
        if not running:
            if fit.should_run:
                create.append(name)
            continue
        if len(running) > 1:
            pruned, node_wait = _surge_prune(running, update_hash, min_ready_seconds, now)
            delete.extend(pruned)
            if node_wait and (not wait or node_wait < wait):
                wait = node_wait
    existing = {node_name(n) for n in nodes}
    for target, pods in node_to_pods.items():
        if target in existing:
            continue
        delete.extend(pod_name(p) for p in pods if not spec_of(p).get("nodeName"))
    return ManagePlan(tuple(sorted(create)), tuple(delete), tuple(failed), wait)


def _daemon_pod_available(pod: Obj, min_ready: int, now: datetime) -> bool:
    """isDaemonPodAvailable: available, and not in the middle of an in-place update."""
    if not podstatus.is_available(pod, min_ready, now):
        return False
    gate = condition_of(pod, CONDITION_INPLACE_UPDATE_READY)
    has_gate = any(
        g.get("conditionType") == CONDITION_INPLACE_UPDATE_READY
        for g in spec_of(pod).get("readinessGates") or []
    )
    return not (has_gate and gate is not None and gate.get("status") != "True")


def availability_wait(
    pods: Sequence[Obj], min_ready_seconds: int, counters: Mapping[str, int], now: datetime
) -> float | None:
    """Seconds until the first Ready daemon pod turns available (None: none is waiting on minReadySeconds).

    Upstream requeues after the whole minReadySeconds whenever numberReady != numberAvailable ("a last line
    of defense"); the rolling update, which waits on exactly these pods, then moves up to minReadySeconds
    late when the pass that saw a pod Ready was not the one the moment it turned Ready. Requeueing at the
    remaining time moves it on time; with no time-gated pod, upstream's whole-minReadySeconds look stays."""
    if min_ready_seconds <= 0 or counters.get("numberReady") == counters.get("numberAvailable"):
        return None
    waits = [
        wait
        for pod in pods
        if not podstatus.is_terminating(pod)
        and (wait := podstatus.available_in(pod, min_ready_seconds, now)) is not None
    ]
    return min(waits) if waits else float(min_ready_seconds)


def compute_status(
    nodes: Sequence[Node],
    fit_of: FitOf,
    node_to_pods: Mapping[str, Sequence[Obj]],
    update_hash: str,
    template_generation: int | None,
    min_ready_seconds: int,
    now: datetime,
) -> dict[str, int]:
    """updateDaemonSetStatus's counters. Each node is judged by its oldest pod (scheduled first)."""
    desired = current = misscheduled = ready = updated = available = 0
    for node in nodes:
        fit = fit_of(node)
        pods = node_to_pods.get(node_name(node)) or []
        if not fit.should_run:
            if pods:
                misscheduled += 1
            continue
        desired += 1
        if not pods:
            continue
        current += 1
        pod = sorted(pods, key=creation_order_key)[0]
        if podstatus.is_ready(pod):
            ready += 1
            if _daemon_pod_available(pod, min_ready_seconds, now):
                available += 1
        if is_pod_updated(pod, update_hash, template_generation):
            updated += 1
    return {
        "desiredNumberScheduled": desired,
        "currentNumberScheduled": current,
        "numberMisscheduled": misscheduled,
        "numberReady": ready,
        "updatedNumberScheduled": updated,
        "numberAvailable": available,
        "numberUnavailable": desired - available,
    }
