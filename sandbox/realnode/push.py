"""Push an OCI image to a registry through the distribution HTTP API v2 (no docker, no skopeo).

Blobs go up monolithically (POST an upload session, PUT the bytes with their digest), skipping the
ones the registry already has (HEAD), then the manifest is PUT under each tag. The registry checks
every digest, so a successful push also proves the writer's bookkeeping.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urljoin

import httpx

from kruise.sandbox.realnode import oci


class PushError(RuntimeError):
    """The registry refused a step of the push; the message names the step and its answer."""


def _check(response: httpx.Response, step: str, expected: Iterable[int]) -> None:
    if response.status_code not in set(expected):
        raise PushError(f"{step}: registry answered {response.status_code}: {response.text[:300]}")


async def push_blob(client: httpx.AsyncClient, repository: str, blob: oci.Blob) -> None:
    head = await client.head(f"/v2/{repository}/blobs/{blob.digest}")
    if head.status_code == 200:
        return
    started = await client.post(f"/v2/{repository}/blobs/uploads/")
    _check(started, f"start upload of {blob.digest} to {repository}", (202,))
    location = urljoin(str(client.base_url), started.headers["Location"])
    separator = "&" if "?" in location else "?"
    finished = await client.put(
        f"{location}{separator}digest={blob.digest}",
        content=blob.data,
        headers={"Content-Type": "application/octet-stream"},
    )
    _check(finished, f"upload {blob.digest} to {repository}", (201,))


async def push_image(
    client: httpx.AsyncClient, repository: str, tags: Iterable[str], image: oci.Image
) -> None:
    """Push ``image`` to ``repository`` on the client's registry and tag it with every tag."""
    for blob in image.blobs():
        await push_blob(client, repository, blob)
    for tag in tags:
        response = await client.put(
            f"/v2/{repository}/manifests/{tag}",
            content=image.manifest.data,
            headers={"Content-Type": image.manifest.media_type},
        )
        _check(response, f"put manifest {repository}:{tag}", (201,))
        answered = response.headers.get("Docker-Content-Digest")
        if answered and answered != image.digest:
            raise PushError(
                f"put manifest {repository}:{tag}: registry stored {answered}, sent {image.digest}"
            )
