"""Image references as container runtimes see them, and the fake's deterministic digests.

Runtimes store images under *normalized* references (``nginx`` is
``docker.io/library/nginx:latest``), and that form is what appears in ``repo_tags``, in the
kubelet's ``status.images`` and in ``containerStatuses[].image``. The fake has no registry, so
an image's id (config digest) and repo digest (manifest digest) are derived from the reference
by hashing: the same reference always yields the same ``sha256:<64 hex>`` values, on every
node and in every run, which keeps tests reproducible.

A registry may serve one image under several tags (Docker Hub's ``nginx:alpine`` was
``nginx:mainline-alpine``); ``REGISTRY_ALIASES`` lists such tags, and every tag of a group hashes
as the group's first, so they share one image id and one manifest digest as they would after a
real pull. Upstream OpenKruise's e2e relies on one such pair; the table holds only known pairs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_DOMAIN = "docker.io"
LEGACY_DEFAULT_DOMAIN = "index.docker.io"
OFFICIAL_REPO_PREFIX = "library/"
DEFAULT_TAG = "latest"

_PATH_COMPONENT = re.compile(r"^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
_DOMAIN = re.compile(r"^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9-]+)*(?::[0-9]+)?$")
_TAG = re.compile(r"^[\w][\w.-]{0,127}$")
_DIGEST = re.compile(r"^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$")

# Groups of tags one registry serves as one image, first tag first (the one the others hash as).
# nginx: Docker Hub's tags in 2023-2025, when upstream's "same imageID" e2e case was written.
ALIAS_GROUPS: tuple[tuple[str, ...], ...] = (
    ("docker.io/library/nginx:alpine", "docker.io/library/nginx:mainline-alpine"),
)

MIN_IMAGE_SIZE = 1 << 20
IMAGE_SIZE_SPAN = 200 << 20


class InvalidReferenceError(ValueError):
    """A string that is not a valid image reference (the runtime's "invalid reference format")."""


@dataclass(frozen=True)
class ImageReference:
    """A parsed, normalized reference: ``domain/path[:tag][@digest]``."""

    domain: str
    path: str
    tag: str
    digest: str

    @property
    def repository(self) -> str:
        return f"{self.domain}/{self.path}"

    @property
    def tagged(self) -> str:
        """``repository:tag``, or "" for a digest-only reference."""
        return f"{self.repository}:{self.tag}" if self.tag else ""

    @property
    def digested(self) -> str:
        """``repository@digest``, or "" when the reference names no digest."""
        return f"{self.repository}@{self.digest}" if self.digest else ""

    def __str__(self) -> str:
        return self.tagged or self.digested


def parse_reference(text: str) -> ImageReference:
    """Normalize like containerd's CRI plugin: add ``docker.io``, ``library/`` and ``:latest``."""
    if not text or text != text.strip():
        raise InvalidReferenceError(f"invalid reference format: {text!r}")
    name, _, digest = text.partition("@")
    if digest and not _DIGEST.match(digest):
        raise InvalidReferenceError(f"invalid reference format: invalid digest in {text!r}")
    tag = ""
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > last_slash:
        name, tag = name[:colon], name[colon + 1 :]
        if not _TAG.match(tag):
            raise InvalidReferenceError(f"invalid reference format: invalid tag in {text!r}")
    first, sep, rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        domain, path = first, rest
        if not _DOMAIN.match(domain):
            raise InvalidReferenceError(f"invalid reference format: invalid domain in {text!r}")
    else:
        domain, path = DEFAULT_DOMAIN, name
    if domain == LEGACY_DEFAULT_DOMAIN:
        domain = DEFAULT_DOMAIN
    if any(c.isupper() for c in path):
        raise InvalidReferenceError(f"invalid reference format: repository name must be lowercase: {text!r}")
    components = path.split("/")
    if not all(_PATH_COMPONENT.match(c) for c in components):
        raise InvalidReferenceError(f"invalid reference format: {text!r}")
    if domain == DEFAULT_DOMAIN and len(components) == 1:
        path = OFFICIAL_REPO_PREFIX + path
    if not tag and not digest:
        tag = DEFAULT_TAG
    return ImageReference(domain=domain, path=path, tag=tag, digest=digest)


def alias_table(groups: tuple[tuple[str, ...], ...]) -> dict[str, str]:
    """Each normalized tag of ``groups`` -> its group's first tag; a tag in two groups is an error."""
    table: dict[str, str] = {}
    for group in groups:
        tags = [parse_reference(tag) for tag in group]
        for tag, ref in zip(group, tags, strict=True):
            if not ref.tagged or ref.digest:
                raise ValueError(f"ALIAS_GROUPS: {tag!r}: an alias must be a tag without a digest")
            if ref.tagged in table:
                raise ValueError(f"ALIAS_GROUPS: {tag!r}: a tag may be in one group only")
            table[ref.tagged] = tags[0].tagged
    return table


REGISTRY_ALIASES: Mapping[str, str] = alias_table(ALIAS_GROUPS)


def resolved(ref: ImageReference, aliases: Mapping[str, str] = REGISTRY_ALIASES) -> ImageReference:
    """The reference whose content ``ref`` names: a digest names itself, an aliased tag its group's first."""
    if ref.digest or ref.tagged not in aliases:
        return ref
    return parse_reference(aliases[ref.tagged])


def _hex(kind: str, key: str) -> str:
    return hashlib.sha256(f"kruise-sandbox/{kind}\x00{key}".encode()).hexdigest()


def image_id_for(ref: ImageReference, aliases: Mapping[str, str] = REGISTRY_ALIASES) -> str:
    """The image id (config digest), ``sha256:<64 hex>``; what PullImage returns as image_ref."""
    return "sha256:" + _hex("config", str(resolved(ref, aliases)))


def manifest_digest_for(ref: ImageReference, aliases: Mapping[str, str] = REGISTRY_ALIASES) -> str:
    """The manifest digest a tag resolves to; a digest reference resolves to its own digest."""
    return ref.digest or "sha256:" + _hex("manifest", str(resolved(ref, aliases)))


def image_size_for(ref: ImageReference, aliases: Mapping[str, str] = REGISTRY_ALIASES) -> int:
    """A plausible unpacked size in bytes (1 MiB .. 201 MiB), stable per image."""
    return MIN_IMAGE_SIZE + int(_hex("size", str(resolved(ref, aliases)))[:12], 16) % IMAGE_SIZE_SPAN
