"""Image references as written (distribution `reference.Parse`) and upstream's `IsContainerImageEqual`,
which SidecarSet uses to decide a sidecar pinned by digest runs the image its spec names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.imageref import (
    ImageRef,
    ImageReferenceError,
    image_id_reference,
    images_equal,
    is_digest,
    parse,
)

D1 = "sha256:" + "a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d"
D2 = "sha256:" + "f7988fb6c02e0ce69257d9bd9cf37ae20a60f1df7563c3a2a6abe24160306b8d"


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("busybox", ImageRef("busybox", "", "")),
        ("busybox:1.35", ImageRef("busybox", "1.35", "")),
        (f"busybox@{D1}", ImageRef("busybox", "", D1)),
        (f"docker.io/busybox@{D1}", ImageRef("docker.io/busybox", "", D1)),
        (f"docker.io/library/busybox:1.35@{D1}", ImageRef("docker.io/library/busybox", "1.35", D1)),
        ("localhost:5000/team/app:v2", ImageRef("localhost:5000/team/app", "v2", "")),
        ("registry.example.com/a/b/c", ImageRef("registry.example.com/a/b/c", "", "")),
        # a bare image id is a name "sha256" with a 64-hex tag, not a digest
        (D1, ImageRef("sha256", D1.split(":")[1], "")),
    ],
)
def test_parse_keeps_the_reference_as_written(image, expected):
    assert parse(image) == expected


@pytest.mark.parametrize(
    ("image", "message"),
    [
        ("", "repository name must have at least one component"),
        ("BusyBox:1", "repository name must be lowercase"),
        ("busybox:", "invalid reference format"),
        ("busybox@sha256:abc", "invalid reference format"),
        ("busybox@md5:" + "a" * 32, "unsupported digest algorithm"),
        ("busybox@sha256:" + "a" * 63 + "ab", "invalid checksum digest length"),
        ("busybox@sha256:" + "A" * 64, "invalid checksum digest format"),
        ("a/" * 128 + "b", "repository name must not be more than 255 characters"),
    ],
)
def test_parse_refuses_what_distribution_refuses(image, message):
    with pytest.raises(ImageReferenceError, match=message):
        parse(image)


@pytest.mark.parametrize(
    ("image", "digest"),
    [
        (f"busybox@{D1}", True),
        (f"busybox:1.35@{D1}", True),
        ("busybox:1.35", False),
        ("busybox", False),
        ("busybox@sha256:short", False),  # unparsable: not a digest image
        (D1, False),
    ],
)
def test_is_digest(image, digest):
    assert is_digest(image) is digest


@pytest.mark.parametrize(
    ("image1", "image2", "equal"),
    [
        (f"busybox@{D1}", f"busybox@{D1}", True),
        (f"busybox@{D1}", f"busybox@{D2}", False),
        (f"busybox:1.35@{D1}", f"busybox@{D1}", True),  # both digests: the tag is ignored
        (f"busybox@{D1}", f"docker.io/library/busybox@{D1}", False),  # not normalized
        ("busybox:1.35", "busybox:1.35", True),
        ("busybox:1.35", "busybox:1.36", False),
        ("busybox", "busybox:latest", False),  # no default tag either
        (f"busybox@{D1}", "busybox", True),  # digest vs tag image: repo and (empty) tag
        (f"busybox@{D1}", "busybox:1.35", False),
        ("busybox:1.35", "BusyBox:1.35", False),  # unparsable equals nothing
        ("", "", False),
    ],
)
def test_images_equal(image1, image2, equal):
    assert images_equal(image1, image2) is equal
    assert images_equal(image2, image1) is equal


@pytest.mark.parametrize(
    ("image_id", "reference"),
    [
        (f"docker-pullable://busybox@{D1}", f"busybox@{D1}"),
        (f"docker.io/library/busybox@{D1}", f"docker.io/library/busybox@{D1}"),
        (D1, D1),
        ("", ""),
    ],
)
def test_image_id_reference_drops_the_scheme(image_id, reference):
    assert image_id_reference(image_id) == reference


_COMPONENT = st.from_regex(r"[a-z0-9]{1,6}(?:[._-][a-z0-9]{1,4})?", fullmatch=True)
_REPO = st.lists(_COMPONENT, min_size=1, max_size=3).map("/".join)
_TAG = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,10}", fullmatch=True)
_DIGEST = st.from_regex(r"[a-f0-9]{64}", fullmatch=True).map(lambda h: "sha256:" + h)


@given(_REPO, st.none() | _TAG, st.none() | _DIGEST)
def test_parse_round_trips_and_equality_is_reflexive(repo, tag, digest):
    image = repo + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")
    assert parse(image) == ImageRef(repo, tag or "", digest or "")
    assert is_digest(image) is bool(digest)
    assert images_equal(image, image)
    assert images_equal(image, image_id_reference("docker-pullable://" + image))


@given(_REPO, _DIGEST, _DIGEST, _TAG, _TAG)
def test_digest_images_compare_by_digest_only(repo, digest1, digest2, tag1, tag2):
    assert images_equal(f"{repo}:{tag1}@{digest1}", f"{repo}:{tag2}@{digest2}") is (digest1 == digest2)
