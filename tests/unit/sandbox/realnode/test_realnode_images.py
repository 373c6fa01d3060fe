"""The OCI writer and the stand-in catalogue: reproducible digests, valid shapes, distinct tags."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from kruise.sandbox.realnode import images, oci, perl

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
        first = images.build(standin, base=base, middle=(), architecture="amd64")
        second = images.build(standin, base=again, middle=(), architecture="amd64")
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
    by_key = {s.key: images.build(s, base=base, middle=(), architecture="amd64") for s in images.STANDINS}
    nginx = json.loads(by_key["nginx:1.7.9"].config.data)["config"]
    assert nginx["Cmd"] == ["nginx", "-g", "daemon off;"]
    assert nginx["ExposedPorts"] == {"80/tcp": {}}
    own = {m.name for m in _members(by_key["nginx:1.7.9"].layers[1])}
    assert {"usr/sbin/nginx", "usr/share/nginx/html/index.html", images.IDENTITY_FILE} <= own
    assert json.loads(by_key["busybox"].config.data)["config"]["Cmd"] == ["sh"]
    assert json.loads(by_key["redis:7"].config.data)["config"]["Cmd"] == ["redis-server"]
    ubuntu = {m.name for m in _members(by_key["ubuntu"].layers[1])}
    assert {"bin/bash", "etc/os-release"} <= ubuntu
    minecraft = json.loads(by_key["minecraft-demo:probe-v0"].config.data)["config"]
    assert (minecraft["Cmd"], minecraft["WorkingDir"]) == (["./start.sh"], "/data")
    game = {m.name for m in _members(by_key["minecraft-demo:probe-v0"].layers[1])}
    assert {"bin/bash", "data/start.sh", "data/probe.sh", "data/gate.sh", "data/data.sh"} <= game
    httpd = {m.name for m in _members(by_key["e2e-httpd"].layers[1])}
    assert {"usr/local/bin/httpd-foreground", "usr/local/apache2/htdocs/index.html", "bin/bash"} <= httpd
    assert json.loads(by_key["e2e-httpd"].config.data)["config"]["Cmd"] == ["httpd-foreground"]
    assert json.loads(by_key["e2e-agnhost"].config.data)["config"]["Cmd"] == ["agnhost"]


# Every image name the e2e tests, the integration tests and the seeds (tutorials) run or pull.
USED_NAMES = (
    "busybox",
    "busybox:1.35.0",
    "docker.io/library/busybox:1.35.0",
    "busybox:1.36",
    "nginx",
    "nginx:latest",
    "nginx:alpine",
    "nginx:1.7.9",
    "nginx:1.9.1",
    "nginx:1.15.1",
    "nginx:1.25",
    "nginx:1.26",
    "nginx:1.27",
    "perl",
    "perl:5.34",
    "ubuntu:latest",
    "centos:7",
    "openkruise/minecraft-demo:probe-v0",
    "redis:7",
    "redis:7.2",
    "envoyproxy/envoy:v1.30",
    "openkruise/hotupgrade-sample:sidecarv1",
    "openkruise/hotupgrade-sample:sidecarv2",
    "openkruise/hotupgrade-sample:empty",
    "openkruise/hotupgrade-sample:busybox",
    "registry.k8s.io/e2e-test-images/httpd:2.4.38-4",
    "registry.k8s.io/e2e-test-images/agnhost:2.52",
    "registry.k8s.io/e2e-test-images/nginx:1.14-4",
    "registry.k8s.io/e2e-test-images/nginx:1.15-4",
    "registry.k8s.io/e2e-test-images/redis:5.0.5-3",
    "registry.k8s.io/e2e-test-images/busybox:1.36.1-1",
)


def test_every_name_the_tests_and_seeds_use_has_a_standin() -> None:
    pushed = {str(ref) for s in images.STANDINS for ref in s.parsed()}
    assert {str(images.Reference.parse(name)) for name in USED_NAMES} <= pushed


def test_hot_upgrade_sample_has_the_upstream_layout(base: oci.Layer) -> None:
    by_key = {s.key: s for s in images.STANDINS}
    sidecar = images.build(by_key["hotupgrade:sidecarv1"], base=base, middle=(), architecture="amd64")
    assert json.loads(sidecar.config.data)["config"]["Entrypoint"] == ["/manager"]
    own = {m.name: m for m in _members(sidecar.layers[-1])}
    assert own["manager"].mode == 0o755 and own["migrate.sh"].mode == 0o755
    empty = images.build(by_key["hotupgrade:empty"], base=base, middle=(), architecture="amd64")
    assert {"manager", "migrate.sh"} <= {m.name for m in _members(empty.layers[-1])}
    client = images.build(by_key["hotupgrade:busybox"], base=base, middle=(), architecture="amd64")
    assert json.loads(client.config.data)["config"]["Entrypoint"] == ["/busybox-client"]


def test_only_the_perl_programs_get_the_perl_layer() -> None:
    wanting = {s.key for s in images.STANDINS if s.kind in {"perl", "hotupgrade-sidecar"}}
    assert wanting == {"perl", "hotupgrade:sidecarv1", "hotupgrade:sidecarv2"}


def test_an_idle_standin_needs_a_program(base: oci.Layer) -> None:
    with pytest.raises(ValueError, match="program"):
        images.build(images.StandIn("x", ("x:1",), "idle"), base=base, middle=(), architecture="amd64")
    with pytest.raises(ValueError, match="kind"):
        images.build(images.StandIn("x", ("x:1",), "cobol"), base=base, middle=(), architecture="amd64")


def test_tags_that_differ_upstream_differ_here(base: oci.Layer) -> None:
    every = images.STANDINS + images.PRIVATE_STANDINS
    digests = {s.key: images.build(s, base=base, middle=(), architecture="amd64").image_id for s in every}
    assert len(set(digests.values())) == len(every)
    references = [str(ref) for s in every for ref in s.parsed()]
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


LDD = """\tlinux-vdso.so.1 (0x00007ffd7c1f2000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f5502520000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f550233e000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f5502a2b000)
"""


def test_perl_layer_takes_the_libraries_ldd_names_and_the_loader() -> None:
    assert perl.shared_libraries(Path("/usr/bin/perl"), LDD) == [
        Path("/lib/x86_64-linux-gnu/libc.so.6"),
        Path("/lib/x86_64-linux-gnu/libm.so.6"),
        Path("/lib64/ld-linux-x86-64.so.2"),
    ]
    with pytest.raises(ValueError, match="no shared libraries"):
        perl.shared_libraries(Path("/bin/busybox"), "\tnot a dynamic executable\n")
