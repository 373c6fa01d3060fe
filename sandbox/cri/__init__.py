"""A fake CRI runtime per simulated node: in-memory state plus a CRI ``runtime.v1`` gRPC server.

``FakeRuntime`` is the node's runtime, driven in-process by the simulated kubelet;
``CriServer`` serves it on a unix socket for kruise-daemon and crictl; ``CriClient`` and
``messages`` let tests speak CRI without protobuf's default descriptor pool.
"""

from kruise.sandbox.cri.errors import (
    AlreadyExistsError,
    CriError,
    DeadlineExceededError,
    ExecFailedError,
    FailedPreconditionError,
    ImagePullError,
    InvalidArgumentError,
    NotFoundError,
)
from kruise.sandbox.cri.model import (
    CAUSE_CRI,
    CAUSE_KUBELET,
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    Container,
    ContainerEvent,
    ContainerEventType,
    ContainerState,
    ExecResult,
    Image,
    LinuxResources,
    PodSandbox,
    SandboxState,
)
from kruise.sandbox.cri.runtime import ContainerTask, FakeRuntime

__all__ = [
    "CAUSE_CRI",
    "CAUSE_KUBELET",
    "CONTAINER_NAME_LABEL",
    "POD_NAMESPACE_LABEL",
    "POD_NAME_LABEL",
    "POD_UID_LABEL",
    "AlreadyExistsError",
    "Container",
    "ContainerEvent",
    "ContainerEventType",
    "ContainerState",
    "ContainerTask",
    "CriError",
    "DeadlineExceededError",
    "ExecFailedError",
    "ExecResult",
    "FailedPreconditionError",
    "FakeRuntime",
    "Image",
    "ImagePullError",
    "InvalidArgumentError",
    "LinuxResources",
    "NotFoundError",
    "PodSandbox",
    "SandboxState",
]
