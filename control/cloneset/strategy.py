"""Turning CloneSet's int-or-percent knobs into pod counts with upstream's rounding."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.common import scaled_value
from kruise.api.keys import LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE
from kruise.api.objects import labels_of

DEFAULT_MAX_UNAVAILABLE = "20%"
# An unset scaleStrategy.maxUnavailable means "no limit" (upstream uses MaxInt32).
UNLIMITED = 2**31 - 1


def partition_replicas(partition: int | str | None, replicas: int) -> int:
    """``CalculatePartitionReplicas``: percent rounds UP (a non-zero percent keeps at least one
    old pod), but a percent below 100% never holds back every pod when replicas > 1."""
    if partition is None:
        return 0
    value = scaled_value(partition, replicas, round_up=True)
    if replicas > 1 and value == replicas and isinstance(partition, str) and partition != "100%":
        value = replicas - 1
    return max(min(value, replicas), 0)


@dataclass(frozen=True)
class RolloutLimits:
    replicas: int
    partition: int
    max_surge: int
    max_unavailable: int
    scale_max_unavailable: int


def rollout_limits(cloneset: Mapping[str, Any]) -> RolloutLimits:
    """Scaled values used by both scale and update: maxSurge rounds up (0 while paused);
    maxUnavailable rounds up when there is no surge and down otherwise."""
    spec = cloneset.get("spec") or {}
    replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
    update = spec.get("updateStrategy") or {}
    scale = spec.get("scaleStrategy") or {}
    partition = partition_replicas(update.get("partition"), replicas)
    max_surge = 0
    if update.get("maxSurge") is not None:
        max_surge = 0 if update.get("paused") else scaled_value(update["maxSurge"], replicas, round_up=True)
    unavailable = update.get("maxUnavailable")
    max_unavailable = scaled_value(
        DEFAULT_MAX_UNAVAILABLE if unavailable is None else unavailable, replicas, round_up=max_surge == 0
    )
    scale_unavailable = scale.get("maxUnavailable")
    scale_max = UNLIMITED if scale_unavailable is None else scaled_value(scale_unavailable, replicas, True)
    return RolloutLimits(replicas, partition, max_surge, max_unavailable, scale_max)


def excludes_preparing_delete(cloneset: Mapping[str, Any], flag: bool = False) -> bool:
    """The manager flag or the CloneSet label make scaling ignore PreparingDelete pods."""
    labels = labels_of(cloneset)
    return flag or labels.get(LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE) == "true"
