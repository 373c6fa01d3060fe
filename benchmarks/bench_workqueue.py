"""Workqueue throughput: items/s through add -> get -> done with N async workers.

Keys are distinct (no dedupe) and work is empty, so this measures the queue's own overhead, which
bounds how fast any controller can turn keys around on one event loop.
"""

from __future__ import annotations

import asyncio
import time

from kruise.kube.workqueue import QueueShutDown, WorkQueue

ITEMS = 100_000


async def run(workers: int, items: int, named: bool) -> float:
    queue: WorkQueue[int] = WorkQueue("bench" if named else "")
    done = 0

    async def worker() -> None:
        nonlocal done
        while True:
            try:
                item = await queue.get()
            except QueueShutDown:
                return
            queue.done(item)
            done += 1

    tasks = [asyncio.ensure_future(worker()) for _ in range(workers)]
    started = time.perf_counter()
    for start in range(0, items, 1000):
        for i in range(start, start + 1000):
            queue.add(i)
        await asyncio.sleep(0)
    await queue.shutdown_with_drain()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    assert done == items, (done, items)
    return items / elapsed


def main() -> None:
    for named in (False, True):
        label = "with metrics" if named else "no metrics  "
        for workers in (1, 4, 16):
            rate = asyncio.run(run(workers, ITEMS, named))
            print(f"{label} workers={workers:>2}: {rate:>10,.0f} items/s")


if __name__ == "__main__":
    main()
