"""The simulator's work queue: dedupe, no concurrent runs of one key, re-run when dirtied, retries."""

import asyncio

from kruise.sandbox.simulator.workqueue import WorkQueue


async def test_keys_are_deduplicated_and_never_run_concurrently():
    running: set[str] = set()
    overlaps = 0
    calls: list[str] = []
    gate = asyncio.Event()
    started = asyncio.Event()
    second = asyncio.Event()

    async def reconcile(key):
        nonlocal overlaps
        if key in running:
            overlaps += 1
        running.add(key)
        calls.append(key)
        started.set()
        if len(calls) == 2:
            second.set()
        await gate.wait()
        running.discard(key)
        return None

    queue = WorkQueue("t", reconcile, workers=4)
    queue.start()
    for _ in range(5):
        queue.add("a")
    async with asyncio.timeout(5):
        await started.wait()
        queue.add("a")  # while running: marks it dirty, so it runs exactly once more afterwards
        queue.add("a")
        gate.set()
        await second.wait()
    await queue.stop()
    assert calls == ["a", "a"]
    assert overlaps == 0


async def test_failures_retry_with_backoff_and_requeue_after():
    attempts: list[str] = []
    done = asyncio.Event()

    async def reconcile(key):
        attempts.append(key)
        if key == "flaky" and attempts.count("flaky") < 3:
            raise RuntimeError("transient")
        if key == "later" and attempts.count("later") == 1:
            return 0.01
        if attempts.count("flaky") >= 3 and attempts.count("later") >= 2:
            done.set()
        return None

    queue = WorkQueue("t", reconcile, workers=2, error_delay=0.001)
    queue.start()
    queue.add("flaky")
    queue.add("later")
    async with asyncio.timeout(5):
        await done.wait()
    await queue.stop()
    assert attempts.count("flaky") == 3
    assert attempts.count("later") == 2
