"""docker/Dockerfile and `make image-rootfs` (docker/rootfs.py) must install the same wheels: the same
source folders build kruise-py's wheel, both without the sandbox, and one lock pins the dependencies."""

from __future__ import annotations

import re
import shlex
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "docker"))

import wheels  # noqa: E402

DOCKERFILE = (ROOT / "docker/Dockerfile").read_text()


def _build_stage() -> list[str]:
    stages = re.split(r"^FROM ", DOCKERFILE, flags=re.MULTILINE)
    return [line.strip() for line in stages[1].splitlines()]


def test_dockerfile_copies_the_sources_the_rootfs_build_uses() -> None:
    copied = []
    for line in _build_stage():
        if line.startswith("COPY ") and "requirements.lock" not in line:
            *sources, _dest = shlex.split(line)[1:]
            copied += sources
    assert sorted(copied) == sorted(wheels.SOURCES)


def test_dockerfile_builds_without_the_sandbox_and_with_the_lock() -> None:
    stage = "\n".join(_build_stage())
    assert "ENV KRUISE_NO_SANDBOX=1" in stage
    assert "COPY docker/requirements.lock /tmp/requirements.lock" in stage
    run = next(line for line in _build_stage() if line.startswith("RUN pip wheel"))
    assert "--constraint /tmp/requirements.lock" in run
    assert "--only-binary=:all:" in run


def _pins(lock: Path, separator: str) -> dict[str, str]:
    pins = {}
    for line in lock.read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition(separator)
            pins[name] = version
    return pins


def test_requirements_lock_pins_every_direct_dependency() -> None:
    pins = _pins(ROOT / "docker/requirements.lock", "==")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    direct = {re.split(r"[\[<>=!~ ]", dep)[0].lower() for dep in project["dependencies"]}
    assert direct - set(pins) == set()
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.+!]*", v) for v in pins.values()), pins


def test_debian_lock_pins_the_python_runtime() -> None:
    pins = _pins(ROOT / "docker/debian.lock", "=")
    assert {"python3.11-minimal", "libpython3.11-stdlib", "libstdc++6", "ca-certificates"} <= set(pins)
    assert not {"dpkg", "perl-base", "gcc-12", "cpp-12", "binutils"} & set(pins)


def test_dockerfile_ships_the_same_packages_as_bytecode_only() -> None:
    instructions = DOCKERFILE.replace("\\\n", " ").splitlines()
    run = next(line for line in instructions if "compileall" in line and " -b " in line)
    for package in wheels.BYTECODE_ONLY:
        assert run.count(package) == 3, f"{package}: compiled beside, .py deleted, __pycache__ removed"
