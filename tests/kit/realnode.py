"""Driving a real containerd through CRI the way a kubelet does, for the real-node integration tests."""

from __future__ import annotations

import ipaddress
import re
import uuid
from collections.abc import Mapping
from pathlib import Path

import pytest
from google.protobuf.message import Message

from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.realnode import prereqs
from kruise.sandbox.realnode.containerd import ContainerdNode

CRI_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z (stdout|stderr) (F|P) (.*)$")


def skip_unless_possible() -> None:
    """Skip (naming the apt-get line) where this machine cannot run a real node."""
    try:
        prereqs.check()
    except prereqs.PrerequisitesMissing as exc:
        pytest.skip(str(exc))


def log_messages(path: Path) -> list[str]:
    """The messages of a CRI log file (``<time> <stream> <tag> <message>`` lines), in order."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        match = CRI_LOG_LINE.match(line)
        assert match is not None, f"not a CRI log line in {path}: {line!r}"
        found.append(match.group(3))
    return found


class Pod:
    """One pod sandbox on a node, with helpers to add containers the way a kubelet would."""

    def __init__(self, node: ContainerdNode, cri: CriClient, name: str) -> None:
        self.node, self.cri = node, cri
        uid = str(uuid.uuid4())
        self.log_dir = node.paths.pod_logs / f"default_{name}_{uid}"
        self.config = messages.PodSandboxConfig(
            metadata=messages.PodSandboxMetadata(name=name, uid=uid, namespace="default", attempt=0),
            hostname=name,
            log_directory=str(self.log_dir),
        )
        self.id = ""
        self.ip = ipaddress.IPv4Address(0)

    async def run(self) -> None:
        self.log_dir.mkdir(parents=True)
        self.id = (
            await self.cri.RunPodSandbox(messages.RunPodSandboxRequest(config=self.config))
        ).pod_sandbox_id
        status = await self.cri.PodSandboxStatus(messages.PodSandboxStatusRequest(pod_sandbox_id=self.id))
        self.ip = ipaddress.IPv4Address(status.status.network.ip)

    def log_path(self, name: str, attempt: int = 0) -> Path:
        return self.log_dir / name / f"{attempt}.log"

    async def start(
        self,
        name: str,
        image: str,
        command: list[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        attempt: int = 0,
        auth: Message | None = None,
    ) -> str:
        """Pull ``image`` (with ``auth`` if given), create and start the container; returns its id."""
        pulled = await self.cri.PullImage(
            messages.PullImageRequest(image=messages.ImageSpec(image=image), auth=auth)
        )
        config = messages.ContainerConfig(
            metadata=messages.ContainerMetadata(name=name, attempt=attempt),
            image=messages.ImageSpec(image=pulled.image_ref),
            command=command or [],
            envs=[messages.KeyValue(key=k, value=v.encode()) for k, v in (env or {}).items()],
            log_path=f"{name}/{attempt}.log",
        )
        created = await self.cri.CreateContainer(
            messages.CreateContainerRequest(pod_sandbox_id=self.id, config=config, sandbox_config=self.config)
        )
        await self.cri.StartContainer(messages.StartContainerRequest(container_id=created.container_id))
        return created.container_id

    async def stop_and_remove(self, container_id: str, grace: int = 10) -> None:
        await self.cri.StopContainer(messages.StopContainerRequest(container_id=container_id, timeout=grace))
        await self.cri.RemoveContainer(messages.RemoveContainerRequest(container_id=container_id))

    async def exec(self, container_id: str, *cmd: str, timeout: int = 10) -> Message:
        return await self.cri.ExecSync(
            messages.ExecSyncRequest(container_id=container_id, cmd=cmd, timeout=timeout)
        )
