"""Update ordering shared by Kruise workloads: priorityStrategy and scatterStrategy
(upstream ``pkg/util/updatesort``). Both reorder a list of candidate pods stably."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.api.common import LabelSelector, selector_matches
from kruise.api.objects import Obj, labels_of, section


def _labels(pod: Obj) -> Mapping[str, str]:
    return labels_of(pod)


def int_suffix(value: str) -> int:
    """The integer made of the trailing digits of ``value`` (0 if none)."""
    i = len(value)
    while i > 0 and value[i - 1].isdigit() and value[i - 1].isascii():
        i -= 1
    digits = value[i:]
    if not digits:
        return 0
    number = int(digits)
    return number if number < 2**63 else 0


def _weight(strategy: Mapping[str, Any], labels: Mapping[str, str]) -> int:
    total = 0
    for term in strategy.get("weightPriority") or []:
        try:
            selector = LabelSelector.model_validate(section(term, "matchSelector"))
            if selector_matches(selector, dict(labels)):
                total += int(term.get("weight") or 0)
        except ValueError:
            continue
    return total


def _order(strategy: Mapping[str, Any], labels: Mapping[str, str]) -> tuple[int, int]:
    for i, term in enumerate(strategy.get("orderPriority") or []):
        if term.get("orderedKey") in labels:
            return i, int_suffix(labels[term["orderedKey"]])
    return -1, 0


def priority_sort(pods: Sequence[Obj], strategy: Mapping[str, Any] | None) -> list[Obj]:
    """Higher summed weight first; or by the first ordered key a pod carries (pods with none of
    the keys come first, as upstream's level -1), then larger numeric suffix first."""
    if not strategy or not (strategy.get("weightPriority") or strategy.get("orderPriority")):
        return list(pods)
    if strategy.get("weightPriority"):

        def key(pod: Obj) -> tuple[int, ...]:
            return (-_weight(strategy, _labels(pod)),)
    else:

        def key(pod: Obj) -> tuple[int, ...]:
            level, order = _order(strategy, _labels(pod))
            return (level, -order)

    return sorted(pods, key=key)


def _go_round(value: float) -> int:
    return math.floor(value + 0.5) if value >= 0 else -math.floor(-value + 0.5)


@dataclass
class _Group:
    groups: int = 0
    matched_size: int = 0
    unmatched_size: int = 0
    unmatched_remainder: int = 0


def _group(matched: int, unmatched: int) -> _Group:
    groups = min(matched, unmatched)
    return _Group(groups, _go_round(matched / groups), _go_round(unmatched / groups))


def _group_by_density(total_matched: int, total_unmatched: int, matched: int, unmatched: int) -> _Group:
    total = _group(total_matched, total_unmatched)
    update = _group(matched, unmatched)
    if total_unmatched / total_matched >= unmatched / matched:
        return update
    group = _Group(matched_size=total.matched_size, unmatched_size=total.unmatched_size)
    group.groups = min(matched // group.matched_size, unmatched // group.unmatched_size)
    group.unmatched_remainder = unmatched - group.groups * group.unmatched_size
    return group


def _scatter_terms(candidates: Sequence[Obj], terms: Sequence[Mapping[str, str]]) -> list[tuple[str, str]]:
    if len(terms) == 1:
        return [(terms[0]["key"], terms[0]["value"])]
    counts: dict[tuple[str, str], int] = {}
    for term in terms:
        for pod in candidates:
            if _labels(pod).get(term["key"]) == term["value"]:
                ident = (term["key"], term["value"])
                counts[ident] = counts.get(ident, 0) + 1
    return sorted(counts, key=lambda ident: -counts[ident])


def _scatter_by_rule(term: tuple[str, str], all_pods: Sequence[Obj], candidates: list[Obj]) -> list[Obj]:
    key, value = term
    matched = [p for p in candidates if _labels(p).get(key) == value]
    unmatched = [p for p in candidates if _labels(p).get(key) != value]
    if len(matched) <= 1 or len(unmatched) <= 1:
        return candidates
    total_matched = sum(1 for p in all_pods if _labels(p).get(key) == value)
    total_unmatched = len(all_pods) - total_matched
    last = matched.pop()
    total_matched -= 1
    group = _group_by_density(total_matched, total_unmatched, len(matched), len(unmatched))
    ordered: list[Obj] = []
    if group.unmatched_remainder > 0:
        ordered += unmatched[: group.unmatched_remainder]
        unmatched = unmatched[group.unmatched_remainder :]
    for _ in range(group.groups):
        ordered += matched[: group.matched_size]
        matched = matched[group.matched_size :]
        ordered += unmatched[: group.unmatched_size]
        unmatched = unmatched[group.unmatched_size :]
    return [*ordered, *matched, *unmatched, last]


def scatter_sort(
    all_pods: Sequence[Obj], candidates: Sequence[Obj], terms: Sequence[Mapping[str, str]] | None
) -> list[Obj]:
    """Spread pods carrying each ``key=value`` evenly through the update order, so that they are
    not all updated in the same batch; the last matching pod always goes last."""
    ordered = list(candidates)
    if not terms or len(ordered) <= 1:
        return ordered
    for term in _scatter_terms(ordered, terms):
        ordered = _scatter_by_rule(term, all_pods, ordered)
    return ordered
