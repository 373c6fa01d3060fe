import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.kube.clock import FakeClock
from kruise.kube.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    TokenBucket,
    default_controller_rate_limiter,
)


def test_exponential_backoff_grows_per_item_and_caps():
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:5] == [0.005, 0.01, 0.02, 0.04, 0.08]
    assert delays[-1] == 1000.0
    assert all(b >= a for a, b in itertools.pairwise(delays))
    assert limiter.when("b") == 0.005
    assert limiter.num_requeues("a") == 20
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_exponential_never_overflows():
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    for _ in range(2000):
        delay = limiter.when("x")
    assert delay == 1000.0


@given(st.integers(min_value=0, max_value=200))
def test_exponential_delay_formula(failures):
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    for _ in range(failures):
        limiter.when("k")
    assert limiter.when("k") == min(0.005 * 2.0 ** min(failures, 63), 1000.0)


def test_bucket_allows_burst_then_spaces_by_qps():
    clock = FakeClock()
    limiter = BucketRateLimiter(10, 100, clock)
    assert [limiter.when(i) for i in range(100)] == [0.0] * 100
    # Reservations queue up: the 101st waits 0.1 s, the 102nd 0.2 s.
    assert limiter.when(100) == pytest.approx(0.1)
    assert limiter.when(101) == pytest.approx(0.2)
    clock.step(1.0)
    # 1 s refilled 10 tokens; 2 were owed.
    assert limiter.bucket.tokens() == pytest.approx(8.0)


def test_token_bucket_refill_caps_at_burst():
    clock = FakeClock()
    bucket = TokenBucket(5, 3, clock)
    assert [bucket.try_take() for _ in range(4)] == [True, True, True, False]
    clock.step(100)
    assert bucket.tokens() == 3.0


@pytest.mark.parametrize(("qps", "burst"), [(0, 1), (-1, 5), (1, 0)])
def test_token_bucket_rejects_bad_settings(qps, burst):
    with pytest.raises(ValueError, match=r"qps|burst"):
        TokenBucket(qps, burst)


async def test_token_bucket_acquire_waits_on_clock():
    clock = FakeClock()
    bucket = TokenBucket(2, 1, clock)
    await bucket.acquire()
    import asyncio

    waiter = asyncio.ensure_future(bucket.acquire())
    await asyncio.sleep(0)
    assert not waiter.done()
    clock.step(0.5)
    await asyncio.wait_for(waiter, 1)


def test_default_limiter_is_max_of_exponential_and_bucket():
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    assert limiter.when("a") == 0.005
    # Exhaust the shared bucket with other items: the bucket's delay now dominates.
    for i in range(99):
        limiter.when(i)
    assert limiter.when("b") == pytest.approx(0.1)
    assert limiter.num_requeues("a") == 1
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_fast_slow():
    limiter = ItemFastSlowRateLimiter(0.1, 5.0, 2)
    assert [limiter.when("a") for _ in range(4)] == [0.1, 0.1, 5.0, 5.0]


def test_max_of_requires_limiters():
    with pytest.raises(ValueError, match="limiters"):
        MaxOfRateLimiter()
