"""Refuse early, in one message, when this machine cannot run a real node.

A half-started real node leaves containerd processes, mounts and bridges behind, so every missing
binary is found before anything starts and named together with the one apt-get line that fixes all.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("containerd", "runc", "containernetworking-plugins", "docker-registry", "busybox-static", "perl")
APT_LINE = "apt-get install -y " + " ".join(PACKAGES)

CNI_BIN_DIR = Path("/usr/lib/cni")
CNI_PLUGINS = ("bridge", "host-local", "loopback")
BUSYBOX = Path("/usr/bin/busybox")
PERL_LIB = Path("/usr/share/perl")  # the perl stand-in image copies bignum from here


@dataclass(frozen=True)
class Requirement:
    """One thing a real node needs, the Debian package that brings it, and how to find it."""

    what: str
    package: str
    path: Path | None = None  # a fixed file; otherwise `what` is looked up on PATH
    pattern: str = ""  # or a glob below `path` that must match a file (version-numbered directories)


REQUIREMENTS = (
    Requirement("containerd", "containerd"),
    Requirement("runc", "runc"),
    Requirement("docker-registry", "docker-registry"),
    Requirement("ip", "iproute2"),
    *(Requirement(f"CNI plugin {p}", "containernetworking-plugins", CNI_BIN_DIR / p) for p in CNI_PLUGINS),
    Requirement("busybox (static)", "busybox-static", BUSYBOX),
    Requirement("perl", "perl-base"),
    Requirement("perl's bignum modules", "perl", PERL_LIB, "5.*/bignum.pm"),
)


class PrerequisitesMissing(RuntimeError):
    """The machine lacks binaries or privileges a real node needs; the message says how to fix it."""


def missing(which: Callable[[str], str | None] = shutil.which) -> list[Requirement]:
    """The requirements not met on this machine, in declaration order."""
    found = []
    for req in REQUIREMENTS:
        if req.pattern and req.path is not None:
            present = any(p.is_file() for p in req.path.glob(req.pattern))
        elif req.path is not None:
            present = os.access(req.path, os.X_OK)
        else:
            present = which(req.what) is not None
        if not present:
            found.append(req)
    return found


def binary(name: str, which: Callable[[str], str | None] = shutil.which) -> str:
    """The absolute path of a required program, or PrerequisitesMissing naming the apt-get line."""
    path = which(name)
    if path is None:
        raise PrerequisitesMissing(f"{name}: not found on PATH; install with: {APT_LINE}")
    return path


def check(*, which: Callable[[str], str | None] = shutil.which, euid: Callable[[], int] = os.geteuid) -> None:
    """Raise PrerequisitesMissing listing every gap (binaries, root) at once, so one fix covers all."""
    problems = []
    absent = missing(which)
    if absent:
        names = ", ".join(f"{req.what} (package {req.package})" for req in absent)
        problems.append(f"missing: {names}; install them with: {APT_LINE}")
    if euid() != 0:
        problems.append(
            "not root: a real node mounts overlay filesystems, creates network namespaces and a bridge, "
            "so it must run as root (e.g. sudo)"
        )
    if problems:
        raise PrerequisitesMissing("real node (--runtime containerd) cannot start: " + "; ".join(problems))
