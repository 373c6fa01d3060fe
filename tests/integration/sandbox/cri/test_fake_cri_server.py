"""The fake runtime over real CRI gRPC on a unix socket, as kruise-daemon and crictl see it."""

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from kruise.sandbox.cri import CAUSE_CRI, ContainerEventType, ContainerState, ExecResult, FakeRuntime
from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import enum_value, messages
from kruise.sandbox.cri.server import CriServer

RUNNING = enum_value("ContainerState", "CONTAINER_RUNNING")
EXITED = enum_value("ContainerState", "CONTAINER_EXITED")
NOTREADY = enum_value("PodSandboxState", "SANDBOX_NOTREADY")


@pytest.fixture
def socket_dir() -> AsyncIterator[Path]:
    # Unix socket paths are limited to ~107 bytes, which pytest's tmp_path can exceed.
    path = Path(tempfile.mkdtemp(prefix="cri-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def runtime() -> FakeRuntime:
    return FakeRuntime("node-a", speed=1000.0)


@pytest.fixture
async def server(runtime: FakeRuntime, socket_dir: Path) -> AsyncIterator[CriServer]:
    server = await runtime.serve(str(socket_dir / "containerd.sock"))
    yield server
    await server.stop()


@pytest.fixture
async def cri(server: CriServer) -> AsyncIterator[CriClient]:
    async with CriClient(server.endpoint) as client:
        yield client


async def kubelet_pod(
    runtime: FakeRuntime, pod: str, containers: list[str], image: str = "nginx:1.25"
) -> str:
    """Run a pod the way the simulated kubelet does, through the in-process API."""
    await runtime.pull_image(image)
    sandbox_id = runtime.run_pod_sandbox(pod, "default", f"uid-{pod}")
    for name in containers:
        runtime.start_container(runtime.create_container(sandbox_id, name, image))
    return sandbox_id


async def test_version(cri: CriClient) -> None:
    response = await cri.Version(messages.VersionRequest(version="v1"))
    assert (response.runtime_name, response.runtime_api_version, response.version) == (
        "containerd",
        "v1",
        "0.1.0",
    )


async def test_pull_then_list_and_status(cri: CriClient, runtime: FakeRuntime) -> None:
    pulled = await cri.PullImage(messages.PullImageRequest(image=messages.ImageSpec(image="nginx:1.25")))
    assert pulled.image_ref == runtime.image_ref("nginx:1.25")
    listed = await cri.ListImages(messages.ListImagesRequest())
    (image,) = listed.images
    assert image.id == pulled.image_ref
    assert list(image.repo_tags) == ["docker.io/library/nginx:1.25"]
    assert image.repo_digests[0].startswith("docker.io/library/nginx@sha256:")
    assert image.size > 0
    status = await cri.ImageStatus(messages.ImageStatusRequest(image=messages.ImageSpec(image="nginx:1.25")))
    assert status.HasField("image") and status.image.id == pulled.image_ref
    fs = await cri.ImageFsInfo(messages.ImageFsInfoRequest())
    assert fs.image_filesystems[0].used_bytes.value == image.size


async def test_image_status_of_missing_image_is_empty_not_an_error(cri: CriClient) -> None:
    status = await cri.ImageStatus(messages.ImageStatusRequest(image=messages.ImageSpec(image="nope:1")))
    assert not status.HasField("image")


async def test_failed_pull_is_not_found_with_containerd_message(cri: CriClient, runtime: FakeRuntime) -> None:
    runtime.fail_images.add("*:missing")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cri.PullImage(messages.PullImageRequest(image=messages.ImageSpec(image="app:missing")))
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert 'failed to pull and unpack image "docker.io/library/app:missing"' in caught.value.details()


async def test_remove_image_is_idempotent(cri: CriClient, runtime: FakeRuntime) -> None:
    await runtime.pull_image("busybox")
    request = messages.RemoveImageRequest(image=messages.ImageSpec(image="busybox"))
    await cri.RemoveImage(request)
    await cri.RemoveImage(request)
    assert (await cri.ListImages(messages.ListImagesRequest())).images == []
    assert not runtime.has_image("busybox")


async def test_list_containers_with_filters(cri: CriClient, runtime: FakeRuntime) -> None:
    web = await kubelet_pod(runtime, "web-0", ["app", "sidecar"])
    await kubelet_pod(runtime, "web-1", ["app"])
    runtime.stop_container(
        runtime.list_containers(sandbox_id=web, labels={"io.kubernetes.container.name": "sidecar"})[0].id
    )

    async def names(**filter_fields) -> list[tuple[str, str]]:
        response = await cri.ListContainers(
            messages.ListContainersRequest(filter=messages.ContainerFilter(**filter_fields))
        )
        return [(c.labels["io.kubernetes.pod.name"], c.metadata.name) for c in response.containers]

    assert await names() == [("web-0", "app"), ("web-0", "sidecar"), ("web-1", "app")]
    assert await names(pod_sandbox_id=web) == [("web-0", "app"), ("web-0", "sidecar")]
    assert await names(state=messages.ContainerStateValue(state=RUNNING)) == [
        ("web-0", "app"),
        ("web-1", "app"),
    ]
    assert await names(state=messages.ContainerStateValue(state=EXITED)) == [("web-0", "sidecar")]
    assert await names(label_selector={"io.kubernetes.pod.name": "web-1"}) == [("web-1", "app")]
    assert await names(state=messages.ContainerStateValue(state=42)) == []
    sandboxes = await cri.ListPodSandbox(messages.ListPodSandboxRequest())
    assert [s.metadata.name for s in sandboxes.items] == ["web-0", "web-1"]


async def test_container_status_reports_kubelet_visible_fields(cri: CriClient, runtime: FakeRuntime) -> None:
    sandbox_id = await kubelet_pod(runtime, "web-0", ["app"])
    (container,) = runtime.list_containers(sandbox_id=sandbox_id)
    response = await cri.ContainerStatus(messages.ContainerStatusRequest(container_id=container.id))
    status = response.status
    assert status.id == container.id
    assert (status.metadata.name, status.state) == ("app", RUNNING)
    assert status.image.image == "docker.io/library/nginx:1.25"
    assert status.image.user_specified_image == "nginx:1.25"
    assert status.image_ref == container.image_ref
    assert status.image_id == runtime.image_ref("nginx:1.25")
    assert status.started_at >= status.created_at > 0
    assert status.labels["io.kubernetes.pod.namespace"] == "default"


async def test_unknown_container_is_not_found(cri: CriClient) -> None:
    for method, request in [
        ("ContainerStatus", messages.ContainerStatusRequest(container_id="0" * 64)),
        ("StopContainer", messages.StopContainerRequest(container_id="0" * 64)),
        ("StartContainer", messages.StartContainerRequest(container_id="0" * 64)),
    ]:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await cri.call(method, request)
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND, method
        assert "not found" in caught.value.details()
    await cri.RemoveContainer(messages.RemoveContainerRequest(container_id="0" * 64))


async def test_stop_container_over_cri_emits_a_cri_caused_event(cri: CriClient, runtime: FakeRuntime) -> None:
    sandbox_id = await kubelet_pod(runtime, "web-0", ["app"])
    (container,) = runtime.list_containers(sandbox_id=sandbox_id)
    with runtime.subscribe() as events:
        await cri.StopContainer(messages.StopContainerRequest(container_id=container.id, timeout=10))
        event = await events.get()
    assert (event.type, event.cause, event.container.id) == (
        ContainerEventType.STOPPED,
        CAUSE_CRI,
        container.id,
    )
    assert runtime.container(container.id).state == ContainerState.EXITED
    status = await cri.ContainerStatus(messages.ContainerStatusRequest(container_id=container.id))
    assert (status.status.state, status.status.reason) == (EXITED, "Completed")


async def test_full_lifecycle_over_cri(cri: CriClient, runtime: FakeRuntime) -> None:
    config = messages.PodSandboxConfig(
        metadata=messages.PodSandboxMetadata(name="probe", namespace="kube-system", uid="u1"),
        labels={"a": "b"},
    )
    sandbox_id = (await cri.RunPodSandbox(messages.RunPodSandboxRequest(config=config))).pod_sandbox_id
    await cri.PullImage(messages.PullImageRequest(image=messages.ImageSpec(image="busybox:1")))
    created = await cri.CreateContainer(
        messages.CreateContainerRequest(
            pod_sandbox_id=sandbox_id,
            config=messages.ContainerConfig(
                metadata=messages.ContainerMetadata(name="c", attempt=1),
                image=messages.ImageSpec(image="busybox:1"),
                command=["sleep"],
                labels={"io.kubernetes.container.name": "c"},
            ),
            sandbox_config=config,
        )
    )
    container_id = created.container_id
    assert runtime.container(container_id).labels == {"io.kubernetes.container.name": "c"}
    await cri.StartContainer(messages.StartContainerRequest(container_id=container_id))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await cri.StartContainer(messages.StartContainerRequest(container_id=container_id))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    runtime.exec_handler = lambda container, cmd: ExecResult(exit_code=1, stderr=b"not ready")
    result = await cri.ExecSync(messages.ExecSyncRequest(container_id=container_id, cmd=["cat", "/ready"]))
    assert (result.exit_code, result.stderr) == (1, b"not ready")

    status = await cri.PodSandboxStatus(messages.PodSandboxStatusRequest(pod_sandbox_id=sandbox_id))
    assert (status.status.metadata.namespace, dict(status.status.labels)) == ("kube-system", {"a": "b"})
    await cri.StopPodSandbox(messages.StopPodSandboxRequest(pod_sandbox_id=sandbox_id))
    status = await cri.PodSandboxStatus(messages.PodSandboxStatusRequest(pod_sandbox_id=sandbox_id))
    assert status.status.state == NOTREADY
    await cri.RemovePodSandbox(messages.RemovePodSandboxRequest(pod_sandbox_id=sandbox_id))
    await cri.RemovePodSandbox(messages.RemovePodSandboxRequest(pod_sandbox_id=sandbox_id))
    assert runtime.list_pod_sandboxes() == [] and runtime.list_containers() == []


async def test_bad_requests_are_invalid_argument(cri: CriClient) -> None:
    for method, request in [
        ("RunPodSandbox", messages.RunPodSandboxRequest()),
        ("PullImage", messages.PullImageRequest(image=messages.ImageSpec(image="Not/Valid"))),
        ("RemoveImage", messages.RemoveImageRequest()),
    ]:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await cri.call(method, request)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, method


async def test_stop_removes_the_socket_and_restart_reuses_the_path(
    runtime: FakeRuntime, socket_dir: Path
) -> None:
    path = socket_dir / "cri.sock"
    async with CriServer(runtime, f"unix://{path}") as server:
        assert path.is_socket()
        assert server.endpoint == f"unix://{path}"
    assert not path.exists()
    async with CriServer(runtime, str(path)), CriClient(path) as client:
        assert (await client.Version(messages.VersionRequest())).runtime_api_version == "v1"


async def test_rpcs_outside_the_subset_are_unimplemented(server: CriServer) -> None:
    async with grpc.aio.insecure_channel(server.endpoint) as channel:
        status = channel.unary_unary("/runtime.v1.RuntimeService/Status")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await status(b"", timeout=5)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED


async def test_exec_and_attach_streaming_say_the_fake_has_no_streaming_server(
    cri: CriClient, runtime: FakeRuntime
) -> None:
    sandbox_id = await kubelet_pod(runtime, "streamed", ["c"])
    (container,) = runtime.list_containers(sandbox_id=sandbox_id)
    requests = {
        "Exec": messages.ExecRequest(container_id=container.id, cmd=["sh"], stdout=True),
        "Attach": messages.AttachRequest(container_id=container.id, stdout=True),
    }
    for rpc, request in requests.items():
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await cri.call(rpc, request)
        assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
        assert caught.value.details() == (
            f"{rpc}: the fake runtime has no streaming server; use kruise sandbox up --runtime containerd"
        )
    with pytest.raises(grpc.aio.AioRpcError) as unknown:
        await cri.Exec(messages.ExecRequest(container_id="nope", cmd=["sh"], stdout=True))
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
