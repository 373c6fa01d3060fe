"""slow_start batches and name-based ScaleExpectations."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.kube.clock import FakeClock
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.slowstart import slow_start


async def test_batches_double_and_stop_at_first_failure():
    current: list[int] = []

    async def act(i: int) -> None:
        current.append(i)
        if i == 5:
            raise RuntimeError("boom")

    done, error = await slow_start(list(range(20)), act)
    assert isinstance(error, RuntimeError)
    # batches 1, 2, 4 -> items 0..6 attempted; item 5 fails in the third batch, nothing after it
    assert sorted(current) == list(range(7))
    assert done == 6


async def test_all_succeed():
    seen: list[int] = []

    async def act(i: int) -> None:
        seen.append(i)

    assert await slow_start(list(range(10)), act) == (10, None)
    assert sorted(seen) == list(range(10))


@given(st.integers(min_value=0, max_value=200))
def test_batch_sizes_cover_every_item_once(n):
    seen: list[int] = []

    async def act(i: int) -> None:
        seen.append(i)

    done, error = asyncio.run(slow_start(list(range(n)), act))
    assert error is None and done == n and sorted(seen) == list(range(n))


def test_scale_expectations_are_idempotent_per_name():
    clock = FakeClock()
    exp = ScaleExpectations(clock)
    exp.expect("ns/cs", ScaleExpectations.CREATE, "a")
    exp.expect("ns/cs", ScaleExpectations.DELETE, "b")
    ok, waited, pending = exp.satisfied("ns/cs")
    assert not ok and waited == 0 and pending == {"create": ["a"], "delete": ["b"]}
    clock.step(7)
    exp.observe("ns/cs", ScaleExpectations.DELETE, "b")
    exp.observe("ns/cs", ScaleExpectations.DELETE, "b")  # seen twice: terminating, then deleted
    ok, waited, pending = exp.satisfied("ns/cs")
    assert not ok and waited == 7 and pending == {"create": ["a"]}
    exp.observe("ns/cs", ScaleExpectations.CREATE, "a")
    assert exp.satisfied("ns/cs") == (True, 0.0, {})


def test_scale_expectations_delete_and_bad_action():
    exp = ScaleExpectations(FakeClock())
    exp.expect("k", ScaleExpectations.CREATE, "a")
    exp.delete("k")
    assert exp.satisfied("k")[0]
    with pytest.raises(ValueError, match="action"):
        exp.expect("k", "update", "a")
