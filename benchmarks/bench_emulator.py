"""Emulator throughput: creates/s, list latency over many objects, and watch fan-out events/s.

Run on demand: `.venv/bin/python benchmarks/bench_emulator.py [--objects N] [--watchers W]`.
The server runs in its own thread (as in tests); clients are aiohttp over HTTPS (the stack of
kubernetes-asyncio) in the same process, so the numbers include the client's share of one GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import time

import aiohttp

from kruise.sandbox.apiserver.threaded import serve_in_thread


def client(server, limit: int) -> aiohttp.ClientSession:
    ctx = ssl.create_default_context(cadata=server.ca_pem.decode())
    return aiohttp.ClientSession(
        base_url=server.url,
        connector=aiohttp.TCPConnector(ssl=ctx, limit=limit + 10),
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=aiohttp.ClientTimeout(total=600),
    )


async def bench(objects: int, watchers: int, concurrency: int) -> None:
    with serve_in_thread(watch_history_size=max(1000, objects * 2)) as server:
        async with client(server, watchers + concurrency) as c:
            path = "/api/v1/namespaces/default/configmaps"
            received = [0] * watchers
            ready = asyncio.Event()
            started = 0

            async def watcher(i: int) -> None:
                nonlocal started
                async with c.get(path + "?limit=1") as r:
                    rv = (await r.json())["metadata"]["resourceVersion"]
                async with c.get(f"{path}?watch=1&resourceVersion={rv}&timeoutSeconds=600") as stream:
                    started += 1
                    if started == watchers:
                        ready.set()
                    async for line in stream.content:
                        if line.strip():
                            received[i] += 1
                            if received[i] == objects:
                                return

            tasks = [asyncio.create_task(watcher(i)) for i in range(watchers)]
            if watchers:
                await asyncio.wait_for(ready.wait(), 60)
            sem = asyncio.Semaphore(concurrency)

            async def create(i: int) -> None:
                async with sem:
                    body = {
                        "metadata": {"name": f"cm-{i}", "labels": {"i": str(i % 10)}},
                        "data": {"k": "v" * 64},
                    }
                    async with c.post(path, json=body) as r:
                        r.raise_for_status()

            t0 = time.perf_counter()
            await asyncio.gather(*(create(i) for i in range(objects)))
            t_create = time.perf_counter() - t0
            await asyncio.wait_for(asyncio.gather(*tasks), 600)
            t_fanout = time.perf_counter() - t0
            t1 = time.perf_counter()
            async with c.get(path) as r:
                listed = await r.json()
            t_list = time.perf_counter() - t1
            t2 = time.perf_counter()
            async with c.get(path + "?labelSelector=i%3D3") as r:
                selected = await r.json()
            t_sel = time.perf_counter() - t2
    print(f"objects={objects} watchers={watchers} concurrency={concurrency}")
    print(f"create:  {objects / t_create:8.0f} objects/s  ({t_create:.2f}s)")
    print(
        f"fan-out: {objects * watchers / t_fanout:8.0f} events/s delivered to {watchers} watchers "
        f"({t_fanout:.2f}s until every watcher saw every create)"
    )
    print(
        f"list:    {len(listed['items'])} items in {t_list * 1000:.0f} ms; "
        f"label-selected {len(selected['items'])} in {t_sel * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    asyncio.run(bench(args.objects, args.watchers, args.concurrency))


if __name__ == "__main__":
    main()
