"""Container image references, accepted exactly when docker/distribution's ParseNormalizedNamed accepts them.

ImagePullJob and ImageListPullJob reject images the kruise-daemon could not normalize, so the webhook
needs the same grammar (docker/distribution v2.8 `reference`) and the same error texts. SidecarSet
compares images as written (`parse`, `images_equal`) to tell a sidecar pinned by digest is up to date.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]*)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?")
_IDENTIFIER = re.compile(r"[a-f0-9]{64}")

NAME_TOTAL_LENGTH_MAX = 255
_DIGEST_HEX_LENGTHS = {"sha256": 64, "sha384": 96, "sha512": 128}


class ImageReferenceError(ValueError):
    """str() is distribution/reference's error text."""


def _split_docker_domain(name: str) -> tuple[str, str]:
    slash = name.find("/")
    if slash == -1 or (not any(c in name[:slash] for c in ".:") and name[:slash] != "localhost"):
        domain, remainder = "docker.io", name
    else:
        domain, remainder = name[:slash], name[slash + 1 :]
    if domain == "index.docker.io":
        domain = "docker.io"
    if domain == "docker.io" and "/" not in remainder:
        remainder = "library/" + remainder
    return domain, remainder


def normalize(ref: str) -> str:
    """Fully-qualified form (`docker.io/library/nginx:1.9.1`); raises ImageReferenceError like upstream."""
    if _IDENTIFIER.fullmatch(ref):
        raise ImageReferenceError(
            f"invalid repository name ({ref}), cannot specify 64-byte hexadecimal strings"
        )
    domain, remainder = _split_docker_domain(ref)
    colon = remainder.find(":")
    remote_name = remainder[:colon] if colon > -1 else remainder
    if remote_name.lower() != remote_name:
        raise ImageReferenceError("invalid reference format: repository name must be lowercase")
    full = f"{domain}/{remainder}"
    match = _REFERENCE.fullmatch(full)
    if match is None:
        if _REFERENCE.fullmatch(full.lower()):
            raise ImageReferenceError("invalid reference format: repository name must be lowercase")
        raise ImageReferenceError("invalid reference format")
    if len(match.group(1)) > NAME_TOTAL_LENGTH_MAX:
        raise ImageReferenceError(f"repository name must not be more than {NAME_TOTAL_LENGTH_MAX} characters")
    if match.group(3):
        _check_digest(match.group(3))
    return full


def _check_digest(digest: str) -> None:
    """go-digest's Validate for a digest the reference grammar already matched."""
    algorithm, _, hex_part = digest.partition(":")
    if algorithm not in _DIGEST_HEX_LENGTHS:
        raise ImageReferenceError("unsupported digest algorithm")
    if len(hex_part) != _DIGEST_HEX_LENGTHS[algorithm]:
        raise ImageReferenceError("invalid checksum digest length")
    if not re.fullmatch(r"[a-f0-9]+", hex_part):
        raise ImageReferenceError("invalid checksum digest format")


@dataclass(frozen=True)
class ImageRef:
    """An image reference as written, split (`repo` keeps any domain; nothing is normalized)."""

    repo: str
    tag: str
    digest: str


def parse(image: str) -> ImageRef:
    """distribution's `reference.Parse`: the grammar only, no `docker.io`/`library/`/`latest` added, so
    `busybox@sha256:…` and `docker.io/library/busybox@sha256:…` are different repos (upstream kruise's
    `ParseImage`, used to compare a spec image with the imageID the kubelet reports)."""
    match = _REFERENCE.fullmatch(image)
    if match is None:
        if not image:
            raise ImageReferenceError("repository name must have at least one component")
        if _REFERENCE.fullmatch(image.lower()):
            raise ImageReferenceError("repository name must be lowercase")
        raise ImageReferenceError("invalid reference format")
    if len(match.group(1)) > NAME_TOTAL_LENGTH_MAX:
        raise ImageReferenceError(f"repository name must not be more than {NAME_TOTAL_LENGTH_MAX} characters")
    if match.group(3):
        _check_digest(match.group(3))
    return ImageRef(repo=match.group(1), tag=match.group(2) or "", digest=match.group(3) or "")


def is_digest(image: str) -> bool:
    """The image names a digest (`repo@sha256:…`, with or without a tag); an unparsable one does not."""
    try:
        return bool(parse(image).digest)
    except ImageReferenceError:
        return False


def images_equal(image1: str, image2: str) -> bool:
    """Upstream `IsContainerImageEqual`: two digest images are equal when repo and digest are, any other
    pair when repo and tag are (a digest and a tag image never are); an unparsable image equals nothing."""
    try:
        ref1, ref2 = parse(image1), parse(image2)
    except ImageReferenceError:
        return False
    if ref1.digest and ref2.digest:
        return ref1.repo == ref2.repo and ref1.digest == ref2.digest
    return ref1.repo == ref2.repo and ref1.tag == ref2.tag


def image_id_reference(image_id: str) -> str:
    """`containerStatuses[].imageID` without its scheme: docker reports
    `docker-pullable://busybox@sha256:…`, containerd `docker.io/library/busybox@sha256:…`."""
    return image_id.split("://", 1)[1] if "://" in image_id else image_id
