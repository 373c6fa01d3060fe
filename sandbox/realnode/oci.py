"""A reproducible OCI image writer: the same files in give the same digests out.

Reproducibility is what makes an image change observable: a stand-in rebuilt on another machine (or
tomorrow) keeps its digest, and two tags differ in digest only because their content differs. So
every tar entry has mtime 0, uid/gid 0, no user/group names, entries are sorted by path, and gzip
records neither a file name nor a timestamp.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import platform
import tarfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"

_ARCHES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def host_architecture() -> str:
    """The OCI architecture name of this machine (containerd matches it against the image config)."""
    machine = platform.machine().lower()
    if machine not in _ARCHES:
        raise ValueError(f"architecture: {machine!r} has no OCI name known here (known: {sorted(_ARCHES)})")
    return _ARCHES[machine]


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def canonical_json(value: object) -> bytes:
    """Sorted keys, no whitespace: the bytes (and so the digest) depend only on the value."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


@dataclass(frozen=True)
class Entry:
    """One path in a layer: a regular file (``data``), a directory, or a symlink (``link``)."""

    path: str
    kind: str  # "file" | "dir" | "symlink"
    data: bytes = b""
    link: str = ""
    mode: int = 0o644

    def __post_init__(self) -> None:
        if self.kind not in {"file", "dir", "symlink"}:
            raise ValueError(f"entry {self.path!r}: kind: must be file, dir or symlink, got {self.kind!r}")
        if not self.path or self.path.startswith("/") or ".." in self.path.split("/"):
            raise ValueError(f"entry path: must be relative without '..', got {self.path!r}")
        if self.kind == "symlink" and not self.link:
            raise ValueError(f"entry {self.path!r}: link: a symlink needs a target")


def file(path: str, data: bytes | str, mode: int = 0o644) -> Entry:
    return Entry(path, "file", data=data.encode() if isinstance(data, str) else data, mode=mode)


def directory(path: str, mode: int = 0o755) -> Entry:
    return Entry(path, "dir", mode=mode)


def symlink(path: str, target: str) -> Entry:
    return Entry(path, "symlink", link=target, mode=0o777)


def _with_parents(entries: Iterable[Entry]) -> list[Entry]:
    """Add the missing parent directories, so extraction never invents ones with other modes."""
    by_path = {e.path: e for e in entries}
    for path in list(by_path):
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            by_path.setdefault(parent, directory(parent))
    return [by_path[p] for p in sorted(by_path)]


def tar_bytes(entries: Iterable[Entry]) -> bytes:
    """An uncompressed, deterministic tar (ustar) of the entries and their parent directories."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for entry in _with_parents(entries):
            info = tarfile.TarInfo(entry.path)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = entry.mode
            if entry.kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif entry.kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = entry.link
                tar.addfile(info)
            else:
                info.size = len(entry.data)
                tar.addfile(info, io.BytesIO(entry.data))
    return buffer.getvalue()


def gzip_bytes(data: bytes) -> bytes:
    """gzip without file name and with mtime 0, so equal input gives equal output."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=6) as stream:
        stream.write(data)
    return buffer.getvalue()


@dataclass(frozen=True)
class Blob:
    media_type: str
    data: bytes

    @property
    def digest(self) -> str:
        return digest_of(self.data)

    def descriptor(self) -> dict[str, object]:
        return {"mediaType": self.media_type, "digest": self.digest, "size": len(self.data)}


@dataclass(frozen=True)
class Layer:
    """A gzipped layer and its ``diff_id`` (the digest of the uncompressed tar the config lists)."""

    blob: Blob
    diff_id: str

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Layer:
        raw = tar_bytes(entries)
        return cls(Blob(LAYER_TYPE, gzip_bytes(raw)), digest_of(raw))


@dataclass(frozen=True)
class ImageConfig:
    """The runtime part of an image config (what ``docker inspect`` shows under Config)."""

    entrypoint: Sequence[str] = ()
    cmd: Sequence[str] = ()
    env: Sequence[str] = ("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",)
    working_dir: str = ""
    exposed_ports: Sequence[str] = ()
    stop_signal: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    user: str = ""

    def to_json(self) -> dict[str, object]:
        config: dict[str, object] = {"Env": list(self.env)}
        if self.user:
            config["User"] = self.user
        if self.entrypoint:
            config["Entrypoint"] = list(self.entrypoint)
        if self.cmd:
            config["Cmd"] = list(self.cmd)
        if self.working_dir:
            config["WorkingDir"] = self.working_dir
        if self.exposed_ports:
            config["ExposedPorts"] = {port: {} for port in self.exposed_ports}
        if self.stop_signal:
            config["StopSignal"] = self.stop_signal
        if self.labels:
            config["Labels"] = dict(self.labels)
        return config


@dataclass(frozen=True)
class Image:
    """A single-platform OCI image: config blob, layer blobs and the manifest that ties them."""

    config: Blob
    layers: tuple[Layer, ...]
    manifest: Blob

    @property
    def digest(self) -> str:
        """The manifest digest: what a pull by tag resolves to (``repo@sha256:...``)."""
        return self.manifest.digest

    @property
    def image_id(self) -> str:
        """The config digest: what containerd reports as the image ID."""
        return self.config.digest

    def blobs(self) -> list[Blob]:
        return [*(layer.blob for layer in self.layers), self.config]


def build_image(
    layers: Sequence[Layer], config: ImageConfig, *, architecture: str | None = None, created: str = ""
) -> Image:
    """``created`` (RFC 3339) is left out unless given: a clock reading would change the digest."""
    if not layers:
        raise ValueError("layers: an image needs at least one layer")
    config_json: dict[str, object] = {
        "architecture": architecture or host_architecture(),
        "os": "linux",
        "config": config.to_json(),
        "rootfs": {"type": "layers", "diff_ids": [layer.diff_id for layer in layers]},
    }
    if created:
        config_json["created"] = created
    config_blob = Blob(CONFIG_TYPE, canonical_json(config_json))
    manifest_json = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_TYPE,
        "config": config_blob.descriptor(),
        "layers": [layer.blob.descriptor() for layer in layers],
    }
    return Image(config_blob, tuple(layers), Blob(MANIFEST_TYPE, canonical_json(manifest_json)))
