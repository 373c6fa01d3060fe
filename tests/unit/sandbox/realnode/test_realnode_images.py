"""The OCI writer and the stand-in catalogue: reproducible digests, valid shapes, distinct tags."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from kruise.sandbox.realnode import images, oci

APPLETS = ["bin/sh", "bin/sleep", "bin/cat", "usr/sbin/httpd", "usr/bin/wget", "bin/busybox"]


@pytest.fixture
def base(tmp_path: Path) -> oci.Layer:
    fake = tmp_path / "busybox"
    fake.write_bytes(b"\x7fELF not really busybox")
    return oci.Layer.of(images.busybox_entries(fake, applets=APPLETS))


def _members(layer: oci.Layer) -> list[tarfile.TarInfo]:
    raw = gzip.decompress(layer.blob.data)
    assert oci.digest_of(raw) == layer.diff_id
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        return tar.getmembers()


def test_same_input_gives_the_same_digests(tmp_path: Path, base: oci.Layer) -> None:
    fake = tmp_path / "busybox"
    again = oci.Layer.of(images.busybox_entries(fake, applets=list(reversed(APPLETS))))
    assert again == base
    for standin in images.STANDINS:
        first = images.build(standin, base=base, architecture="amd64")
        second = images.build(standin, base=again, architecture="amd64")
        assert (first.digest, first.image_id) == (second.digest, second.image_id)
        assert first.manifest.data == second.manifest.data


def test_layer_tar_is_sorted_with_fixed_owners_and_times(base: oci.Layer) -> None:
    members = _members(base)
    names = [m.name for m in members]
    assert names == sorted(names)
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    by_name = {m.name: m for m in members}
    assert by_name["bin/busybox"].isfile() and by_name["bin/busybox"].mode == 0o755
    assert by_name["usr/sbin/httpd"].issym() and by_name["usr/sbin/httpd"].linkname == "/bin/busybox"
    assert by_name["usr/sbin"].isdir()  # parents are explicit entries
    assert by_name["tmp"].mode == 0o1777
    # gzip header: no file name, mtime 0 (bytes 4..8)
    assert base.blob.data[3] & 0x08 == 0
    assert base.blob.data[4:8] == b"\0\0\0\0"


def test_manifest_and_config_shapes(base: oci.Layer) -> None:
    image = images.build(images.STANDINS[0], base=base, architecture="arm64")
    manifest = json.loads(image.manifest.data)
    assert manifest["schemaVersion"] == 2
    assert manifest["mediaType"] == oci.MANIFEST_TYPE
    assert manifest["config"] == {
        "mediaType": oci.CONFIG_TYPE,
        "digest": image.config.digest,
        "size": len(image.config.data),
    }
    assert [layer["mediaType"] for layer in manifest["layers"]] == [oci.LAYER_TYPE, oci.LAYER_TYPE]
    assert [layer["digest"] for layer in manifest["layers"]] == [layer.blob.digest for layer in image.layers]
    config = json.loads(image.config.data)
    assert (config["os"], config["architecture"]) == ("linux", "arm64")
    assert config["rootfs"] == {"type": "layers", "diff_ids": [layer.diff_id for layer in image.layers]}
    assert config["config"]["Entrypoint"] == ["/pause"]
    assert image.blobs()[-1] == image.config


def test_standins_behave_like_their_namesakes(base: oci.Layer) -> None:
    by_key = {s.key: images.build(s, base=base, architecture="amd64") for s in images.STANDINS}
    nginx = json.loads(by_key["nginx:1.7.9"].config.data)["config"]
    assert nginx["Cmd"] == ["nginx", "-g", "daemon off;"]
    assert nginx["ExposedPorts"] == {"80/tcp": {}}
    own = {m.name for m in _members(by_key["nginx:1.7.9"].layers[1])}
    assert {"usr/sbin/nginx", "usr/share/nginx/html/index.html", images.IDENTITY_FILE} <= own
    assert json.loads(by_key["busybox"].config.data)["config"]["Cmd"] == ["sh"]


def test_tags_that_differ_upstream_differ_here(base: oci.Layer) -> None:
    digests = {s.key: images.build(s, base=base, architecture="amd64").image_id for s in images.STANDINS}
    assert len(set(digests.values())) == len(images.STANDINS)
    references = [str(ref) for s in images.STANDINS for ref in s.parsed()]
    assert len(references) == len(set(references)), "a reference must belong to one stand-in"
    assert {"docker.io/library/busybox:latest", "docker.io/library/nginx:alpine", images.PAUSE_IMAGE} <= set(
        references
    )


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("busybox", ("docker.io", "library/busybox", "latest")),
        ("nginx:1.7.9", ("docker.io", "library/nginx", "1.7.9")),
        (
            "openkruise/hotupgrade-sample:sidecarv1",
            ("docker.io", "openkruise/hotupgrade-sample", "sidecarv1"),
        ),
        ("registry.k8s.io/pause:3.9", ("registry.k8s.io", "pause", "3.9")),
        ("localhost:5000/a/b", ("localhost:5000", "a/b", "latest")),
    ],
)
def test_reference_parsing(name: str, expected: tuple[str, str, str]) -> None:
    ref = images.Reference.parse(name)
    assert (ref.registry, ref.repository, ref.tag) == expected


@pytest.mark.parametrize("name", ["", "busybox@sha256:00", "Busybox"])
def test_bad_references_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="reference"):
        images.Reference.parse(name)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"path": "/abs", "kind": "file"}, "path"),
        ({"path": "a/../b", "kind": "file"}, "path"),
        ({"path": "x", "kind": "fifo"}, "kind"),
        ({"path": "x", "kind": "symlink"}, "link"),
    ],
)
def test_bad_entries_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        oci.Entry(**kwargs)


def test_an_image_needs_a_layer() -> None:
    with pytest.raises(ValueError, match="layers"):
        oci.build_image([], oci.ImageConfig(), architecture="amd64")


def test_user_and_created_are_written_only_when_given() -> None:
    layer = oci.Layer.of([oci.file("a", "x")])
    plain = json.loads(oci.build_image([layer], oci.ImageConfig(), architecture="amd64").config.data)
    assert "created" not in plain and "User" not in plain["config"]
    config = oci.ImageConfig(entrypoint=["run"], user="65534:65534")
    stamped = oci.build_image([layer], config, architecture="amd64", created="2023-11-14T22:13:20Z")
    written = json.loads(stamped.config.data)
    assert (written["created"], written["config"]["User"]) == ("2023-11-14T22:13:20Z", "65534:65534")
