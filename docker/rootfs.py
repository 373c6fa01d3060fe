"""Build kruise-py's image root file system without Docker: `make image-rootfs` (as root, on Debian).

    python docker/rootfs.py build [--out build/image/rootfs]   # the tree, its manifest and digest
    python docker/rootfs.py check [--out build/image/rootfs]   # run the entry points in it as uid 65534
    python docker/rootfs.py lock                               # re-pin docker/debian.lock + requirements.lock

This lives under docker/ and not in kruise.cli because it is build tooling: nothing of it belongs in the
image it builds. Same source, same locks, same SOURCE_DATE_EPOCH (default: the last commit's time) give
a byte-identical tree; the manifest (one line per path: type, mode, owner, size, sha256 or link target,
mtime) is what a reproducibility check compares, and its sha256 is the tree's digest.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import debian_base
import wheels

REPO = Path(__file__).resolve().parent.parent
DEBIAN_LOCK = REPO / "docker/debian.lock"
PYPI_LOCK = REPO / "docker/requirements.lock"
DEFAULT_OUT = REPO / "build/image/rootfs"
ENTRY_POINTS = ("kruise-manager", "kruise-webhook", "kruise-daemon")
USER = "65534:65534"
COMPILED = ("/usr/lib/python3.11", f"/{wheels.SITE}")
# What the three processes import: their main modules, every module of the layers they are made of (the
# manager's controllers and the webhook's handlers are imported by discovery, not by name) and what
# they import only once running (uvloop's loop). Only these modules get a .pyc (docs/image.md).
PROCESS_LAYERS = ("api", "kube", "control", "manager", "webhook", "daemon")
RUNTIME_IMPORTS = ("uvloop",)
IMPORT_PROBE = f"""
import importlib, pkgutil, sys
for layer in {PROCESS_LAYERS!r}:
    package = importlib.import_module("kruise." + layer)
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith(".__main__"):
            importlib.import_module(module.name)
for name in {RUNTIME_IMPORTS!r}:
    importlib.import_module(name)
print("\\n".join(sorted({{m.__file__ for m in list(sys.modules.values()) if getattr(m, "__file__", None)}})))
"""


class BuildError(RuntimeError):
    pass


def source_date_epoch() -> int:
    if "SOURCE_DATE_EPOCH" in os.environ:
        value = os.environ["SOURCE_DATE_EPOCH"]
        if not value.isdigit():
            raise BuildError(f"SOURCE_DATE_EPOCH: must be a non-negative integer (seconds), got {value!r}")
        return int(value)
    done = subprocess.run(
        ["git", "-C", str(REPO), "log", "-1", "--format=%ct"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0 or not done.stdout.strip().isdigit():
        raise BuildError("SOURCE_DATE_EPOCH: unset and not in a git checkout; set it (seconds since 1970)")
    return int(done.stdout.strip())


def _read_pins(lock: Path) -> dict[str, str]:
    pins = {}
    for line in lock.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("=")
            pins[name.strip()] = version.strip()
    return pins


def build(out: Path, cache: Path, epoch: int, strict: bool = False) -> str:
    """Build the tree at `out` from scratch; return the manifest's sha256 (also written next to the tree).

    `cache` keeps downloads (.debs, wheels) between builds. A Debian pin the mirror no longer offers is
    replaced by the mirror's version with a warning (`strict`: an error); what was used is written to
    `locks.used` next to the tree either way."""
    if os.geteuid() != 0:
        raise BuildError("image rootfs: must run as root (files owned by root, chroot to byte-compile)")
    os.umask(0o022)
    work = out.parent / "work"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    work.mkdir(parents=True, exist_ok=True)

    pins = _read_pins(DEBIAN_LOCK)
    packages = debian_base.resolve(pins=pins, strict=strict)
    drift = debian_base.drift(packages, pins)
    for line in drift:
        print(
            f"warning: docker/debian.lock: {line} (the mirror moved on; `make image-lock`)", file=sys.stderr
        )
    debs = debian_base.download(packages, cache / "debs")
    debian_base.unpack(packages, debs, out)
    debian_base.configure(out)

    kruise_wheel = wheels.build_kruise_wheel(work)
    installed = wheels.fetch_dependencies(kruise_wheel, PYPI_LOCK, work, cache / "wheels")
    wheels.install_wheels(installed, out)
    shutil.copytree(REPO / "crds", out / "opt/kruise/crds")
    _record_inputs(out.parent / "locks.used", packages, installed, drift)

    strip_extensions(out)
    _byte_compile(out, epoch, imported_modules(out))
    _normalise(out, epoch)
    manifest = render_manifest(out)
    (out.parent / "rootfs.manifest").write_text(manifest)
    return hashlib.sha256(manifest.encode()).hexdigest()


def _chroot() -> str:
    found = shutil.which("chroot") or shutil.which("chroot", path="/usr/sbin:/sbin")
    if found is None:
        raise BuildError("chroot: not found (coreutils)")
    return found


def _record_inputs(
    path: Path, packages: list[debian_base.Package], installed: list[Path], drift: list[str]
) -> None:
    """What this build used, as lock lines: equal to the locks unless the mirror moved on (then `drift`)."""
    lines = ["# Debian packages used"] + [f"{p.name}={p.version}" for p in packages]
    lines += ["# wheels used", *sorted(w.name for w in installed)]
    lines += [f"# drift from docker/debian.lock: {line}" for line in drift]
    path.write_text("\n".join(lines) + "\n")


def _elf(path: Path) -> bool:
    with path.open("rb") as stream:
        return stream.read(4) == b"\x7fELF"


def strip_extensions(root: Path) -> int:
    """Strip the wheels' extension modules as Debian strips its shared libraries (`--strip-unneeded`:
    the dynamic symbols Python loads them by stay; debug information and the static symbol table go).
    uvloop's wheel alone ships 12 MB of DWARF. Returns the bytes saved; without binutils' `strip` the
    files stay as the wheels have them (a warning says so)."""
    tool = shutil.which("strip")
    if tool is None:
        print(
            "warning: strip (binutils) not found: extension modules keep their debug symbols", file=sys.stderr
        )
        return 0
    saved = 0
    for path in sorted((root / wheels.SITE).rglob("*.so*")):
        if path.is_file() and not path.is_symlink() and _elf(path):
            before = path.stat().st_size
            subprocess.run([tool, "--strip-unneeded", str(path)], check=True)
            saved += before - path.stat().st_size
    return saved


def imported_modules(root: Path) -> list[str]:
    """The source files of every module the three processes import (IMPORT_PROBE), found by importing
    them with the image's interpreter as uid 65534 - which also proves they all import in the image."""
    done = run_as_user(root, "/usr/bin/python3", "-c", IMPORT_PROBE)
    if done.returncode != 0:
        raise BuildError(f"importing the processes' modules in the image failed:\n{done.stderr}")
    return [line for line in done.stdout.splitlines() if line.endswith(".py")]


def _byte_compile(root: Path, epoch: int, modules: list[str]) -> None:
    """.pyc files for the modules the processes import, made by the image's own interpreter: the image
    runs as a user who cannot write __pycache__, so without them every start recompiles kruise-py, its
    dependencies and the stdlib in memory. A module imported by none of the three (the `kruise` CLI's,
    pygments' lexers, most of the stdlib) keeps only its source: importing it still works, it is just
    compiled in memory. wheels.BYTECODE_ONLY packages get their .pyc beside the module and lose the
    source. unchecked-hash .pyc files hold no timestamp (reproducible) and are never revalidated (the
    image's sources never change); PYTHONHASHSEED=0 orders frozenset constants the same way in every
    build."""
    bytecode_only = tuple(f"/{wheels.SITE}/{package}/" for package in wheels.BYTECODE_ONLY)
    inside = [m for m in modules if m.startswith(COMPILED) and not m.startswith(bytecode_only)]
    _compileall(root, epoch, ["-i", "-"], "\n".join(inside) + "\n")
    _compileall(root, epoch, ["-b", *(p.rstrip("/") for p in bytecode_only)], "")
    for package in wheels.BYTECODE_ONLY:
        for source in sorted((root / wheels.SITE / package).rglob("*.py")):
            if not source.with_suffix(".pyc").is_file():
                raise BuildError(
                    f"{source.relative_to(root)}: no .pyc beside it, so it cannot lose its source"
                )
            source.unlink()
        for cache in sorted((root / wheels.SITE / package).rglob("__pycache__")):
            shutil.rmtree(cache)


def _compileall(root: Path, epoch: int, args: list[str], stdin: str) -> None:
    env = {"PATH": "/usr/bin", "PYTHONHASHSEED": "0", "SOURCE_DATE_EPOCH": str(epoch), "LC_ALL": "C.UTF-8"}
    command = [_chroot(), str(root), "/usr/bin/python3", "-m", "compileall", "-q", "-q", "-j", "1"]
    command += ["--invalidation-mode", "unchecked-hash", *args]
    done = subprocess.run(command, input=stdin, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BuildError(f"byte-compiling in the image failed:\n{done.stdout}\n{done.stderr}")


def _normalise(root: Path, epoch: int) -> None:
    """Everything owned by root, no mtime after SOURCE_DATE_EPOCH (bottom-up, so directories stay clamped)."""
    for path in [*sorted(root.rglob("*"), key=lambda p: len(p.parts), reverse=True), root]:
        info = path.lstat()
        os.lchown(path, 0, 0)
        mtime = min(int(info.st_mtime), epoch)
        os.utime(path, (mtime, mtime), follow_symlinks=False)


def render_manifest(root: Path) -> str:
    lines = []
    for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        info = path.lstat()
        rel = path.relative_to(root).as_posix()
        head = f"{stat.filemode(info.st_mode)} {info.st_uid}:{info.st_gid} {int(info.st_mtime)}"
        if stat.S_ISLNK(info.st_mode):
            lines.append(f"{head} /{rel} -> {os.readlink(path)}")
        elif stat.S_ISREG(info.st_mode):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{head} /{rel} {info.st_size} sha256:{digest}")
        else:
            lines.append(f"{head} /{rel}")
    return "\n".join(lines) + "\n"


def tree_size(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def run_as_user(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """Run `argv` inside the tree as uid/gid 65534, with the environment an OCI runtime gives a container."""
    env = {"PATH": "/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent"}
    command = [_chroot(), f"--userspec={USER}", "--groups=", str(root), *argv]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False, timeout=120)


def check(root: Path) -> list[str]:
    """What must hold of a built tree; empty when all is well."""
    problems = []
    for name in ENTRY_POINTS:
        done = run_as_user(root, name, "--help")
        if done.returncode != 0 or "usage" not in done.stdout.lower():
            problems.append(f"{name} --help as uid 65534: exit {done.returncode}\n{done.stdout}{done.stderr}")
    done = run_as_user(root, "python3", "-c", "import kruise.sandbox")
    if done.returncode == 0:
        problems.append("kruise.sandbox is importable in the image")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="docker/rootfs.py", description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["build", "check", "lock"])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the tree (default: %(default)s)")
    parser.add_argument("--cache", type=Path, default=REPO / "build/image/cache", help=".debs and wheels")
    parser.add_argument(
        "--strict-locks", action="store_true", help="fail instead of warning when the mirror dropped a pin"
    )
    args = parser.parse_args(argv)
    try:
        if args.action == "lock":
            return _lock(args.out.parent / "work")
        if args.action == "build":
            started = time.monotonic()
            digest = build(args.out, args.cache, source_date_epoch(), args.strict_locks)
            size = tree_size(args.out) / 1e6
            print(f"rootfs {args.out}: {size:.1f} MB uncompressed, manifest sha256:{digest}")
            print(f"built in {time.monotonic() - started:.0f} s")
        problems = check(args.out)
    except (BuildError, debian_base.DebianError, wheels.WheelError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for problem in problems:
        print(f"check failed: {problem}", file=sys.stderr)
    if not problems:
        print(f"rootfs {args.out}: {', '.join(ENTRY_POINTS)} run as uid 65534; kruise.sandbox absent")
    return 1 if problems else 0


def _lock(work: Path) -> int:
    packages = debian_base.resolve()
    DEBIAN_LOCK.write_text(
        "# Debian bookworm packages of kruise-py's image root file system (`make image-lock` refreshes)\n"
        + "".join(f"{p.name}={p.version}\n" for p in packages)
    )
    wheels.lock_dependencies(wheels.build_kruise_wheel(work), PYPI_LOCK, work)
    print(f"wrote {DEBIAN_LOCK.relative_to(REPO)} and {PYPI_LOCK.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
