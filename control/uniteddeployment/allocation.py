"""How many replicas each subset of a UnitedDeployment gets, and its manual partition.

Four allocators, chosen as upstream chooses them (`NewReplicaAllocator`):

- **specified** (no subset has min/max): subsets with `replicas` (int or percent of the total) get
  exactly that; the rest is split evenly between the others, the remainder going one by one to the
  subsets that currently run the most replicas (ties: the later name), so a re-split moves as few
  pods as possible;
- **elastic** (some subset has `minReplicas`/`maxReplicas`): every subset first gets its minimum, in
  spec order, then each is filled up to its maximum, in spec order, until the total is used up;
- **adaptive** (`scheduleStrategy.type: Adaptive`): the elastic split, but a subset marked
  unschedulable is pinned to its ready replicas, and a schedulable subset keeps at least its ready
  ones (running pods are never deleted to rebalance);
- **reservation** (Adaptive with `reserveUnschedulablePods`, 1.9): the elastic order, but replicas
  given to an unschedulable subset beyond what it can run are not counted as placed, so the same
  number is created again in the next subsets as temporary stand-ins.

Everything here is pure: the caller passes the UnitedDeployment model and what it knows of each
existing child workload (`SubsetState`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kruise.api.uniteddeployment import (
    SCHEDULE_ADAPTIVE,
    UPDATE_STRATEGY_MANUAL,
    Subset,
    UnitedDeployment,
    parse_subset_replicas,
)

MAX_INT32 = 2**31 - 1
UNSET_REPLICAS = -1
"""Upstream's stand-in for a UnitedDeployment without `spec.replicas`."""


class AllocationError(ValueError):
    """The subsets' replicas cannot be honoured (upstream's "Specified subset replicas is ineffective")."""


@dataclass(frozen=True)
class SubsetState:
    """What the allocators need to know about one existing child workload."""

    replicas: int = 0
    """The child's `spec.replicas`."""
    ready_replicas: int = 0
    unschedulable: bool = False
    """Adaptive strategies: the subset has pods that cannot be scheduled."""
    marked_unschedulable: bool = False
    """Reservation strategy: the subset's `Schedulable` condition was already False."""
    reserved_pods: int = 0
    """Reservation strategy: pods of the subset counted as reserved (expected never to run)."""

    @property
    def allocatable(self) -> bool:
        return not self.unschedulable and not self.marked_unschedulable


def is_adaptive(ud: UnitedDeployment) -> bool:
    strategy = ud.spec.topology.schedule_strategy
    return strategy is not None and strategy.type == SCHEDULE_ADAPTIVE


def reserves_unschedulable_pods(ud: UnitedDeployment) -> bool:
    strategy = ud.spec.topology.schedule_strategy
    return (
        is_adaptive(ud)
        and strategy is not None
        and strategy.adaptive is not None
        and bool(strategy.adaptive.reserve_unschedulable_pods)
    )


def allocate(ud: UnitedDeployment, existing: Mapping[str, SubsetState] | None = None) -> dict[str, int]:
    """Next `spec.replicas` of every subset, keyed by subset name. Raises AllocationError."""
    existing = existing or {}
    subsets = list(ud.spec.topology.subsets or [])
    if reserves_unschedulable_pods(ud):
        return allocate_with_reservation(ud.spec.replicas or 0, subsets, existing)
    if is_adaptive(ud):
        return allocate_adaptive(ud.spec.replicas or 0, subsets, existing)
    if any(s.min_replicas is not None or s.max_replicas is not None for s in subsets):
        return allocate_elastic(ud.spec.replicas or 0, subsets)
    total = UNSET_REPLICAS if ud.spec.replicas is None else ud.spec.replicas
    current = {name: state.replicas for name, state in existing.items()}
    return allocate_specified(total, subsets, current)


# ---- specified replicas --------------------------------------------------------------------------


def specified_replicas(total: int, subsets: list[Subset]) -> dict[str, int]:
    """Subsets with a parsable `replicas`; an unparsable one counts as unspecified (upstream logs it)."""
    specified: dict[str, int] = {}
    for subset in subsets:
        if subset.replicas is None:
            continue
        try:
            specified[subset.name] = parse_subset_replicas(total, subset.replicas)
        except ValueError:
            continue
    return specified


def allocate_specified(total: int, subsets: list[Subset], current: Mapping[str, int]) -> dict[str, int]:
    """The specified allocator; `total` is UNSET_REPLICAS when `spec.replicas` is empty."""
    specified = specified_replicas(total, subsets)
    specified_sum = sum(specified.values())
    if total != UNSET_REPLICAS:
        if specified_sum > total:
            raise AllocationError(
                f"specified subsets' replica ({specified_sum}) is greater than "
                f"UnitedDeployment replica ({total})"
            )
        if specified_sum < total and len(specified) == len(subsets):
            raise AllocationError(
                f"specified subsets' replica ({specified_sum}) is less than "
                f"UnitedDeployment replica ({total})"
            )
    elif len(specified) != len(subsets):
        raise AllocationError("all subsets must be specified when UnitedDeployment replica is unspecified")

    result = {s.name: specified[s.name] for s in subsets if s.name in specified}
    # Biggest current subsets first (ties: later name first) take the remainder.
    free = sorted(
        (s.name for s in subsets if s.name not in specified),
        key=lambda name: (current.get(name, 0), name),
        reverse=True,
    )
    if free:
        average, remainder = divmod(total - specified_sum, len(free))
        for index, name in enumerate(free):
            result[name] = average + 1 if index < remainder else average
    return {s.name: result[s.name] for s in subsets}


# ---- min / max -----------------------------------------------------------------------------------


def _parse_or_zero(total: int, value: int | str | None, default: int) -> int:
    """Upstream ignores parse errors here and keeps the zero the parser returned."""
    if value is None:
        return default
    try:
        return parse_subset_replicas(total, value)
    except ValueError:
        return 0


def min_max(total: int, subsets: list[Subset]) -> tuple[dict[str, int], dict[str, int]]:
    """Each subset's (min, max); an absent max is unbounded. Raises when a min exceeds its max."""
    minimums: dict[str, int] = {}
    maximums: dict[str, int] = {}
    for index, subset in enumerate(subsets):
        low = _parse_or_zero(total, subset.min_replicas, 0)
        high = _parse_or_zero(total, subset.max_replicas, MAX_INT32)
        if low > high:
            raise AllocationError(
                f"subset[{index}].maxReplicas({high}) must be more than or equal to minReplicas({low})"
            )
        minimums[subset.name] = low
        maximums[subset.name] = high
    return minimums, maximums


def fill_min_then_max(
    total: int, names: list[str], minimums: Mapping[str, int], maximums: Mapping[str, int]
) -> dict[str, int]:
    """Minimums first in order, then each subset up to its maximum in order, until `total` is used."""
    result: dict[str, int] = {}
    allocated = 0
    for name in names:
        add = max(min(minimums[name], total - allocated), 0)
        result[name] = add
        allocated += add
    if allocated >= total:
        return result
    for name in names:
        add = max(min(maximums[name] - minimums[name], total - allocated), 0)
        result[name] += add
        allocated += add
    return result


def allocate_elastic(total: int, subsets: list[Subset]) -> dict[str, int]:
    minimums, maximums = min_max(total, subsets)
    return fill_min_then_max(total, [s.name for s in subsets], minimums, maximums)


def allocate_adaptive(
    total: int, subsets: list[Subset], existing: Mapping[str, SubsetState]
) -> dict[str, int]:
    """Elastic bounds narrowed by what each existing subset runs now."""
    minimums, maximums = min_max(total, subsets)
    for subset in subsets:
        name = subset.name
        state = existing.get(name)
        low, high = minimums[name], maximums[name]
        unschedulable = state is not None and state.unschedulable
        if state is not None and unschedulable:
            low = max(state.ready_replicas, low)
            high = min(state.ready_replicas, high)
        ready = state.ready_replicas if state is not None else 0
        if not unschedulable and ready > low:
            low = min(ready, high)
        minimums[name], maximums[name] = low, high
    return fill_min_then_max(total, [s.name for s in subsets], minimums, maximums)


# ---- reservation (1.9) ---------------------------------------------------------------------------


@dataclass
class _Reservation:
    capacity: int
    """How many more replicas are expected to run; negative: that many are expected to stay reserved."""
    allocated: int = 0

    def allocate(self, to: int, rest: int) -> int:
        """Raise the subset towards `to` (at most `rest` more); return how many of them count as placed."""
        add = min(to - self.allocated, rest)
        self.allocated += add
        self.capacity -= add
        if self.capacity < 0:
            return max(0, add + self.capacity)
        return add


def allocate_with_reservation(
    total: int, subsets: list[Subset], existing: Mapping[str, SubsetState]
) -> dict[str, int]:
    minimums, maximums = min_max(total, subsets)
    names = [s.name for s in subsets]
    records: dict[str, _Reservation] = {}
    for name in names:
        state = existing.get(name)
        if state is None or state.allocatable:
            records[name] = _Reservation(MAX_INT32)
        else:
            records[name] = _Reservation(state.replicas - state.reserved_pods)
    rest = total
    for name in names:
        rest -= records[name].allocate(minimums[name], rest)
        if rest <= 0:
            return {n: r.allocated for n, r in records.items()}
    for name in names:
        state = existing.get(name)
        target = maximums[name] if state is None or not state.unschedulable else state.replicas
        rest -= records[name].allocate(target, rest)
        if rest <= 0:
            break
    return {n: r.allocated for n, r in records.items()}


# ---- partitions ----------------------------------------------------------------------------------


def next_partitions(ud: UnitedDeployment, next_replicas: Mapping[str, int]) -> dict[str, int]:
    """Per-subset partition: `manualUpdate.partitions[subset]` under the Manual strategy, else 0,
    never above the subset's next replicas."""
    strategy = ud.spec.update_strategy
    manual = (
        (strategy.manual_update.partitions or {})
        if strategy.type == UPDATE_STRATEGY_MANUAL and strategy.manual_update is not None
        else {}
    )
    partitions: dict[str, int] = {}
    for subset in ud.spec.topology.subsets or []:
        partition = manual.get(subset.name, 0)
        if subset.name in next_replicas and partition > next_replicas[subset.name]:
            partition = next_replicas[subset.name]
        partitions[subset.name] = partition
    return partitions
