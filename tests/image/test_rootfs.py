"""`make image-rootfs` end to end: build kruise-py's image root file system twice, check what runs in it.

Needs root (the tree is owned by root; chroot), Debian's apt-get with fresh lists, dpkg-deb, tar, chroot,
and the network (Debian's mirror, PyPI). Two builds from the same source and SOURCE_DATE_EPOCH must be
byte-identical, and the Python part must be exactly the files of the wheels docker/Dockerfile's own
`pip wheel` command produces (docs/image.md).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docker"))

import rootfs  # noqa: E402
import wheels  # noqa: E402

TOOLS = ("apt-get", "apt-cache", "dpkg-deb", "tar", "chroot")
_missing = [
    tool for tool in TOOLS if shutil.which(tool, path="/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin") is None
]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.image,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(os.geteuid() != 0, reason="image rootfs build needs root (root-owned tree, chroot)"),
    pytest.mark.skipif(bool(_missing), reason=f"image rootfs build needs {', '.join(_missing)} (Debian)"),
]


def test_two_builds_are_byte_identical(builds: tuple[Path, str, Path, str], epoch: int) -> None:
    first, digest1, second, digest2 = builds
    manifest1 = (first.parent / "rootfs.manifest").read_text()
    manifest2 = (second.parent / "rootfs.manifest").read_text()
    assert manifest1 == manifest2
    assert digest1 == digest2
    assert max(int(line.split(" ")[2]) for line in manifest1.splitlines()) <= epoch


def test_entry_points_run_as_65534_and_sandbox_is_absent(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert rootfs.check(tree) == []
    done = rootfs.run_as_user(tree, "python3", "-c", "import os; print(os.getuid(), os.getgid())")
    assert done.stdout.split() == ["65534", "65534"]
    for name in rootfs.ENTRY_POINTS:
        assert (tree / "usr/local/bin" / name).read_text().startswith("#!/usr/bin/python3\n")
    with capsys.disabled():
        print(f"\nimage rootfs: {rootfs.tree_size(tree) / 1e6:.1f} MB uncompressed")


def test_user_65534_exists(tree: Path) -> None:
    passwd = (tree / "etc/passwd").read_text().splitlines()
    assert any(line.split(":")[2:4] == ["65534", "65534"] for line in passwd)


def test_no_sandbox_compilers_pip_or_apt_state(tree: Path) -> None:
    site = tree / wheels.SITE
    assert not (site / "kruise/sandbox").exists()
    (record,) = site.glob("kruise_py-*.dist-info/RECORD")
    assert "kruise/manager/main.py" in record.read_text()
    assert "kruise/sandbox/" not in record.read_text()
    binaries = {p.name for d in ("usr/bin", "usr/local/bin", "usr/sbin") for p in (tree / d).iterdir()}
    compilers = {"gcc", "cc", "c++", "g++", "cpp", "as", "ld", "clang", "make"}
    assert binaries & compilers == set()
    assert not any(re.fullmatch(r"(gcc|g\+\+|x86_64-linux-gnu-.*)", name) for name in binaries)
    assert not (site / "pip").exists() and "pip" not in binaries and "pip3" not in binaries
    for gone in ("root/.cache", "var/lib/apt/lists", "var/cache/apt", "var/cache/debconf", "usr/share/man"):
        assert not (tree / gone).exists(), gone


def test_crds_and_ca_trust(tree: Path) -> None:
    crds = sorted(p.name for p in (ROOT / "crds").iterdir())
    assert sorted(p.name for p in (tree / "opt/kruise/crds").iterdir()) == crds
    code = "import ssl; print(ssl.create_default_context().cert_store_stats()['x509_ca'])"
    done = rootfs.run_as_user(tree, "python3", "-c", code)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 100  # Debian's Mozilla bundle, found through OpenSSL's default paths


def test_python_part_is_what_the_dockerfile_installs(tree: Path, tmp_path: Path) -> None:
    """The Dockerfile's `pip wheel` line, run as written on this machine's CPython 3.11 against the
    sources it copies, yields a wheel set whose installed files are exactly the tree's /usr/local."""
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the Dockerfile's pip runs on CPython 3.11; this interpreter picks other wheels")
    source = tmp_path / "src"
    source.mkdir()
    for name in wheels.SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, source / name)
    run = next(
        line
        for line in (ROOT / "docker/Dockerfile").read_text().splitlines()
        if line.startswith("RUN pip wheel")
    )
    argv = shlex.split(run.removeprefix("RUN "))
    out = tmp_path / "wheels"
    replace = {
        "/tmp/requirements.lock": str(ROOT / "docker/requirements.lock"),
        "/wheels": str(out),
        ".": str(source),
    }
    argv = [sys.executable, "-m", *[replace.get(arg, arg) for arg in argv]]
    done = subprocess.run(argv, env={**os.environ, "KRUISE_NO_SANDBOX": "1"}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = wheels.bytecode_only(wheels.installed_paths(sorted(out.glob("*.whl"))))
    installed = {
        p.relative_to(tree).as_posix()
        for p in (tree / "usr/local").rglob("*")
        if not p.is_dir() and "__pycache__" not in p.parts and p.name != "INSTALLER"
    }
    assert installed == expected
