"""What a real node's kubelet reads from its container runtime for the Node's status.

On a real node (``--runtime containerd``) ``status.images`` and ``status.nodeInfo.containerRuntimeVersion``
come from the node's own containerd over CRI, as the kubelet gets them:

- ``containerRuntimeVersion`` is ``<RuntimeName>://<RuntimeVersion>`` from CRI ``Version``, the version
  parsed as the kubelet does (semantic if it is one, else the leading dotted numbers: Debian's
  ``1.6.20~ds1`` reports ``1.6.20``);
- ``images`` is CRI ``ListImages``: per image its repo digests then repo tags (at most 5 names) and its
  size, the biggest first, at most 50 images (the kubelet's ``nodeStatusMaxImages``).

The node agent reads both at every status update, so a pull by kruise-daemon (straight to containerd)
shows up at the next heartbeat, as a real node's does after its image cache refresh.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

import grpc

from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages

MAX_IMAGES = 50  # kubelet --node-status-max-images default
MAX_NAMES_PER_IMAGE = 5  # kubelet MaxNamesPerImageInNodeStatus
CALL_TIMEOUT = 10.0

_SEMVER = re.compile(r"^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$")
_GENERIC = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


class RuntimeStatusError(Exception):
    """The runtime did not answer Version or ListImages."""


def kubelet_version(raw: str) -> str:
    """The runtime's version as the kubelet prints it (``utilversion``: semantic, else generic)."""
    semantic = _SEMVER.match(raw)
    if semantic:
        return semantic.group(1)
    generic = _GENERIC.match(raw)
    return generic.group(1) if generic else raw


def status_images(images: Iterable[tuple[Sequence[str], int]]) -> list[dict[str, Any]]:
    """``status.images`` from (names, size) pairs: biggest first, at most 50, at most 5 names each."""
    ordered = sorted(images, key=lambda image: -image[1])
    kept = ordered[:MAX_IMAGES]
    return [{"names": list(names)[:MAX_NAMES_PER_IMAGE], "sizeBytes": size} for names, size in kept]


class CriRuntimeStatus:
    """Reads Version and ListImages from the node's CRI socket for its Node status."""

    def __init__(self, socket: str | os.PathLike[str]) -> None:
        self.cri = CriClient(socket, timeout=CALL_TIMEOUT)

    def open(self) -> None:
        self.cri.open()

    async def close(self) -> None:
        await self.cri.close()

    async def _call(self, method: str, request: Any) -> Any:
        try:
            return await self.cri.call(method, request)
        except grpc.aio.AioRpcError as error:
            raise RuntimeStatusError(f"{method}: {error.details() or error.code().name}") from None

    async def runtime_version(self) -> str:
        answer = await self._call("Version", messages.VersionRequest())
        return f"{answer.runtime_name}://{kubelet_version(answer.runtime_version)}"

    async def images(self) -> list[dict[str, Any]]:
        answer = await self._call("ListImages", messages.ListImagesRequest())
        return status_images(
            ([*image.repo_digests, *image.repo_tags], int(image.size)) for image in answer.images
        )
