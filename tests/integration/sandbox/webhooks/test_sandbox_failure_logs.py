"""A sandbox that fails keeps its logs (pods, host-process components, events) in one directory and
`kruise sandbox up` names it in one line; one that stops normally leaves nothing behind."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.failurelogs import PREFIX
from kruise.sandbox.simulator.client import Client
from kruise.sandbox.up import UpOptions, run_up
from tests.kit.polling import until

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
}


@pytest.fixture(autouse=True)
def temp_root(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Kept directories land under a test-owned temp root (and go with it). A short one: the sandbox's
    CRI sockets live below it, and a unix socket path must stay under 108 bytes — the test's own
    tmp_path, named after the test, on a pytest-xdist worker's base temp, is one byte too long."""
    root = tmp_path_factory.mktemp("t")
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def kept(root: Path) -> list[Path]:
    return sorted(root.glob(PREFIX + "*"))


class FailsAfterAPodRuns:
    """A component (as kruise-webhook would be) that logs to a file, sees a pod run, then fails."""

    name = "flaky-component"

    def __init__(self, log_file: Path) -> None:
        self.log_file = log_file

    async def start(self, sandbox: Sandbox) -> None:
        self.log_file.write_text("flaky-component: cannot reach its webhook\n")
        client = Client(sandbox.kubeconfig)
        try:
            await client.create("/api/v1/namespaces/default/pods", POD)
            path = "/api/v1/namespaces/default/pods/web"
            await until(lambda: _running(client, path), timeout=30, message="pod web running")
            await until(lambda: _scheduled_event(client), timeout=30, message="Scheduled event of web")
        finally:
            await client.close()
        raise RuntimeError("flaky-component: not ready")

    async def stop(self) -> None:
        """Nothing of its own to stop."""


async def _scheduled_event(client: Client) -> bool:
    events = (await client.list("/api/v1/namespaces/default/events"))["items"]
    return any(e["reason"] == "Scheduled" and e["involvedObject"]["name"] == "web" for e in events)


async def _running(client: Client, path: str) -> bool:
    return ((await client.get(path)).get("status") or {}).get("phase") == "Running"


async def test_a_start_failure_keeps_pod_and_component_logs_and_names_the_directory(temp_root: Path):
    lines: list[str] = []
    component = FailsAfterAPodRuns(temp_root / "flaky-component.log")
    options = UpOptions(nodes=1, speed=20, components=[component], install_crds=False)
    with pytest.raises(RuntimeError, match="not ready"):
        await run_up(options, lines.append)

    (directory,) = kept(temp_root)
    assert [line for line in lines if str(directory) in line] == [
        f"sandbox failed; its logs are kept in {directory}"
    ]
    pod_log = (directory / "pods" / "default_web" / "nginx.log").read_text()
    assert '[sandbox] container "nginx" started on node-1' in pod_log
    assert (directory / "flaky-component.log").read_text() == "flaky-component: cannot reach its webhook\n"
    events = (directory / "events.txt").read_text()
    assert "Scheduled Pod/default/web" in events


async def test_a_failure_while_up_keeps_the_logs_too(temp_root: Path):
    with pytest.raises(RuntimeError, match="demo step failed"):
        async with Sandbox(nodes=1, speed=20, crd_dir=None) as sandbox:
            client = Client(sandbox.kubeconfig)
            try:
                await client.create("/api/v1/namespaces/default/pods", POD)
                await until(lambda: _running(client, "/api/v1/namespaces/default/pods/web"), timeout=30)
            finally:
                await client.close()
            raise RuntimeError("demo step failed")
    assert kept(temp_root) == [sandbox.kept_logs]
    assert (sandbox.kept_logs / "pods" / "default_web" / "nginx.log").is_file()


async def test_a_normal_stop_keeps_nothing(temp_root: Path):
    async with Sandbox(nodes=1, speed=20, crd_dir=None) as sandbox:
        pass
    assert sandbox.kept_logs is None and kept(temp_root) == []
