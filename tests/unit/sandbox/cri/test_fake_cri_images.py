"""Image reference normalization and the fake's deterministic image identities."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.cri.images import (
    InvalidReferenceError,
    image_id_for,
    image_size_for,
    manifest_digest_for,
    parse_reference,
)

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "tagged", "digested"),
    [
        ("nginx", "docker.io/library/nginx:latest", ""),
        ("nginx:1.25", "docker.io/library/nginx:1.25", ""),
        ("openkruise/guestbook:v1", "docker.io/openkruise/guestbook:v1", ""),
        ("index.docker.io/library/busybox", "docker.io/library/busybox:latest", ""),
        ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10", ""),
        ("localhost/app", "localhost/app:latest", ""),
        ("127.0.0.1:5000/busybox:1", "127.0.0.1:5000/busybox:1", ""),
        ("127.0.0.1:5000/busybox", "127.0.0.1:5000/busybox:latest", ""),
        ("ghcr.io/a/b/c:1.0-rc.1", "ghcr.io/a/b/c:1.0-rc.1", ""),
        (f"nginx@{DIGEST}", "", f"docker.io/library/nginx@{DIGEST}"),
        (f"nginx:1.25@{DIGEST}", "docker.io/library/nginx:1.25", f"docker.io/library/nginx@{DIGEST}"),
    ],
)
def test_references_normalize_like_containerd(text: str, tagged: str, digested: str) -> None:
    ref = parse_reference(text)
    assert (ref.tagged, ref.digested) == (tagged, digested)


@pytest.mark.parametrize(
    "text",
    ["", " nginx", "Nginx", "nginx:", "nginx@sha256:xyz", "my_registry.io:x/app", "a//b", "nginx:-bad"],
)
def test_invalid_references_are_rejected(text: str) -> None:
    with pytest.raises(InvalidReferenceError, match="invalid reference format"):
        parse_reference(text)


def test_digest_reference_resolves_to_its_own_digest() -> None:
    assert manifest_digest_for(parse_reference(f"nginx@{DIGEST}")) == DIGEST


@given(st.from_regex(r"[a-z0-9]{1,12}(/[a-z0-9]{1,8})?(:[a-z0-9][a-z0-9.-]{0,10})?", fullmatch=True))
def test_identities_are_deterministic_and_well_formed(text: str) -> None:
    first, second = parse_reference(text), parse_reference(text)
    assert image_id_for(first) == image_id_for(second)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", image_id_for(first))
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", manifest_digest_for(first))
    assert image_id_for(first) != manifest_digest_for(first)
    assert 1 << 20 <= image_size_for(first) < (1 << 20) + (200 << 20)


def test_different_tags_are_different_images() -> None:
    assert image_id_for(parse_reference("nginx:1")) != image_id_for(parse_reference("nginx:2"))
    assert image_id_for(parse_reference("nginx")) == image_id_for(
        parse_reference("docker.io/library/nginx:latest")
    )
