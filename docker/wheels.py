"""The Python half of kruise-py's image: kruise-py's and its dependencies' wheels, for Debian's python3.

The wheel set is what docker/Dockerfile installs: kruise-py built with KRUISE_NO_SANDBOX=1 from the same
source folders the Dockerfile copies, and the dependencies' wheels from PyPI pinned by
docker/requirements.lock (which the Dockerfile uses as its constraints too). Only binary wheels for
CPython 3.11 on glibc x86_64 are taken: the image has no compiler, and neither does the build.

Wheels are installed with pypa's `installer` rather than pip: pip can only install for the interpreter
that runs it, while this installs for the image's /usr/bin/python3 into Debian's
/usr/local/lib/python3.11/dist-packages, with launchers whose `#!` names the image's interpreter.
"""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from installer import install
from installer.destinations import SchemeDictionaryDestination
from installer.sources import WheelFile

REPO = Path(__file__).resolve().parent.parent
# The Dockerfile's build stage copies exactly these; a test keeps the two lists equal.
SOURCES = ("pyproject.toml", "setup.py", "README.md", "api", "kube", "control", "manager", "webhook")
SOURCES += ("daemon", "cli")
SITE = "usr/local/lib/python3.11/dist-packages"
# kubernetes-asyncio's generated OpenAPI classes (20 MB of source, 20 MB of bytecode): its package
# __init__ imports all of them, so every process loads them at start, but kruise-py never calls one (it
# uses only ApiClient's configuration and REST client). Both images ship them as bytecode only (.pyc
# beside each module, no .py): same behaviour, 20 MB less; a traceback through them would lack source
# lines. The Dockerfile does the same (a test keeps it naming these folders).
BYTECODE_ONLY = ("kubernetes_asyncio/client/api", "kubernetes_asyncio/client/models")
INTERPRETER = "/usr/bin/python3"
# Debian bookworm's glibc is 2.36: every manylinux tag up to it (pip does not expand a given --platform).
PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(36, 4, -1)]
PLATFORMS += ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
TARGET = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
TARGET += ["--python-version", "3.11", "--implementation", "cp", "--only-binary=:all:"]
TARGET += ["--abi", "cp311", "--abi", "abi3", "--abi", "none"]


class WheelError(RuntimeError):
    pass


def _pip(*args: str, env: dict[str, str] | None = None) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise WheelError(f"pip {args[0]} failed:\n{done.stdout}\n{done.stderr}")


def build_kruise_wheel(work: Path) -> Path:
    """kruise-py's wheel without the sandbox, built from a clean copy of the sources (an in-place build
    would pick up a stale build/ holding the sandbox)."""
    source = work / "src"
    shutil.rmtree(source, ignore_errors=True)
    source.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=ignore)
        else:
            shutil.copy2(REPO / name, source / name)
    out = work / "kruise-wheel"
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "KRUISE_NO_SANDBOX": "1"}
    _pip("wheel", "--no-deps", "--wheel-dir", str(out), str(source), env=env)
    wheels = sorted(out.glob("kruise_py-*.whl"))
    if len(wheels) != 1:
        raise WheelError(f"expected one kruise_py wheel in {out}, found {[w.name for w in wheels]}")
    return wheels[0]


def fetch_dependencies(kruise_wheel: Path, lock: Path, work: Path, cache: Path) -> list[Path]:
    """kruise-py's wheel plus every dependency's wheel, at the versions `lock` pins.

    pip resolves the set from the wheels `cache` holds first (offline: no index query, which is most of a
    warm build's pip time) and from PyPI when they do not satisfy kruise-py's requirements under the
    lock; either way the set comes from the same resolver and the same lock. PyPI never replaces a
    released file (a name is uploaded once; a yanked release still installs when pinned with ==), so
    these pins do not vanish as Debian's do - only a release its maintainers delete outright would."""
    out = work / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    args = ("download", "--dest", str(out), "--constraint", str(lock), *TARGET, str(kruise_wheel))
    shutil.rmtree(out, ignore_errors=True)
    try:
        _pip(*args[:1], "--no-index", "--find-links", str(cache), *args[1:])
    except WheelError:
        shutil.rmtree(out, ignore_errors=True)
        _pip(*args)
    found = sorted(out.glob("*.whl"))
    for wheel in found:
        if not wheel.name.startswith("kruise_py-") and not (cache / wheel.name).exists():
            shutil.copy2(wheel, cache / wheel.name)
    return found


def lock_dependencies(kruise_wheel: Path, lock: Path, work: Path) -> None:
    """Rewrite `lock` with the newest versions PyPI offers today for the image's platform."""
    out = work / "lock-wheels"
    shutil.rmtree(out, ignore_errors=True)
    _pip("download", "--dest", str(out), *TARGET, str(kruise_wheel))
    found = [w for w in out.glob("*.whl") if not w.name.startswith("kruise_py-")]
    pins = sorted(f"{_dist_name(w)}=={w.name.split('-')[1]}" for w in found)
    header = "# PyPI pins of kruise-py's image (Dockerfile and `make image-rootfs`): `make image-lock`\n"
    lock.write_text(header + "".join(f"{pin}\n" for pin in pins))


def _dist_name(wheel: Path) -> str:
    return wheel.name.split("-")[0].replace("_", "-").lower()


def install_wheels(wheels: list[Path], root: Path) -> None:
    """Install into `root` as Debian's python3 lays out locally installed packages."""
    scheme = {
        "purelib": f"/{SITE}",
        "platlib": f"/{SITE}",
        "headers": "/usr/local/include/python3.11",
        "scripts": "/usr/local/bin",
        "data": "/usr/local",
    }
    destination = SchemeDictionaryDestination(
        scheme, interpreter=INTERPRETER, script_kind="posix", destdir=str(root)
    )
    for wheel in wheels:
        with WheelFile.open(wheel) as source:
            install(source, destination, additional_metadata={"INSTALLER": b"kruise-py image build\n"})


def installed_paths(wheels: list[Path]) -> set[str]:
    """The files any installer lays down from `wheels` (pip for docker/Dockerfile, `installer` here), as
    paths under the root, before byte-compiling: each archive member at its scheme's place, plus one
    launcher per console script. Installer-specific metadata (INSTALLER, pip's REQUESTED and
    direct_url.json) is left out: it names the tool, not the content."""
    places = {
        "purelib": SITE,
        "platlib": SITE,
        "scripts": "usr/local/bin",
        "data": "usr/local",
        "headers": "usr/local/include/python3.11",
    }
    paths: set[str] = set()
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
            for name in names:
                top, _, rest = name.partition("/")
                if top.endswith(".data"):
                    key, _, inner = rest.partition("/")
                    if key == "headers":
                        inner = f"{top.removesuffix('.data').split('-')[0]}/{inner}"
                    paths.add(f"{places[key]}/{inner}")
                else:
                    paths.add(f"{SITE}/{name}")
                if name.endswith(".dist-info/entry_points.txt"):
                    paths |= {f"usr/local/bin/{s}" for s in _console_scripts(archive.read(name).decode())}
    return paths


def bytecode_only(paths: set[str]) -> set[str]:
    """`paths` (as installed_paths gives them) with BYTECODE_ONLY's modules as their .pyc instead."""
    inside = tuple(f"{SITE}/{package}/" for package in BYTECODE_ONLY)
    return {
        p.removesuffix(".py") + ".pyc" if p.startswith(inside) and p.endswith(".py") else p for p in paths
    }


def _console_scripts(entry_points: str) -> list[str]:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(entry_points)
    return list(parser["console_scripts"]) if parser.has_section("console_scripts") else []
