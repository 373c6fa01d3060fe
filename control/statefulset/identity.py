"""Stable pod identity of an Advanced StatefulSet: names, ordinals, and the ordinal range.

A pod belongs to ordinal ``n`` of set ``web`` only through its name ``web-n``; the range of
ordinals that should exist starts at ``spec.ordinals.start`` (gate StatefulSetStartOrdinal) and
skips ``reserveOrdinals`` until ``spec.replicas`` ordinals are found. Pods outside the range, or
on a reserved ordinal, are condemned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.api.objects import Obj, meta_of, section

_POD_NAME = re.compile(r"^(.*)-([0-9]+)$")
_INT32_MAX = 2**31 - 1


def parent_and_ordinal(name: str) -> tuple[str, int]:
    """Split ``<parent>-<ordinal>``; ``("", -1)`` when the name has no numeric suffix, and ordinal
    -1 when the suffix does not fit in an int32 (upstream parses with ParseInt(..., 32))."""
    match = _POD_NAME.match(name)
    if match is None:
        return "", -1
    digits = match.group(2).lstrip("0") or "0"
    if len(digits) > len(str(_INT32_MAX)):  # out of range, and int() would refuse thousands of digits
        return match.group(1), -1
    ordinal = int(digits)
    return match.group(1), ordinal if ordinal <= _INT32_MAX else -1


def pod_name_of(pod: Obj) -> str:
    return meta_of(pod).get("name") or ""


def ordinal_of(pod: Obj) -> int:
    return parent_and_ordinal(pod_name_of(pod))[1]


def pod_name(set_name: str, ordinal: int) -> str:
    return f"{set_name}-{ordinal}"


def claim_name(claim_template_name: str, set_name: str, ordinal: int) -> str:
    """PVC of one volumeClaimTemplate for one ordinal: ``<claim>-<set>-<ordinal>``."""
    return f"{claim_template_name}-{set_name}-{ordinal}"


def is_member(set_name: str, pod: Obj) -> bool:
    """``isMemberOf``: the parent in the pod's name ``<parent>-<ordinal>`` is the set (the ordinal
    itself may be out of int32 range: such a pod is still a member, and condemned)."""
    return parent_and_ordinal(pod_name_of(pod))[0] == set_name


def member_selection(set_name: str, selected: Callable[[Obj], bool]) -> Callable[[Obj], bool]:
    """What the set claims (adopts, or keeps rather than releases): a pod its selector test
    ``selected`` takes and that is a member by name (ClaimPods with the ``isMemberOf`` filter)."""
    return lambda pod: selected(pod) and is_member(set_name, pod)


def parse_reserve_range(text: str) -> tuple[int, int]:
    """``"a-b"`` with a <= b, both inclusive; ValueError naming the rule otherwise."""
    parts = text.split("-")
    if len(parts) != 2:
        raise ValueError(f"invalid range {text}")
    try:
        low, high = int(parts[0]), int(parts[1])
    except ValueError as err:
        raise ValueError(f"invalid range {text}") from err
    if low > high:
        raise ValueError(f"invalid range {text}")
    return low, high


def reserved_ordinals(items: Iterable[int | str] | None) -> frozenset[int]:
    """``spec.reserveOrdinals`` as a set: ints as given, ``"a-b"`` strings expanded inclusively.

    As upstream (``GetReserveOrdinalIntSet``), one malformed range makes the whole list count as
    empty rather than half-applied; admission rejects such lists, so this only guards old objects.
    """
    values: set[int] = set()
    for item in items or ():
        if isinstance(item, bool):
            return frozenset()
        if isinstance(item, int):
            values.add(item)
            continue
        try:
            low, high = parse_reserve_range(str(item))
        except ValueError:
            return frozenset()
        values.update(range(low, high + 1))
    return frozenset(values)


def start_ordinal(spec: Mapping[str, Any], start_ordinal_gate: bool) -> int:
    """``spec.ordinals.start`` when the StatefulSetStartOrdinal gate is on, else 0."""
    if not start_ordinal_gate:
        return 0
    return int(section(spec, "ordinals").get("start") or 0)


@dataclass(frozen=True)
class OrdinalRange:
    """Ordinals ``start <= n < end`` minus ``reserved``; exactly ``replicas`` of them are live.

    ``slot(n) = n - start`` indexes upstream's ``replicas`` slice, where reserved ordinals are
    empty slots; partition counts slots, not ordinals.
    """

    start: int
    end: int
    reserved: frozenset[int]

    def __contains__(self, ordinal: object) -> bool:
        return isinstance(ordinal, int) and self.start <= ordinal < self.end and ordinal not in self.reserved

    def ordinals(self) -> list[int]:
        return [n for n in range(self.start, self.end) if n not in self.reserved]

    def slot_count(self) -> int:
        return self.end - self.start


def ordinal_range(spec: Mapping[str, Any], start_ordinal_gate: bool = False) -> OrdinalRange:
    """``getStatefulSetReplicasRange`` for a (defaulted) spec dict."""
    replicas = spec.get("replicas")
    wanted = 1 if replicas is None else int(replicas)
    if wanted < 0:
        raise ValueError(f"spec.replicas: must be >= 0, got {wanted}")
    reserved = reserved_ordinals(spec.get("reserveOrdinals"))
    start = start_ordinal(spec, start_ordinal_gate)
    end, found = start, 0
    while found < wanted:
        if end not in reserved:
            found += 1
        end += 1
    return OrdinalRange(start, end, reserved)


@dataclass
class PodPartition:
    """Pods split as upstream's updateStatefulSet does: ``live`` maps each in-range ordinal to its
    pod; ``condemned`` are pods with a valid ordinal outside the range (or reserved), highest
    ordinal first; ``ignored`` pods have no parsable ordinal and are never touched."""

    live: dict[int, Obj]
    condemned: list[Obj]
    ignored: list[Obj]


def partition_pods(pods: Sequence[Obj], live_range: OrdinalRange) -> PodPartition:
    live: dict[int, Obj] = {}
    condemned: list[Obj] = []
    ignored: list[Obj] = []
    for pod in pods:
        ordinal = ordinal_of(pod)
        if ordinal in live_range:
            live[ordinal] = pod
        elif ordinal >= 0:
            condemned.append(pod)
        else:
            ignored.append(pod)
    condemned.sort(key=ordinal_of, reverse=True)
    return PodPartition(live, condemned, ignored)
