"""postStart hooks run by the simulated kubelet inside real containers (``Sandbox(runtime="containerd")``).

A hook that succeeds ran in the container before the container was reported ready (the kubelet holds
the pod's sync while it runs: the file the hook writes last exists by the first status that says
ready). A hook that exits non-zero is a ``FailedPostStartHook`` event carrying the kubelet's message
(command, exit code, output), the container is killed and restarted, and it is never ready.

Needs root and the Debian packages of the real nodes; skipped with the apt-get line otherwise.
"""

from __future__ import annotations

import asyncio

import pytest

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.realnode import prereqs
from kruise.sandbox.simulator.client import Client, resource_path
from kruise.sandbox.up import find_kubectl
from tests.kit.pods import pod
from tests.kit.polling import until, until_fetched

pytestmark = [pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(300)]

PODS = resource_path("v1", "pods", "default")


def hooked_pod(name: str, hook: list[str]) -> dict:
    """A sleeping busybox pod whose postStart hook runs `hook`."""
    container = {
        "name": "main",
        "image": "busybox:1.35.0",
        "command": ["sh", "-c", "exec sleep 3600"],
        "lifecycle": {"postStart": {"exec": {"command": hook}}},
    }
    return pod(name, grace=1, containers=[container], typed=True)


def status(obj: dict) -> dict:
    return ((obj.get("status") or {}).get("containerStatuses") or [{}])[0]


async def kubectl(sandbox: Sandbox, *args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        find_kubectl(), "--kubeconfig", str(sandbox.kubeconfig), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await process.communicate()
    return process.returncode or 0, out.decode()


async def test_post_start_hooks_run_in_the_real_container() -> None:
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))
    async with Sandbox(nodes=1, speed=20, crd_dir=None, runtime="containerd") as sandbox:
        client = Client(sandbox.kubeconfig)
        try:
            hooked = hooked_pod(
                "hooked", ["sh", "-c", "echo $HOSTNAME > /tmp/first; sleep 1; touch /tmp/done"]
            )
            failing = hooked_pod("failing", ["sh", "-c", "echo no luck; exit 3"])
            for body in (hooked, failing):
                await client.create(PODS, body)

            def get(name: str):
                return lambda: client.get(resource_path("v1", "pods", "default", name))

            await until_fetched(
                get("hooked"), lambda p: status(p).get("ready"), timeout=90, message="hooked ready"
            )
            code, out = await kubectl(
                sandbox, "exec", "hooked", "--", "sh", "-c", "cat /tmp/first; ls /tmp/done"
            )
            assert (code, out) == (0, "hooked\n/tmp/done\n")

            restarted = await until_fetched(
                get("failing"),
                lambda p: status(p).get("restartCount", 0) >= 1,
                timeout=90,
                message="failing restarted",
            )
            assert not status(restarted).get("ready")

            async def hook_event() -> list[dict]:
                listed = await client.list(
                    resource_path("v1", "events", "default"), fieldSelector="involvedObject.name=failing"
                )
                return [e for e in listed["items"] if e["reason"] == "FailedPostStartHook"]

            (event, *_) = await until(
                hook_event, timeout=30, interval=0.2, message="FailedPostStartHook event"
            )
            assert event["type"] == "Warning"
            assert event["involvedObject"]["fieldPath"] == "spec.containers{main}"
            uid = restarted["metadata"]["uid"]
            assert event["message"] == (
                f'Exec lifecycle hook ([sh -c echo no luck; exit 3]) for Container "main" in Pod '
                f'"failing_default({uid})" failed - error: '
                "command 'sh -c echo no luck; exit 3' exited with 3: , "
                'message: "no luck\\n"'
            )
        finally:
            await client.close()
