"""Records of the fake runtime -> CRI ``runtime.v1`` messages.

Where containerd fills a field from somewhere specific, so does this: ``Container.image`` is the
spec the creator gave and ``image_ref`` the image id (ListContainers), while
``ContainerStatus.image`` is the resolved repo tag and ``image_ref`` the repo digest, which
the kubelet turns into ``containerStatuses[].image`` / ``imageID``.
"""

from __future__ import annotations

from google.protobuf.message import Message

from kruise.sandbox.cri.model import Container, Image, LinuxResources, PodSandbox
from kruise.sandbox.cri.schema import messages


def resources_message(resources: LinuxResources) -> Message:
    return messages.LinuxContainerResources(
        cpu_period=resources.cpu_period,
        cpu_quota=resources.cpu_quota,
        cpu_shares=resources.cpu_shares,
        memory_limit_in_bytes=resources.memory_limit_in_bytes,
    )


def resources_of(message: Message) -> LinuxResources:
    """A LinuxContainerResources message as the record keeps it."""
    return LinuxResources(
        cpu_period=message.cpu_period,
        cpu_quota=message.cpu_quota,
        cpu_shares=message.cpu_shares,
        memory_limit_in_bytes=message.memory_limit_in_bytes,
    )


def image_message(image: Image) -> Message:
    return messages.Image(
        id=image.id,
        repo_tags=list(image.repo_tags),
        repo_digests=list(image.repo_digests),
        size=image.size,
        spec=messages.ImageSpec(image=image.id),
        pinned=image.pinned,
    )


def _sandbox_metadata(sandbox: PodSandbox) -> Message:
    return messages.PodSandboxMetadata(
        name=sandbox.name, uid=sandbox.uid, namespace=sandbox.namespace, attempt=sandbox.attempt
    )


def sandbox_message(sandbox: PodSandbox) -> Message:
    return messages.PodSandbox(
        id=sandbox.id,
        metadata=_sandbox_metadata(sandbox),
        state=int(sandbox.state),
        created_at=sandbox.created_at,
        labels=sandbox.labels,
        annotations=sandbox.annotations,
        runtime_handler=sandbox.runtime_handler,
    )


def sandbox_status_message(sandbox: PodSandbox) -> Message:
    return messages.PodSandboxStatus(
        id=sandbox.id,
        metadata=_sandbox_metadata(sandbox),
        state=int(sandbox.state),
        created_at=sandbox.created_at,
        network=messages.PodSandboxNetworkStatus(ip=sandbox.ip),
        labels=sandbox.labels,
        annotations=sandbox.annotations,
        runtime_handler=sandbox.runtime_handler,
    )


def container_message(container: Container) -> Message:
    return messages.Container(
        id=container.id,
        pod_sandbox_id=container.sandbox_id,
        metadata=messages.ContainerMetadata(name=container.name, attempt=container.attempt),
        image=messages.ImageSpec(image=container.image),
        image_ref=container.image_id,
        state=int(container.state),
        created_at=container.created_at,
        labels=container.labels,
        annotations=container.annotations,
        image_id=container.image_id,
    )


def container_status_message(container: Container) -> Message:
    return messages.ContainerStatus(
        id=container.id,
        metadata=messages.ContainerMetadata(name=container.name, attempt=container.attempt),
        state=int(container.state),
        created_at=container.created_at,
        started_at=container.started_at,
        finished_at=container.finished_at,
        exit_code=container.exit_code,
        image=messages.ImageSpec(
            image=container.image_tag or container.image, user_specified_image=container.image
        ),
        image_ref=container.image_ref,
        reason=container.reason,
        message=container.message,
        labels=container.labels,
        annotations=container.annotations,
        log_path=container.log_path,
        image_id=container.image_id,
    )
