"""Lifecycle hook handlers as the kubelet runs them: exec through ExecSync, httpGet, sleep."""

from __future__ import annotations

import asyncio

from aiohttp import web

from kruise.sandbox.cri import CriError, ExecResult
from kruise.sandbox.simulator import hooks

POD = {"metadata": {"name": "p", "namespace": "ns", "uid": "u1"}}
CONTAINER = {"name": "app", "ports": [{"name": "http", "containerPort": 0}]}


def executor(result: ExecResult | CriError, seen: list):
    async def execute(command: list[str], timeout: int) -> ExecResult:
        seen.append((command, timeout))
        if isinstance(result, CriError):
            raise result
        return result

    return execute


async def run(handler: dict, execute=None, container=CONTAINER) -> str | None:
    return await hooks.run(
        handler,
        pod=POD,
        container=container,
        pod_ip="127.0.0.1",
        execute=execute or executor(ExecResult(0, b"", b""), []),
        scaled=lambda seconds: seconds / 1000,
    )


def test_handler_of_reads_the_lifecycle() -> None:
    container = {"lifecycle": {"postStart": {"exec": {"command": ["x"]}}}}
    assert hooks.handler_of(container, "postStart") == {"exec": {"command": ["x"]}}
    assert hooks.handler_of(container, "preStop") is None
    assert hooks.handler_of({}, "postStart") is None


async def test_exec_runs_without_timeout_and_reports_a_failure_as_the_kubelet() -> None:
    seen: list = []
    assert (
        await run(
            {"exec": {"command": ["/bin/sh", "/migrate.sh"]}}, executor(ExecResult(0, b"ok", b""), seen)
        )
        is None
    )
    assert seen == [(["/bin/sh", "/migrate.sh"], 0)]
    message = await run(
        {"exec": {"command": ["sh", "-c", "exit 3"]}}, executor(ExecResult(3, b"out\n", b"err"), [])
    )
    assert message == (
        'Exec lifecycle hook ([sh -c exit 3]) for Container "app" in Pod "p_ns(u1)" failed - error: '
        "command 'sh -c exit 3' exited with 3: err, message: \"out\\nerr\""
    )
    message = await run({"exec": {"command": ["nope"]}}, executor(CriError("executable file not found"), []))
    assert message is not None and "error: executable file not found" in message


async def test_http_get_fails_only_when_no_answer_comes() -> None:
    app = web.Application()

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404)

    app.router.add_get("/missing", missing)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        container = {"name": "app", "ports": [{"name": "http", "containerPort": port}]}
        assert await run({"httpGet": {"path": "/missing", "port": "http"}}, container=container) is None
    finally:
        await runner.cleanup()
    message = await run({"httpGet": {"path": "/x", "port": port}})
    assert message is not None and message.startswith(
        'HTTP lifecycle hook (/x) for Container "app" in Pod "p_ns(u1)"'
    )


async def test_sleep_waits_scaled_seconds_and_an_empty_handler_fails() -> None:
    await asyncio.wait_for(run({"sleep": {"seconds": 5}}), timeout=5)
    message = await run({})
    assert message is not None and "has no handler" in message


async def test_unknown_named_port_is_a_failure() -> None:
    message = await run({"httpGet": {"path": "/", "port": "nosuch"}})
    assert message is not None and "nosuch" in message
