"""Partition / maxSurge / maxUnavailable scaling with upstream rounding."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.cloneset.strategy import UNLIMITED, partition_replicas, rollout_limits
from tests.kit.control_builders import build_cloneset


@pytest.mark.parametrize(
    ("partition", "replicas", "expected"),
    [
        (None, 5, 0),
        (0, 5, 0),
        (3, 5, 3),
        (15, 10, 10),
        ("0%", 10, 0),
        ("10%", 10, 1),
        ("11%", 10, 2),
        ("1%", 10, 1),
        ("99%", 10, 9),
        ("100%", 10, 10),
        ("50%", 1, 1),
        ("99%", 1, 1),
        ("40%", 0, 0),
    ],
)
def test_partition_replicas(partition: int | str | None, replicas: int, expected: int) -> None:
    assert partition_replicas(partition, replicas) == expected


@given(st.integers(0, 100), st.integers(0, 500))
def test_percent_partition_stays_in_range_and_keeps_one_of_each_side(percent: int, replicas: int) -> None:
    value = partition_replicas(f"{percent}%", replicas)
    assert 0 <= value <= replicas
    if percent > 0 and replicas > 0:
        assert value >= 1
    if percent < 100 and replicas > 1:
        assert value <= replicas - 1


@pytest.mark.parametrize(
    ("strategy", "replicas", "surge", "unavailable"),
    [
        ({}, 10, 0, 2),
        ({}, 3, 0, 1),  # 20% of 3 rounds up without surge
        ({"maxSurge": "50%"}, 3, 2, 0),  # surge rounds up, unavailable (20%) then rounds down
        ({"maxSurge": 1, "maxUnavailable": "50%"}, 5, 1, 2),
        ({"maxSurge": 1, "paused": True, "maxUnavailable": "50%"}, 5, 0, 3),
        ({"maxUnavailable": 0, "maxSurge": "10%"}, 4, 1, 0),
    ],
)
def test_surge_and_unavailable_rounding(strategy: dict, replicas: int, surge: int, unavailable: int) -> None:
    limits = rollout_limits(build_cloneset(replicas, **strategy))
    assert (limits.max_surge, limits.max_unavailable) == (surge, unavailable)


def test_scale_max_unavailable_defaults_to_unlimited_and_rounds_up() -> None:
    cs = build_cloneset(10)
    assert rollout_limits(cs).scale_max_unavailable == UNLIMITED
    cs["spec"]["scaleStrategy"]["maxUnavailable"] = "15%"
    assert rollout_limits(cs).scale_max_unavailable == 2
