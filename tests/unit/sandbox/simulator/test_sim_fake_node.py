"""FakeNodeRuntime: the kubelet's NodeRuntime over the in-memory FakeRuntime (simulated containers)."""

from __future__ import annotations

from functools import partial

import pytest

from kruise.sandbox.cri import CAUSE_CRI, ContainerState, FakeRuntime
from kruise.sandbox.simulator.fake_node import FakeNodeRuntime
from kruise.sandbox.simulator.logs import LogOptions, NoInstance
from kruise.sandbox.simulator.node import NodeSpec
from kruise.sandbox.simulator.noderuntime import ContainerExit, NodeRuntime
from kruise.sandbox.simulator.timing import Timing
from tests.kit.pods import pod
from tests.kit.polling import until

NGINX = {"name": "app", "image": "nginx:alpine", "command": ["nginx"], "args": ["-g", "daemon off;"]}
nginx_pod = partial(pod, containers=[NGINX])


@pytest.fixture
async def node():
    runtime = FakeNodeRuntime(FakeRuntime("node-1"), NodeSpec("node-1", 1, "zone-a"), Timing())
    exits: list[ContainerExit] = []
    await runtime.start(exits.append)
    yield runtime, exits
    await runtime.close()


async def read_all(runtime: FakeNodeRuntime, uid: str, previous: bool = False) -> str:
    read = runtime.open_log(uid, "app", previous)
    return b"".join([chunk async for chunk in read(LogOptions())]).decode()


async def started(runtime: FakeNodeRuntime, manifest: dict) -> tuple[str, str]:
    sandbox = await runtime.run_pod_sandbox(manifest)
    spec = manifest["spec"]["containers"][0]
    await runtime.pull_image(spec["image"])
    container_id = await runtime.create_container(sandbox, manifest, spec, 0)
    await runtime.start_container(container_id)
    return sandbox.id, container_id


def test_fake_node_runtime_has_every_method_of_the_protocol():
    assert isinstance(FakeNodeRuntime(FakeRuntime("n"), NodeSpec("n", 1, "z"), Timing()), NodeRuntime)


async def test_sandbox_ips_come_from_the_pool_and_go_back_when_the_sandbox_stops(node):
    runtime, _exits = node
    first = await runtime.run_pod_sandbox(nginx_pod("a", uid="uid-a"))
    second = await runtime.run_pod_sandbox(nginx_pod("b", uid="uid-b"))
    assert (first.ip, second.ip) == ("127.244.1.2", "127.244.1.3")
    host = await runtime.run_pod_sandbox(nginx_pod("h", uid="uid-h", hostNetwork=True))
    assert host.ip == "127.18.0.2"  # the node's InternalIP, not a pool address
    await runtime.stop_pod_sandbox(first.id)
    await runtime.remove_pod_sandbox(first.id)  # gives nothing back twice
    await runtime.remove_pod_sandbox(second.id)
    # .2 to .254, all free
    again = [await runtime.run_pod_sandbox(nginx_pod(f"p{i}", uid=f"uid-p{i}")) for i in range(253)]
    assert {s.ip for s in again} >= {first.ip, second.ip}
    with pytest.raises(RuntimeError, match="pod CIDR exhausted"):
        await runtime.run_pod_sandbox(nginx_pod("one-too-many", uid="uid-one-too-many"))


async def test_a_simulated_container_reports_status_and_a_synthetic_log(node):
    runtime, exits = node
    _sandbox, container_id = await started(runtime, nginx_pod("web", uid="uid-web"))
    status = await runtime.container_status(container_id)
    assert status is not None and status.simulated and status.state == ContainerState.RUNNING
    assert status.requested_image == "nginx:alpine"
    assert status.image == "docker.io/library/nginx:alpine"
    assert status.image_ref.startswith("docker.io/library/nginx@sha256:")
    assert not await runtime.task_alive(container_id)
    await runtime.finish_simulated(container_id, 137)
    status = await runtime.container_status(container_id)
    assert status is not None and (status.state, status.exit_code, status.reason) == (
        ContainerState.EXITED,
        137,
        "Error",
    )
    log = await read_all(runtime, "uid-web")
    assert log.startswith('[sandbox] container "app" started on node-1 (image "nginx:alpine", restart 0)')
    assert "command: nginx -g daemon off;" in log
    assert exits == []  # the kubelet's own stop is not reported back to it
    with pytest.raises(NoInstance):
        runtime.open_log("uid-web", "app", previous=True)


async def test_a_stop_by_another_cri_client_is_reported_with_its_pod(node):
    runtime, exits = node
    _sandbox, container_id = await started(runtime, nginx_pod("web", uid="uid-web"))
    await runtime.runtime.terminate_container(container_id, 5, cause=CAUSE_CRI)

    await until(lambda: exits, message="the CRI stop reaches the kubelet")
    [exited] = exits
    assert (exited.container_id, exited.pod_key, exited.pod_uid, exited.container_name) == (
        container_id,
        "default/web",
        "uid-web",
        "app",
    )
    assert "exited with code 0 (Completed)" in await read_all(runtime, "uid-web")


async def test_removing_the_sandbox_forgets_its_containers_and_logs(node):
    runtime, _exits = node
    sandbox_id, container_id = await started(runtime, nginx_pod("web", uid="uid-web"))
    await runtime.remove_pod_sandbox(sandbox_id)
    assert await runtime.container_status(container_id) is None
    with pytest.raises(NoInstance):
        runtime.open_log("uid-web", "app", previous=False)


async def test_pull_answers_the_image_ref_and_status_its_size(node):
    runtime, _exits = node
    assert not await runtime.image_present("busybox:1.35.0")
    assert await runtime.image_status("busybox:1.35.0") is None
    ref = await runtime.pull_image("busybox:1.35.0")
    info = await runtime.image_status(ref)
    assert info is not None and info.id == ref and info.size > 0
    assert await runtime.image_present("busybox:1.35.0")
