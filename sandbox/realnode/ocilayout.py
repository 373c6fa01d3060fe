"""Read an image back from an OCI image layout, as ``make image`` writes it, to push it to a registry.

``make image`` writes kruise-py's image as a layout directory (``build/image/oci``) and as the same
files in one tar (``build/image/kruise-py.oci.tar``). The real-node sandbox reads either and pushes
the image into its own registry, so the nodes' containerd pull the image that was built, byte for
byte (the pushed manifest digest is the layout's). Every blob is checked against its digest: a
truncated or edited layout fails here, naming the blob, not later as a pull error on a node.
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kruise.sandbox.realnode import oci

REF_NAME = "org.opencontainers.image.ref.name"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"


class LayoutError(ValueError):
    """The path is not a readable single-image OCI layout; the message says what is wrong."""


@dataclass(frozen=True)
class LayoutImage:
    """The image of a layout and the name (tag) the layout gives it."""

    image: oci.Image
    tag: str


def _reader(path: Path) -> Callable[[str], bytes]:
    """A function reading a file of the layout, from a directory or an OCI archive (tar)."""
    if path.is_dir():

        def from_dir(name: str) -> bytes:
            try:
                return (path / name).read_bytes()
            except FileNotFoundError:
                raise LayoutError(f"{path}: {name} is missing") from None

        return from_dir
    if path.is_file() and tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            files = {
                member.name.removeprefix("./"): archive.extractfile(member).read()  # type: ignore[union-attr]
                for member in archive.getmembers()
                if member.isfile()
            }

        def from_tar(name: str) -> bytes:
            if name not in files:
                raise LayoutError(f"{path}: {name} is missing from the archive")
            return files[name]

        return from_tar
    raise LayoutError(f"{path}: must be an OCI image layout directory or an OCI archive (tar)")


def _json(read: Callable[[str], bytes], name: str, where: Path) -> dict:
    try:
        value = json.loads(read(name))
    except json.JSONDecodeError as error:
        raise LayoutError(f"{where}: {name} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise LayoutError(f"{where}: {name} must be a JSON object")
    return value


def _blob(read: Callable[[str], bytes], descriptor: dict, where: Path) -> oci.Blob:
    digest = str(descriptor.get("digest", ""))
    algorithm, _, hexdigest = digest.partition(":")
    if algorithm != "sha256" or len(hexdigest) != 64:
        raise LayoutError(f"{where}: digest {digest!r}: only sha256 digests are supported")
    blob = oci.Blob(str(descriptor.get("mediaType", "")), read(f"blobs/sha256/{hexdigest}"))
    if blob.digest != digest:
        raise LayoutError(f"{where}: blobs/sha256/{hexdigest} does not match its digest ({blob.digest})")
    return blob


def load(path: str | Path) -> LayoutImage:
    """The one image of the layout at ``path`` (``LayoutError`` when there is not exactly one)."""
    where = Path(path)
    read = _reader(where)
    index = _json(read, "index.json", where)
    manifests = index.get("manifests") or []
    if len(manifests) != 1:
        raise LayoutError(f"{where}: index.json: must list exactly one image, found {len(manifests)}")
    (descriptor,) = manifests
    tag = str((descriptor.get("annotations") or {}).get(REF_NAME, ""))
    if not tag:
        raise LayoutError(f"{where}: index.json: the image has no {REF_NAME} annotation (its tag)")
    manifest = _blob(read, descriptor, where)
    body = json.loads(manifest.data)
    config = _blob(read, body.get("config") or {}, where)
    diff_ids = (json.loads(config.data).get("rootfs") or {}).get("diff_ids") or []
    layer_descriptors = body.get("layers") or []
    if len(diff_ids) != len(layer_descriptors):
        raise LayoutError(
            f"{where}: the config lists {len(diff_ids)} layer(s), the manifest {len(layer_descriptors)}"
        )
    layers = tuple(
        oci.Layer(_blob(read, layer, where), str(diff_id))
        for layer, diff_id in zip(layer_descriptors, diff_ids, strict=True)
    )
    return LayoutImage(oci.Image(config, layers, manifest), tag)
