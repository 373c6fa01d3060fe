import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.kube.clock import FakeClock
from kruise.kube.ratelimit import ItemExponentialFailureRateLimiter
from kruise.kube.workqueue import QueueShutDown, WorkQueue


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_add_dedupes_waiting_items():
    q: WorkQueue[str] = WorkQueue()
    for key in ["a", "b", "a", "c", "b"]:
        q.add(key)
    assert len(q) == 3
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]


async def test_item_never_handed_to_two_workers():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    first = await q.get()
    q.add("a")  # re-added while processing: only marked dirty
    assert len(q) == 0
    second = asyncio.ensure_future(q.get())
    await settle()
    assert not second.done()
    q.done(first)
    assert await asyncio.wait_for(second, 1) == "a"
    q.done("a")
    assert len(q) == 0


async def test_dirty_while_processing_readded_once():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    item = await q.get()
    q.add("a")
    q.add("a")
    q.done(item)
    assert len(q) == 1
    await q.get()
    q.done("a")
    assert len(q) == 0


async def test_get_blocks_until_add():
    q: WorkQueue[str] = WorkQueue()
    getter = asyncio.ensure_future(q.get())
    await settle()
    assert not getter.done()
    q.add("x")
    assert await asyncio.wait_for(getter, 1) == "x"


async def test_cancelled_getter_does_not_swallow_item():
    q: WorkQueue[str] = WorkQueue()
    g1 = asyncio.ensure_future(q.get())
    g2 = asyncio.ensure_future(q.get())
    await settle()
    q.add("x")
    g1.cancel()
    await settle()
    assert g1.cancelled() or g1.result() == "x"
    if g1.cancelled():
        assert await asyncio.wait_for(g2, 1) == "x"
    else:
        g2.cancel()


async def test_shutdown_hands_out_queued_items_then_raises():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    q.shutdown()
    q.add("b")  # ignored after shutdown
    assert await q.get() == "a"
    with pytest.raises(QueueShutDown):
        await q.get()


async def test_shutdown_wakes_blocked_getters():
    q: WorkQueue[str] = WorkQueue()
    getters = [asyncio.ensure_future(q.get()) for _ in range(3)]
    await settle()
    q.shutdown()
    results = await asyncio.gather(*getters, return_exceptions=True)
    assert all(isinstance(r, QueueShutDown) for r in results)


async def test_shutdown_with_drain_waits_for_processing():
    q: WorkQueue[str] = WorkQueue()
    q.add("a")
    item = await q.get()
    drain = asyncio.ensure_future(q.shutdown_with_drain())
    await settle()
    assert not drain.done()
    q.done(item)
    await asyncio.wait_for(drain, 1)


async def test_add_after_releases_in_deadline_order():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("late", 5)
    q.add_after("early", 1)
    q.add_after("now", 0)
    assert len(q) == 1 and await q.get() == "now"
    await settle()
    assert q.waiting() == 2
    clock.step(1)
    await settle()
    assert await asyncio.wait_for(q.get(), 1) == "early"
    clock.step(3.9)
    await settle()
    assert len(q) == 0
    clock.step(0.2)
    await settle()
    assert await asyncio.wait_for(q.get(), 1) == "late"
    q.shutdown()


async def test_add_after_keeps_earlier_deadline():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 2)
    q.add_after("a", 10)  # later: ignored
    assert q.waiting() == 1
    clock.step(2)
    await settle()
    assert len(q) == 1
    q.add_after("b", 10)
    q.add_after("b", 1)  # earlier: wins
    clock.step(1)
    await settle()
    assert len(q) == 2
    q.shutdown()


async def test_add_after_heartbeat_handles_long_delays():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(clock=clock)
    q.add_after("a", 25)
    for _ in range(3):
        clock.step(10)
        await settle()
    assert len(q) == 1
    q.shutdown()


async def test_add_rate_limited_uses_backoff_and_forget_resets():
    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue(rate_limiter=ItemExponentialFailureRateLimiter(1, 8), clock=clock)
    q.add_rate_limited("a")  # 1 s
    assert q.num_requeues("a") == 1
    clock.step(0.5)
    await settle()
    assert len(q) == 0
    clock.step(0.5)
    await settle()
    assert len(q) == 1
    await q.get()
    q.done("a")
    q.add_rate_limited("a")  # 2 s
    clock.step(1.9)
    await settle()
    assert len(q) == 0
    clock.step(0.1)
    await settle()
    assert len(q) == 1
    q.forget("a")
    assert q.num_requeues("a") == 0
    q.shutdown()


async def test_concurrent_workers_never_overlap_on_a_key():
    q: WorkQueue[int] = WorkQueue()
    active: set[int] = set()
    overlaps = 0
    processed = 0
    enough = asyncio.Event()

    async def worker():
        nonlocal overlaps, processed
        while True:
            try:
                item = await q.get()
            except QueueShutDown:
                return
            if item in active:
                overlaps += 1
            active.add(item)
            await asyncio.sleep(0)
            if processed < 300:
                q.add(item)  # re-add while processing
            active.discard(item)
            processed += 1
            if processed >= 300:
                enough.set()
            q.done(item)

    for i in range(5):
        q.add(i)
    workers = [asyncio.ensure_future(worker()) for _ in range(4)]
    await asyncio.wait_for(enough.wait(), 10)
    await q.shutdown_with_drain()
    await asyncio.gather(*workers)
    assert overlaps == 0


async def test_metrics_recorded_under_name():
    from prometheus_client import REGISTRY

    clock = FakeClock()
    q: WorkQueue[str] = WorkQueue("unit-metrics", clock=clock)
    q.add("a")
    q.add("b")
    assert REGISTRY.get_sample_value("workqueue_depth", {"name": "unit-metrics"}) == 2
    clock.step(2)
    item = await q.get()
    clock.step(3)
    assert REGISTRY.get_sample_value("workqueue_unfinished_work_seconds", {"name": "unit-metrics"}) == 3
    assert (
        REGISTRY.get_sample_value("workqueue_longest_running_processor_seconds", {"name": "unit-metrics"})
        == 3
    )
    q.done(item)
    q.add_rate_limited("c")
    assert REGISTRY.get_sample_value("workqueue_adds_total", {"name": "unit-metrics"}) == 2
    assert REGISTRY.get_sample_value("workqueue_retries_total", {"name": "unit-metrics"}) == 1
    assert REGISTRY.get_sample_value("workqueue_queue_duration_seconds_count", {"name": "unit-metrics"}) == 1
    assert REGISTRY.get_sample_value("workqueue_work_duration_seconds_sum", {"name": "unit-metrics"}) == 3
    q.shutdown()


ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from("abcd")),
        st.tuples(st.just("get"), st.just("")),
        st.tuples(st.just("done"), st.sampled_from("abcd")),
    ),
    max_size=60,
)


@given(ops)
def test_queue_matches_client_go_model(operations):
    """Against a direct model of client-go's Type: queue, dirty and processing evolve identically."""

    async def run():
        q: WorkQueue[str] = WorkQueue()
        queue: list[str] = []
        dirty: set[str] = set()
        processing: set[str] = set()
        for op, key in operations:
            if op == "add":
                q.add(key)
                if key not in dirty:
                    dirty.add(key)
                    if key not in processing:
                        queue.append(key)
            elif op == "get":
                if not queue:
                    continue
                got = await q.get()
                expected = queue.pop(0)
                assert got == expected
                processing.add(got)
                dirty.discard(got)
            elif op == "done":
                if key not in processing:
                    continue
                q.done(key)
                processing.discard(key)
                if key in dirty:
                    queue.append(key)
            assert len(q) == len(queue)
            assert q.processing() == frozenset(processing)
            assert not set(queue) & processing

    asyncio.run(run())
