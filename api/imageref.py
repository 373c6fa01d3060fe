"""Container image references, accepted exactly when docker/distribution's ParseNormalizedNamed accepts them.

ImagePullJob and ImageListPullJob reject images the kruise-daemon could not normalize, so the webhook
needs the same grammar (docker/distribution v2.8 `reference`) and the same error texts.
"""

from __future__ import annotations

import re

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
    digest = match.group(3)
    if digest:
        algorithm, _, hex_part = digest.partition(":")
        if algorithm not in _DIGEST_HEX_LENGTHS:
            raise ImageReferenceError("unsupported digest algorithm")
        if len(hex_part) != _DIGEST_HEX_LENGTHS[algorithm]:
            raise ImageReferenceError("invalid checksum digest length")
        if not re.fullmatch(r"[a-f0-9]+", hex_part):
            raise ImageReferenceError("invalid checksum digest format")
    return full
