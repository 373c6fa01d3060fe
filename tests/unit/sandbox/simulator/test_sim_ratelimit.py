"""The emulated kube-controller-manager's client limit: client-go's token bucket, reserved in call order."""

from __future__ import annotations

import pytest

from kruise.sandbox.simulator.ratelimit import TokenBucket
from kruise.sandbox.simulator.simulator import Simulator


def test_the_burst_goes_at_once_then_each_request_waits_its_turn() -> None:
    bucket = TokenBucket(qps=20, burst=3)
    now = bucket._last
    assert [bucket.reserve(now) for _ in range(3)] == [0.0, 0.0, 0.0]
    # in debt: the 4th request waits one token's time, the 5th two, in the order they asked
    assert [round(bucket.reserve(now), 6) for _ in range(2)] == [0.05, 0.1]


def test_tokens_come_back_at_qps_up_to_the_burst() -> None:
    bucket = TokenBucket(qps=10, burst=2)
    now = bucket._last
    bucket.reserve(now)
    bucket.reserve(now)
    assert bucket.reserve(now + 100.0) == 0.0  # refilled, capped at 2
    assert bucket.reserve(now + 100.0) == 0.0
    assert bucket.reserve(now + 100.0) > 0


@pytest.mark.parametrize(("qps", "burst", "field"), [(0, 1, "qps"), (1, 0, "burst")])
def test_bad_limits_name_the_field(qps: float, burst: int, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        TokenBucket(qps, burst)


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"kube_api_qps": 0.0}, "kube_api_qps"), ({"kube_api_burst": 0}, "kube_api_burst")]
)
def test_the_simulator_refuses_a_bad_controller_limit(tmp_path, kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        Simulator(tmp_path / "kubeconfig", nodes=1, **kwargs)
