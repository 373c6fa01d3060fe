"""The kubelet's log store: instances per restart, read options, follow until exit."""

from __future__ import annotations

import asyncio

import pytest

from kruise.sandbox.simulator.logs import ContainerLogs, LogOptions, NoInstance, rfc3339_nano


async def collect(logs: ContainerLogs, uid: str, options: LogOptions, previous: bool = False) -> str:
    instance = logs.instance(uid, "c", previous)
    return b"".join([chunk async for chunk in logs.read(instance, options)]).decode()


async def test_current_and_previous_instances():
    logs = ContainerLogs()
    with pytest.raises(NoInstance):
        logs.instance("u", "c", previous=False)
    logs.started("u", "c", 0, "first")
    logs.exited("u", "c", 0, "first exited")
    logs.exited("u", "c", 0, "ignored: already closed")
    logs.started("u", "c", 1, "second")
    assert await collect(logs, "u", LogOptions()) == "second\n"
    assert await collect(logs, "u", LogOptions(), previous=True) == "first\nfirst exited\n"
    logs.forget("u")
    with pytest.raises(NoInstance):
        logs.instance("u", "c", previous=True)


async def test_tail_limit_and_since():
    logs = ContainerLogs()
    for i in range(5):
        logs.started("u", "c", 0, f"line {i}")
    assert await collect(logs, "u", LogOptions(tail_lines=2)) == "line 3\nline 4\n"
    assert await collect(logs, "u", LogOptions(tail_lines=0)) == ""
    assert await collect(logs, "u", LogOptions(limit_bytes=9)) == "line 0\nli"
    newest = logs.instance("u", "c", False).lines[-1][0]
    assert await collect(logs, "u", LogOptions(since_ns=newest)) == "line 4\n"
    stamped = await collect(logs, "u", LogOptions(timestamps=True, tail_lines=1))
    assert stamped == f"{rfc3339_nano(newest)} line 4\n"


def test_rfc3339_nano():
    assert rfc3339_nano(1_700_000_000_000_000_123) == "2023-11-14T22:13:20.000000123Z"


async def test_follow_streams_until_exit():
    logs = ContainerLogs()
    logs.started("u", "c", 0, "hello")
    instance = logs.instance("u", "c", False)
    received: list[str] = []
    first_line = asyncio.Event()

    async def follow() -> None:
        async for chunk in logs.read(instance, LogOptions(follow=True)):
            received.append(chunk.decode())
            first_line.set()

    reader = asyncio.create_task(follow())
    await asyncio.wait_for(first_line.wait(), 5)
    assert not reader.done()
    logs.started("u", "c", 0, "more")
    logs.exited("u", "c", 0, "bye")
    await asyncio.wait_for(reader, 5)
    assert received == ["hello\n", "more\n", "bye\n"]
