"""Which pods go first: upstream's ``ActivePodsWithRanks`` (scale-in) and kube's ``ActivePods``.

Earlier in the order = better to delete/update first: unscheduled, pending, unavailable, not ready,
cheaper deletion cost, crowded on a node/topology, ready for the shortest time, restarted more,
created most recently.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from kruise.api.conditions import condition_of
from kruise.api.objects import Obj, annotations_of, container_statuses_of, meta_of, spec_of
from kruise.control.common import podstatus

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
HOSTNAME_LABEL = "kubernetes.io/hostname"
_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}
_INT32 = re.compile(r"-?[0-9]+")


def _node(pod: Obj) -> str:
    return spec_of(pod).get("nodeName") or ""


def _key(pod: Obj) -> str:
    meta = pod.get("metadata") or {}
    return meta.get("uid") or meta.get("name", "")


def deletion_cost(pod: Obj) -> int:
    """``controller.kubernetes.io/pod-deletion-cost``; malformed values count as 0 like upstream."""
    value = annotations_of(pod).get(POD_DELETION_COST)
    if value is None or not value or not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return 0
    if not _INT32.fullmatch(value):
        return 0
    number = int(value)
    return number if -(2**31) <= number < 2**31 else 0


def _ready_time(pod: Obj) -> datetime | None:
    if not podstatus.is_ready(pod):
        return None
    return podstatus.parse_time((condition_of(pod, "Ready") or {}).get("lastTransitionTime"))


def _max_restarts(pod: Obj) -> int:
    statuses = container_statuses_of(pod)
    return max((int(s.get("restartCount") or 0) for s in statuses), default=0)


def _created(pod: Obj) -> datetime | None:
    return podstatus.parse_time(meta_of(pod).get("creationTimestamp"))


def _after_or_zero(t1: datetime | None, t2: datetime | None) -> bool:
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _less(
    a: Obj,
    b: Obj,
    available: Callable[[Obj], bool] | None,
    ranks: Mapping[str, float] | None,
    with_cost: bool,
) -> bool:
    na, nb = _node(a), _node(b)
    if na != nb and (not na or not nb):
        return not na
    pa, pb = _PHASE_ORDINAL.get(podstatus.phase(a), 0), _PHASE_ORDINAL.get(podstatus.phase(b), 0)
    if pa != pb:
        return pa < pb
    if available is not None and available(a) != available(b):
        return not available(a)
    ra, rb = podstatus.is_ready(a), podstatus.is_ready(b)
    if ra != rb:
        return not ra
    if with_cost and (ca := deletion_cost(a)) != (cb := deletion_cost(b)):
        return ca < cb
    rank_a = (ranks or {}).get(_key(a), 0.0)
    rank_b = (ranks or {}).get(_key(b), 0.0)
    if rank_a != rank_b:
        return rank_a > rank_b
    if ra and rb and (ta := _ready_time(a)) != (tb := _ready_time(b)):
        return _after_or_zero(ta, tb)
    if _max_restarts(a) != _max_restarts(b):
        return _max_restarts(a) > _max_restarts(b)
    if (ca_t := _created(a)) != (cb_t := _created(b)):
        return _after_or_zero(ca_t, cb_t)
    return False


def _sorted(pods: Sequence[Obj], less: Callable[[Obj, Obj], bool]) -> list[Obj]:
    def cmp(a: Obj, b: Obj) -> int:
        return -1 if less(a, b) else (1 if less(b, a) else 0)

    return sorted(pods, key=functools.cmp_to_key(cmp))


def sort_active_pods(pods: Sequence[Obj]) -> list[Obj]:
    """kube ``controller.ActivePods`` order (used to pick update candidates)."""
    return _sorted(pods, lambda a, b: _less(a, b, None, None, with_cost=False))


def same_node_ranks(pods: Sequence[Obj]) -> dict[str, float]:
    """Pods sharing a node rank by crowding; the best pod on each node keeps rank 0."""
    by_node: dict[str, list[Obj]] = {}
    for pod in pods:
        if _node(pod):
            by_node.setdefault(_node(pod), []).append(pod)
    ranks: dict[str, float] = {}
    for group in by_node.values():
        if len(group) <= 1:
            continue
        ordered = _sorted(group, lambda a, b: _less(a, b, None, None, with_cost=True))[:-1]
        for i, pod in enumerate(ordered):
            ranks[_key(pod)] = float(len(ordered) - i)
    return ranks


def spread_constraint_ranks(
    pods: Sequence[Obj],
    topology_keys: Sequence[str],
    node_labels: Mapping[str, Mapping[str, str]],
) -> dict[str, float]:
    """Rank pods by crowding within each topology domain of the template's spread constraints,
    weighted by ln(domains + 2). ``node_labels`` maps node name to labels (nodes the controller
    could not read are simply absent, as upstream skips them)."""
    on_node: dict[str, list[Obj]] = {}
    for pod in pods:
        if _node(pod) in node_labels:
            on_node.setdefault(_node(pod), []).append(pod)
    node_ranks = same_node_ranks(pods)
    ranks: dict[str, float] = {}
    for key in topology_keys:
        domains: dict[str, list[Obj]] = {}
        for node, members in on_node.items():
            if key in node_labels[node]:
                domains.setdefault(node_labels[node][key], []).extend(members)
        use = node_ranks if key != HOSTNAME_LABEL else None
        weight = math.log(len(domains) + 2)
        for members in domains.values():
            ordered = _sorted(members, lambda a, b, u=use: _less(a, b, None, u, with_cost=True))
            for i, pod in enumerate(ordered):
                ranks[_key(pod)] = ranks.get(_key(pod), 0.0) + float(len(ordered) - i) * weight
    return ranks


def sort_for_deletion(
    pods: Sequence[Obj],
    available: Callable[[Obj], bool],
    ranks: Mapping[str, float] | None = None,
) -> list[Obj]:
    """Scale-in preference (``ActivePodsWithRanks``); ranks default to same-node crowding."""
    use = same_node_ranks(pods) if ranks is None else ranks
    return _sorted(pods, lambda a, b: _less(a, b, available, use, with_cost=True))
