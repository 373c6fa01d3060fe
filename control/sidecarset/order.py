"""Which waiting pod a SidecarSet rollout updates first (upstream ``SortUpdateIndexes``).

Three stable passes, as for CloneSet (the same `control.updatesort` code): kube's ActivePods order
(unscheduled, pending, not ready, recently ready, often restarted and new pods first), then
`updateStrategy.priorityStrategy`, then `updateStrategy.scatterStrategy`. A SidecarSet's scatter term may
name a label with the value ``*``: it stands for every value of that label the matched pods carry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kruise.api.objects import Obj, labels_of
from kruise.control.cloneset.podsort import sort_active_pods
from kruise.control.common.updatesort import priority_sort, scatter_sort

WILDCARD = "*"


def expand_scatter_terms(terms: Sequence[Mapping[str, str]], pods: Sequence[Obj]) -> list[dict[str, str]]:
    """`key=*` becomes one `key=value` term per value found on `pods` (in pod order); duplicates are
    dropped, the first occurrence keeps its place."""
    expanded: list[dict[str, str]] = []

    def add(key: str, value: str) -> None:
        if not any(t["key"] == key and t["value"] == value for t in expanded):
            expanded.append({"key": key, "value": value})

    for term in terms:
        key, value = term.get("key", ""), term.get("value", "")
        if value != WILDCARD:
            add(key, value)
            continue
        for pod in pods:
            labels = labels_of(pod)
            if key in labels:
                add(key, labels[key])
    return expanded


def sort_for_update(
    strategy: Mapping[str, Any], all_pods: Sequence[Obj], candidates: Sequence[Obj]
) -> list[Obj]:
    """`candidates` (pods waiting for the new sidecars) in update order; `all_pods` are every pod the
    SidecarSet matches, which scatter spreads over."""
    ordered = sort_active_pods(candidates)
    ordered = priority_sort(ordered, strategy.get("priorityStrategy"))
    terms = strategy.get("scatterStrategy")
    if terms:
        ordered = scatter_sort(all_pods, ordered, expand_scatter_terms(terms, all_pods))
    return ordered
