"""The fake runtime's records: images, pod sandboxes, containers and container events.

Records are frozen snapshots: the runtime replaces a record on every transition, so whatever
a caller holds never changes under it. Treat the label/annotation dicts as read-only too.
Enum values equal the CRI wire values, so the server converts them without a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum, StrEnum

# Labels the kubelet puts on every sandbox and container it creates; kruise-daemon finds a
# pod's containers through them (ContainerRecreateRequest, PodProbeMarker).
POD_NAME_LABEL = "io.kubernetes.pod.name"
POD_NAMESPACE_LABEL = "io.kubernetes.pod.namespace"
POD_UID_LABEL = "io.kubernetes.pod.uid"
CONTAINER_NAME_LABEL = "io.kubernetes.container.name"

# Who caused a container event: the in-process kubelet, or a client of the gRPC server
# (kruise-daemon, crictl). The kubelet restarts containers stopped by anyone but itself.
CAUSE_KUBELET = "kubelet"
CAUSE_CRI = "cri"


class SandboxState(IntEnum):
    READY = 0
    NOTREADY = 1


class ContainerState(IntEnum):
    CREATED = 0
    RUNNING = 1
    EXITED = 2
    UNKNOWN = 3


class ContainerEventType(StrEnum):
    CREATED = "created"
    STARTED = "started"
    STOPPED = "stopped"
    DELETED = "deleted"


@dataclass(frozen=True)
class Image:
    """A pulled image.

    ``id`` is ``sha256:<64 hex>``; ``repo_tags`` hold normalized ``repository:tag`` names and
    ``repo_digests`` hold ``repository@sha256:<64 hex>``; ``size`` is in bytes.
    """

    id: str
    repo_tags: tuple[str, ...]
    repo_digests: tuple[str, ...]
    size: int
    pinned: bool = False

    @property
    def names(self) -> list[str]:
        """Names as the kubelet lists them in ``node.status.images[].names``: digests, then tags."""
        return [*self.repo_digests, *self.repo_tags]


@dataclass(frozen=True)
class PodSandbox:
    """A pod sandbox. ``id`` is 64 lowercase hex characters; timestamps are Unix nanoseconds."""

    id: str
    name: str
    namespace: str
    uid: str
    attempt: int
    state: SandboxState
    created_at: int
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    runtime_handler: str = ""
    ip: str = ""


@dataclass(frozen=True)
class LinuxResources:
    """The cgroup settings a container runs with (CRI LinuxContainerResources; 0 = not set)."""

    cpu_period: int = 0
    cpu_quota: int = 0
    cpu_shares: int = 0
    memory_limit_in_bytes: int = 0


@dataclass(frozen=True)
class Container:
    """A container. ``id`` is 64 lowercase hex characters; timestamps are Unix nanoseconds (0 = never).

    Image fields mirror containerd: ``image`` is what the creator asked for, ``image_tag`` the
    normalized tag it resolved to ("" for digest-only), ``image_id`` the image id
    (``sha256:...``) and ``image_ref`` the repo digest (``repo@sha256:...``), which is what the
    kubelet shows as ``containerStatuses[].imageID``.
    """

    id: str
    sandbox_id: str
    name: str
    attempt: int
    image: str
    image_tag: str
    image_id: str
    image_ref: str
    state: ContainerState
    created_at: int
    started_at: int = 0
    finished_at: int = 0
    exit_code: int = 0
    reason: str = ""
    message: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    log_path: str = ""
    envs: tuple[tuple[str, str], ...] = ()  # the environment it was created with, in order
    resources: LinuxResources = field(default_factory=LinuxResources)  # as created, or last updated


@dataclass(frozen=True)
class ContainerEvent:
    """One container lifecycle change; ``container`` is the record right after the change."""

    type: ContainerEventType
    container: Container
    cause: str
    at: int


@dataclass(frozen=True)
class ExecResult:
    """What ExecSync returns; a non-zero exit code is a result, not an error."""

    exit_code: int = 0
    stdout: bytes = b""
    stderr: bytes = b""
