"""Reading back the OCI layout `make image` writes (directory or archive), for the real-node registry."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from kruise.sandbox.realnode import oci
from kruise.sandbox.realnode.ocilayout import LayoutError, load

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "docker"))

import image as make_image  # docker/image.py: the writer `make image` uses


def small_image() -> oci.Image:
    layer = oci.Layer.of([oci.file("etc/hello", "hi\n")])
    return oci.build_image([layer], oci.ImageConfig(entrypoint=("/hello",), user="65534:65534"))


@pytest.fixture
def written(tmp_path: Path) -> tuple[oci.Image, Path, Path]:
    built = small_image()
    layout, archive = tmp_path / "oci", tmp_path / "kruise-py.oci.tar"
    make_image.write_layout(built, "0.1.0", layout, archive)
    return built, layout, archive


@pytest.mark.parametrize("which", ["directory", "archive"])
def test_the_layout_gives_back_the_same_image_and_its_tag(written, which: str) -> None:
    built, layout, archive = written
    loaded = load(layout if which == "directory" else archive)
    assert loaded.tag == "0.1.0"
    assert loaded.image.digest == built.digest  # the manifest digest a node's pull resolves to
    assert [b.digest for b in loaded.image.blobs()] == [b.digest for b in built.blobs()]
    assert loaded.image.manifest.media_type == oci.MANIFEST_TYPE
    assert loaded.image.layers[0].diff_id == built.layers[0].diff_id


def test_a_corrupted_blob_is_named(written) -> None:
    built, layout, _ = written
    blob = layout / "blobs/sha256" / built.layers[0].blob.digest.removeprefix("sha256:")
    blob.write_bytes(blob.read_bytes() + b"x")
    with pytest.raises(LayoutError, match=r"blobs/sha256/[0-9a-f]{64} does not match its digest"):
        load(layout)


def test_not_a_layout_is_refused(tmp_path: Path, written) -> None:
    with pytest.raises(LayoutError, match="must be an OCI image layout directory or an OCI archive"):
        load(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LayoutError, match=r"index\.json is missing"):
        load(tmp_path / "empty")
    _, layout, _ = written
    index = json.loads((layout / "index.json").read_text())
    index["manifests"][0].pop("annotations")
    (layout / "index.json").write_text(json.dumps(index))
    with pytest.raises(LayoutError, match=r"no org\.opencontainers\.image\.ref\.name annotation"):
        load(layout)
    index["manifests"] = []
    (layout / "index.json").write_text(json.dumps(index))
    with pytest.raises(LayoutError, match="must list exactly one image, found 0"):
        load(layout)
