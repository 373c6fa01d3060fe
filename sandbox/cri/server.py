"""``CriServer``: a ``FakeRuntime`` served as CRI ``runtime.v1`` over gRPC on a unix socket.

kruise-daemon and crictl talk to it exactly as to containerd. Requests map one to one onto
runtime methods with cause ``"cri"``, so the in-process kubelet can tell its own actions from
those of CRI clients. Runtime errors become the gRPC status codes containerd uses.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from google.protobuf.message import Message

from kruise.sandbox.cri import wire
from kruise.sandbox.cri.errors import CriError, InvalidArgumentError
from kruise.sandbox.cri.model import CAUSE_CRI, ContainerState, SandboxState
from kruise.sandbox.cri.runtime import KUBELET_API_VERSION, RUNTIME_API_VERSION, FakeRuntime
from kruise.sandbox.cri.schema import PACKAGE, SERVICES, messages, rpcs

IMAGE_FS_MOUNTPOINT = "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"

# proto3 enums are open: a newer client may filter by a state this subset does not know,
# which matches nothing rather than failing the call.
SANDBOX_STATES = frozenset(int(state) for state in SandboxState)
CONTAINER_STATES = frozenset(int(state) for state in ContainerState)

Handler = Callable[[Message, grpc.aio.ServicerContext], Awaitable[Message]]


def socket_path_of(address: str) -> Path:
    """Accept ``/path``, ``unix:/path`` or ``unix:///path`` (the forms kubelet flags use)."""
    if address.startswith("unix://"):
        address = address[len("unix://") :]
    elif address.startswith("unix:"):
        address = address[len("unix:") :]
    if not address:
        raise ValueError("socket path: must not be empty")
    return Path(address).absolute()


class CriServicer:
    """One coroutine per RPC, named as the RPC; each maps a request onto ``FakeRuntime``."""

    def __init__(self, runtime: FakeRuntime) -> None:
        self.runtime = runtime

    # RuntimeService

    async def Version(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        return messages.VersionResponse(
            version=KUBELET_API_VERSION,
            runtime_name=self.runtime.runtime_name,
            runtime_version=self.runtime.runtime_version,
            runtime_api_version=RUNTIME_API_VERSION,
        )

    async def RunPodSandbox(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        config = request.config
        if not config.HasField("metadata"):
            raise InvalidArgumentError("sandbox config must include metadata")
        meta = config.metadata
        sandbox_id = self.runtime.run_pod_sandbox(
            meta.name,
            meta.namespace,
            meta.uid,
            labels=dict(config.labels),
            annotations=dict(config.annotations),
            attempt=meta.attempt,
            runtime_handler=request.runtime_handler,
            kubelet_labels=False,
        )
        return messages.RunPodSandboxResponse(pod_sandbox_id=sandbox_id)

    async def StopPodSandbox(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        self.runtime.stop_pod_sandbox(request.pod_sandbox_id, cause=CAUSE_CRI)
        return messages.StopPodSandboxResponse()

    async def RemovePodSandbox(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        self.runtime.remove_pod_sandbox(request.pod_sandbox_id, cause=CAUSE_CRI)
        return messages.RemovePodSandboxResponse()

    async def PodSandboxStatus(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        sandbox = self.runtime.pod_sandbox(request.pod_sandbox_id)
        return messages.PodSandboxStatusResponse(
            status=wire.sandbox_status_message(sandbox), timestamp=self.runtime.clock()
        )

    async def ListPodSandbox(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        flt = request.filter
        if flt.HasField("state") and flt.state.state not in SANDBOX_STATES:
            return messages.ListPodSandboxResponse()
        sandboxes = self.runtime.list_pod_sandboxes(
            id=flt.id or None,
            state=SandboxState(flt.state.state) if flt.HasField("state") else None,
            labels=dict(flt.label_selector),
        )
        return messages.ListPodSandboxResponse(items=[wire.sandbox_message(s) for s in sandboxes])

    async def CreateContainer(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        config = request.config
        if not config.HasField("metadata"):
            raise InvalidArgumentError("container config must include metadata")
        container_id = self.runtime.create_container(
            request.pod_sandbox_id,
            config.metadata.name,
            config.image.image,
            attempt=config.metadata.attempt,
            labels=dict(config.labels),
            annotations=dict(config.annotations),
            command=list(config.command),
            args=list(config.args),
            log_path=config.log_path,
            envs=[(kv.key, bytes(kv.value).decode(errors="replace")) for kv in config.envs],
            resources=wire.resources_of(config.linux.resources),
            kubelet_labels=False,
            cause=CAUSE_CRI,
        )
        return messages.CreateContainerResponse(container_id=container_id)

    async def StartContainer(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        self.runtime.start_container(request.container_id, cause=CAUSE_CRI)
        return messages.StartContainerResponse()

    async def StopContainer(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        await self.runtime.terminate_container(request.container_id, request.timeout, cause=CAUSE_CRI)
        return messages.StopContainerResponse()

    async def RemoveContainer(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        self.runtime.remove_container(request.container_id, cause=CAUSE_CRI)
        return messages.RemoveContainerResponse()

    async def ListContainers(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        flt = request.filter
        if flt.HasField("state") and flt.state.state not in CONTAINER_STATES:
            return messages.ListContainersResponse()
        containers = self.runtime.list_containers(
            id=flt.id or None,
            sandbox_id=flt.pod_sandbox_id or None,
            state=ContainerState(flt.state.state) if flt.HasField("state") else None,
            labels=dict(flt.label_selector),
        )
        return messages.ListContainersResponse(containers=[wire.container_message(c) for c in containers])

    async def ContainerStatus(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        container = self.runtime.container(request.container_id)
        return messages.ContainerStatusResponse(status=wire.container_status_message(container))

    async def ExecSync(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        result = await self.runtime.execute(request.container_id, list(request.cmd), request.timeout)
        return messages.ExecSyncResponse(
            stdout=result.stdout, stderr=result.stderr, exit_code=result.exit_code
        )

    async def Exec(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        await self._no_streaming(context, "Exec", request.container_id)
        return messages.ExecResponse()

    async def Attach(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        await self._no_streaming(context, "Attach", request.container_id)
        return messages.AttachResponse()

    async def UpdateContainerResources(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        self.runtime.update_container_resources(request.container_id, wire.resources_of(request.linux))
        return messages.UpdateContainerResourcesResponse()

    async def _no_streaming(self, context: grpc.aio.ServicerContext, rpc: str, container_id: str) -> None:
        """The fake has no streaming server: its containers are host processes or simulated ones."""
        self.runtime.container(container_id)  # NOT_FOUND for an unknown container, as containerd
        await context.abort(
            grpc.StatusCode.UNIMPLEMENTED,
            f"{rpc}: the fake runtime has no streaming server; use kruise sandbox up --runtime containerd",
        )

    # ImageService

    async def ListImages(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        images = self.runtime.list_images(request.filter.image.image or None)
        return messages.ListImagesResponse(images=[wire.image_message(i) for i in images])

    async def ImageStatus(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        image = self.runtime.image_status(request.image.image)
        if image is None:
            return messages.ImageStatusResponse()
        return messages.ImageStatusResponse(image=wire.image_message(image))

    async def PullImage(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        auth = {field.name: value for field, value in request.auth.ListFields()} if request.auth else None
        image_ref = await self.runtime.pull_image(request.image.image, auth=auth or None)
        return messages.PullImageResponse(image_ref=image_ref)

    async def RemoveImage(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        if not request.image.image:
            raise InvalidArgumentError("image: must not be empty")
        self.runtime.remove_image(request.image.image)
        return messages.RemoveImageResponse()

    async def ImageFsInfo(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        images = self.runtime.list_images()
        usage = messages.FilesystemUsage(
            timestamp=self.runtime.clock(),
            fs_id=messages.FilesystemIdentifier(mountpoint=IMAGE_FS_MOUNTPOINT),
            used_bytes=messages.UInt64Value(value=sum(i.size for i in images)),
            inodes_used=messages.UInt64Value(value=len(images)),
        )
        return messages.ImageFsInfoResponse(image_filesystems=[usage])


def _guarded(handler: Handler) -> Handler:
    """Turn runtime errors into gRPC statuses; anything else stays an INTERNAL-style crash."""

    async def call(request: Message, context: grpc.aio.ServicerContext) -> Message:
        try:
            return await handler(request, context)
        except CriError as err:
            await context.abort(grpc.StatusCode[err.code], str(err))
            raise  # abort() raises; this line only satisfies type checkers

    return call


def generic_handlers(servicer: CriServicer) -> list[grpc.GenericRpcHandler]:
    """One generic handler per service, with (de)serializers from the private-pool classes."""
    handlers = []
    for service in SERVICES:
        methods = {
            rpc.name: grpc.unary_unary_rpc_method_handler(
                _guarded(getattr(servicer, rpc.name)),
                request_deserializer=rpc.request.FromString,
                response_serializer=rpc.response.SerializeToString,
            )
            for rpc in rpcs()
            if rpc.service == service
        }
        handlers.append(grpc.method_handlers_generic_handler(f"{PACKAGE}.{service}", methods))
    return handlers


class CriServer:
    """Serves one runtime on one unix socket. ``await start()`` ... ``await stop()``, or ``async with``."""

    def __init__(self, runtime: FakeRuntime, socket_path: str | os.PathLike[str]) -> None:
        self.runtime = runtime
        self.socket_path = socket_path_of(os.fspath(socket_path))
        self._server: grpc.aio.Server | None = None

    @property
    def endpoint(self) -> str:
        """The address clients dial, ``unix:///abs/path`` (kubelet's --container-runtime-endpoint form)."""
        return f"unix://{self.socket_path}"

    async def start(self) -> None:
        if self._server is not None:
            raise RuntimeError(f"CRI server on {self.socket_path} is already started")
        self._remove_stale_socket()
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        server = grpc.aio.server()
        server.add_generic_rpc_handlers(generic_handlers(CriServicer(self.runtime)))
        if server.add_insecure_port(f"unix:{self.socket_path}") == 0:
            raise OSError(f"cannot listen on unix socket {self.socket_path}")
        await server.start()
        self._server = server

    async def stop(self, grace: float | None = None) -> None:
        """Stop serving (in-flight calls get ``grace`` seconds) and remove the socket file."""
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace)
        self._remove_stale_socket()

    def _remove_stale_socket(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(self.socket_path.lstat().st_mode):
                self.socket_path.unlink()

    async def __aenter__(self) -> CriServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
