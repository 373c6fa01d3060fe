"""`make image` end to end: the OCI image packed from the two shared root file system builds, and what
the size cuts (stripped extension modules, .pyc only for what the processes import) must not break.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docker"))

import debian_base  # noqa: E402
import image  # noqa: E402
import rootfs  # noqa: E402
import wheels  # noqa: E402

from kruise.sandbox.realnode.registry import LocalRegistry  # noqa: E402

SBIN = "/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"
_missing = [
    t for t in ("apt-get", "apt-cache", "dpkg-deb", "tar", "chroot") if shutil.which(t, path=SBIN) is None
]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.image,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(os.geteuid() != 0, reason="image build needs root (root-owned tree, chroot)"),
    pytest.mark.skipif(bool(_missing), reason=f"image build needs {', '.join(_missing)} (Debian)"),
]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
SOURCE = "https://example.invalid/kruise-py.git"


def _pack(tree: Path, epoch: int) -> image.oci.Image:
    return image.pack(tree, version=image.installed_version(tree), commit=COMMIT, source=SOURCE, epoch=epoch)


@pytest.fixture(scope="module")
def packed(builds: tuple[Path, str, Path, str], epoch: int) -> tuple[image.oci.Image, image.oci.Image]:
    return _pack(builds[0], epoch), _pack(builds[2], epoch)


def test_two_builds_give_the_same_image_digest(packed: tuple[image.oci.Image, image.oci.Image]) -> None:
    first, second = packed
    assert first.digest == second.digest
    assert first.layers[0].diff_id == second.layers[0].diff_id


def test_image_config(packed: tuple[image.oci.Image, image.oci.Image], tree: Path, epoch: int) -> None:
    config = json.loads(packed[0].config.data)
    created = datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert config["created"] == created
    runtime = config["config"]
    assert runtime["User"] == "65534:65534"
    assert runtime["Entrypoint"] == ["kruise-manager"]
    assert runtime["WorkingDir"] == "/"
    assert any(env.startswith("PATH=") and "/usr/local/bin" in env for env in runtime["Env"])
    assert runtime["Labels"] == {
        "org.opencontainers.image.title": "kruise-py",
        "org.opencontainers.image.version": image.installed_version(tree),
        "org.opencontainers.image.revision": COMMIT,
        "org.opencontainers.image.source": SOURCE,
        "org.opencontainers.image.created": created,
    }


def test_layout_and_push(packed: tuple[image.oci.Image, image.oci.Image], tmp_path: Path) -> None:
    built = packed[0]
    image.write_layout(built, "t1", tmp_path / "oci", tmp_path / "image.oci.tar")
    index = json.loads((tmp_path / "oci/index.json").read_text())
    assert [m["digest"] for m in index["manifests"]] == [built.digest]
    for blob in [*built.blobs(), built.manifest]:
        assert (tmp_path / "oci/blobs/sha256" / blob.digest.removeprefix("sha256:")).read_bytes() == blob.data
    if shutil.which("docker-registry", path=SBIN) is None:
        pytest.skip("docker-registry (Debian) not installed: layout checked, push not")

    async def push_and_read_back() -> tuple[str, bytes]:
        local = LocalRegistry(tmp_path / "registry")
        await local.start()
        try:
            address = await image.push(built, local.address, "kruise-py", "t1")
            assert address == local.address
            async with local.client() as client:
                accept = {"Accept": image.oci.MANIFEST_TYPE}
                answer = await client.get("/v2/kruise-py/manifests/t1", headers=accept)
                return answer.headers["Docker-Content-Digest"], answer.content
        finally:
            await local.stop()

    digest, manifest = asyncio.run(push_and_read_back())
    assert (digest, manifest) == (built.digest, built.manifest.data)


def test_processes_import_every_module_and_have_its_pyc(tree: Path) -> None:
    """What the three processes import imports in the image as uid 65534, and each such module has its
    .pyc (no start compiles it); a module none of them imports keeps no .pyc but still imports."""
    modules = rootfs.imported_modules(tree)
    assert any(m.endswith("/kruise/manager/controllers/cloneset/__init__.py") for m in modules)
    assert any(m.endswith("/uvloop/__init__.py") for m in modules)
    missing = []
    for module in modules:
        source = tree / module.lstrip("/")
        if module.startswith(rootfs.COMPILED):
            pyc = source.parent / "__pycache__" / f"{source.stem}.cpython-311.pyc"
            if not pyc.exists():
                missing.append(module)
    assert missing == []
    lexer = tree / wheels.SITE / "pygments/lexers/__pycache__/python.cpython-311.pyc"
    assert not lexer.exists()
    done = rootfs.run_as_user(tree, "python3", "-c", "import pygments.lexers.python, kruise.cli.main")
    assert done.returncode == 0, done.stderr


def test_stripped_extension_modules_still_load(tree: Path) -> None:
    code = (
        "import asyncio, uvloop, grpc, cryptography.hazmat.bindings._rust, pydantic_core, yaml._yaml\n"
        "loop = uvloop.new_event_loop()\n"
        "print(loop.run_until_complete(asyncio.sleep(0, 'ran')))\n"
    )
    done = rootfs.run_as_user(tree, "python3", "-c", code)
    assert (done.returncode, done.stdout.strip()) == (0, "ran"), done.stderr
    if shutil.which("strip") is not None:
        so = next((tree / wheels.SITE / "uvloop").glob("loop.*.so"))
        assert b".debug_info" not in so.read_bytes()


def test_a_pin_the_mirror_dropped_is_replaced_with_a_warning_line() -> None:
    pins = rootfs._read_pins(rootfs.DEBIAN_LOCK)
    current = {p.name: p.version for p in debian_base.resolve(pins=pins)}
    pins["libc6"] = "2.36-9+deb12u0~gone"
    used = debian_base.resolve(pins=pins)
    assert {p.name: p.version for p in used} == current
    assert f"libc6: locked 2.36-9+deb12u0~gone, used {current['libc6']}" in debian_base.drift(used, pins)
    with pytest.raises(debian_base.DebianError, match="libc6"):
        debian_base.resolve(pins=pins, strict=True)
