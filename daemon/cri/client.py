"""kruise-daemon's CRI client: the few runtime.v1 calls it makes, over a unix socket with grpc.aio.

Runtime discovery follows upstream: `--socket-file` wins; otherwise the well-known sockets of
containerd, CRI-O and cri-dockerd are probed under the host's /var/run (mounted at /hostvarrun in the
DaemonSet).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import grpc

from kruise.daemon.cri import api_pb2 as cri
from kruise.daemon.cri import api_pb2_grpc as cri_grpc

POD_UID_LABEL = "io.kubernetes.pod.uid"
POD_NAME_LABEL = "io.kubernetes.pod.name"
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
CONTAINER_NAME_LABEL = "io.kubernetes.container.name"

KNOWN_SOCKETS = (
    "containerd.sock",
    "containerd/containerd.sock",
    "crio.sock",
    "crio/crio.sock",
    "cri-dockerd.sock",
    "cri-dockerd/cri-dockerd.sock",
)


class RuntimeNotFound(RuntimeError):
    """No CRI socket: upstream's daemon exits with `not found container runtime sock`."""


def discover_socket(socket_file: str | None, host_run_dir: str | os.PathLike[str] = "/hostvarrun") -> Path:
    if socket_file:
        path = Path(socket_file.removeprefix("unix://").removeprefix("unix:"))
        if not path.is_absolute():
            path = Path(host_run_dir) / path
        if not path.exists():
            raise RuntimeNotFound(f"not found container runtime sock: {path}")
        return path
    for candidate in KNOWN_SOCKETS:
        path = Path(host_run_dir) / candidate
        if path.exists():
            return path
    raise RuntimeNotFound(f"not found container runtime sock under {host_run_dir}")


class RuntimeClient:
    """`async with RuntimeClient(path) as runtime: await runtime.version()`."""

    def __init__(self, socket_path: str | os.PathLike[str], *, timeout: float = 10.0) -> None:
        self.target = f"unix://{Path(socket_path).absolute()}"
        self.timeout = timeout
        self._channel: grpc.aio.Channel | None = None
        self._runtime: cri_grpc.RuntimeServiceStub | None = None
        self._images: cri_grpc.ImageServiceStub | None = None

    async def __aenter__(self) -> RuntimeClient:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def open(self) -> None:
        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(self.target)
            self._runtime = cri_grpc.RuntimeServiceStub(self._channel)
            self._images = cri_grpc.ImageServiceStub(self._channel)

    async def close(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            await channel.close()

    @property
    def runtime(self) -> cri_grpc.RuntimeServiceStub:
        if self._runtime is None:
            raise RuntimeError("RuntimeClient is not open")
        return self._runtime

    @property
    def images(self) -> cri_grpc.ImageServiceStub:
        if self._images is None:
            raise RuntimeError("RuntimeClient is not open")
        return self._images

    # ---- runtime ---------------------------------------------------------------------------

    async def version(self) -> cri.VersionResponse:
        return await self.runtime.Version(cri.VersionRequest(version="v1"), timeout=self.timeout)

    async def list_containers(
        self, labels: Mapping[str, str] | None = None, *, container_id: str = ""
    ) -> Sequence[cri.Container]:
        request = cri.ListContainersRequest(
            filter=cri.ContainerFilter(id=container_id, label_selector=dict(labels or {}))
        )
        return (await self.runtime.ListContainers(request, timeout=self.timeout)).containers

    async def container_status(self, container_id: str) -> cri.ContainerStatus:
        request = cri.ContainerStatusRequest(container_id=container_id)
        return (await self.runtime.ContainerStatus(request, timeout=self.timeout)).status

    async def stop_container(self, container_id: str, grace_seconds: int) -> None:
        request = cri.StopContainerRequest(container_id=container_id, timeout=grace_seconds)
        await self.runtime.StopContainer(request, timeout=self.timeout + grace_seconds)

    async def exec_sync(
        self, container_id: str, command: Sequence[str], timeout_seconds: int
    ) -> cri.ExecSyncResponse:
        request = cri.ExecSyncRequest(container_id=container_id, cmd=list(command), timeout=timeout_seconds)
        return await self.runtime.ExecSync(request, timeout=self.timeout + timeout_seconds)

    # ---- images ----------------------------------------------------------------------------

    async def list_images(self) -> Sequence[cri.Image]:
        return (await self.images.ListImages(cri.ListImagesRequest(), timeout=self.timeout)).images

    async def image_status(self, image: str) -> cri.Image | None:
        response = await self.images.ImageStatus(
            cri.ImageStatusRequest(image=cri.ImageSpec(image=image)), timeout=self.timeout
        )
        return response.image if response.HasField("image") and response.image.id else None

    async def pull_image(
        self,
        image: str,
        *,
        auth: cri.AuthConfig | None = None,
        sandbox_annotations: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> str:
        """The image reference (id) the runtime pulled."""
        request = cri.PullImageRequest(image=cri.ImageSpec(image=image))
        if auth is not None:
            request.auth.CopyFrom(auth)
        if sandbox_annotations:
            request.sandbox_config.annotations.update(sandbox_annotations)
        response = await self.images.PullImage(request, timeout=timeout)
        return response.image_ref
