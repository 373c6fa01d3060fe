"""preStop hooks run by the simulated kubelet before it stops a real container
(``Sandbox(runtime="containerd")``).

- an ``httpGet`` hook is called before the container gets SIGTERM: while the test's server holds the hook's
  request, the container (whose shell exits at once on TERM) still answers ``kubectl exec``; once answered,
  the container is stopped and the deleted pod goes;
- an ``exec`` hook runs inside the container (it leaves a file the test reads while the hook still runs);
- a hook that exits non-zero is the Warning ``FailedPreStopHook`` with the kubelet's bare "PreStopHook
  failed", and the pod still goes;
- a hook that never ends is given the grace period only: the container, which ignores SIGTERM, is then
  stopped (SIGKILL after the kubelet's minimal window) and the pod goes.

Needs root and the Debian packages of the real nodes; skipped with the apt-get line otherwise.
"""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.realnode import prereqs
from kruise.sandbox.simulator.client import ApiError, Client, resource_path
from kruise.sandbox.up import find_kubectl
from tests.kit.pods import pod
from tests.kit.polling import until, until_fetched

pytestmark = [pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(300)]

PODS = resource_path("v1", "pods", "default")
EXITS_ON_TERM = "trap 'exit 0' TERM; while true; do sleep 0.1; done"
IGNORES_TERM = "trap '' TERM; while true; do sleep 0.1; done"


def stopping_pod(name: str, main: str, pre_stop: dict, grace: int) -> dict:
    """A busybox pod running `main`, with preStop hook `pre_stop` and `grace` seconds to stop."""
    container = {
        "name": "main",
        "image": "busybox:1.35.0",
        "command": ["sh", "-c", main],
        "lifecycle": {"preStop": pre_stop},
    }
    return pod(name, grace=grace, containers=[container], typed=True)


def ready(obj: dict) -> bool:
    return bool(((obj.get("status") or {}).get("containerStatuses") or [{}])[0].get("ready"))


async def kubectl(sandbox: Sandbox, *args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        find_kubectl(), "--kubeconfig", str(sandbox.kubeconfig), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await process.communicate()
    return process.returncode or 0, out.decode()


class HookServer:
    """Answers the kubelet's preStop GET only when the test says so."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.release = asyncio.Event()
        self.paths: list[str] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.paths.append(request.path_qs)
        self.called.set()
        await self.release.wait()
        return web.Response(text="drained")


async def test_pre_stop_hooks_run_before_the_real_container_stops() -> None:
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))
    server = HookServer()
    app = web.Application()
    app.router.add_get("/drain", server.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    async with Sandbox(nodes=1, speed=20, crd_dir=None, runtime="containerd") as sandbox:
        client = Client(sandbox.kubeconfig)
        try:
            http_hook = {"httpGet": {"host": "127.0.0.1", "port": port, "path": "/drain?pod=http"}}
            exec_hook = {"exec": {"command": ["sh", "-c", "echo draining > /tmp/prestop; sleep 3600"]}}
            bodies = [
                stopping_pod("http", EXITS_ON_TERM, http_hook, 600),
                stopping_pod("exec", EXITS_ON_TERM, exec_hook, 600),
                stopping_pod("failing", EXITS_ON_TERM, {"exec": {"command": ["sh", "-c", "exit 7"]}}, 600),
                stopping_pod("endless", IGNORES_TERM, {"exec": {"command": ["sleep", "3600"]}}, 20),
            ]
            for body in bodies:
                await client.create(PODS, body)
            for body in bodies:
                name = body["metadata"]["name"]
                await until_fetched(
                    lambda name=name: client.get(resource_path("v1", "pods", "default", name)),
                    ready,
                    timeout=90,
                    message=f"{name} ready",
                )

            async def gone(name: str) -> bool:
                try:
                    await client.get(resource_path("v1", "pods", "default", name))
                except ApiError as error:
                    return error.not_found
                return False

            # httpGet: the container runs (no SIGTERM yet) while the hook's request is held
            await client.delete(resource_path("v1", "pods", "default", "http"))
            await asyncio.wait_for(server.called.wait(), 60)
            assert server.paths == ["/drain?pod=http"]
            code, out = await kubectl(sandbox, "exec", "http", "--", "echo", "still running")
            assert (code, out) == (0, "still running\n")
            assert not await gone("http")
            server.release.set()
            await until(lambda: gone("http"), timeout=60, interval=0.2, message="http pod gone")

            # exec: the hook runs inside the container, before it is stopped
            await client.delete(resource_path("v1", "pods", "default", "exec"))
            marker = await until_fetched(
                lambda: kubectl(sandbox, "exec", "exec", "--", "cat", "/tmp/prestop"),
                lambda result: result[0] == 0,
                timeout=60,
                interval=0.2,
                message="the exec hook's file",
            )
            assert marker == (0, "draining\n")

            # a failing hook: FailedPreStopHook, and the pod still goes
            await client.delete(resource_path("v1", "pods", "default", "failing"))

            async def hook_events() -> list[dict]:
                listed = await client.list(
                    resource_path("v1", "events", "default"), fieldSelector="involvedObject.name=failing"
                )
                return [e for e in listed["items"] if e["reason"] == "FailedPreStopHook"]

            (event, *_) = await until(hook_events, timeout=60, interval=0.2, message="FailedPreStopHook")
            assert (event["type"], event["message"]) == ("Warning", "PreStopHook failed")
            assert event["involvedObject"]["fieldPath"] == "spec.containers{main}"
            assert event["source"]["component"] == "kubelet"
            await until(lambda: gone("failing"), timeout=60, interval=0.2, message="failing pod gone")

            # a hook that never ends gets the grace period only; a TERM-ignoring container is then killed
            await client.delete(resource_path("v1", "pods", "default", "endless"))
            await until(lambda: gone("endless"), timeout=60, interval=0.2, message="endless pod gone")
        finally:
            server.release.set()
            await client.close()
    await runner.cleanup()
