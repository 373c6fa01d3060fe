"""Debian's own Perl, copied into an image layer: the ``perl`` stand-in and the hot-upgrade sidecar run it.

busybox has no way to pass a listening socket between processes, Perl core does (``syscall`` to
sendmsg), and perl-base is an Essential Debian package, so every machine that can run a real node
already has it. The layer holds ``/usr/bin/perl``, the shared libraries it links (found with ``ldd``,
stored at the paths the dynamic loader looks them up), perl-base's module tree, and optionally the
pure-Perl modules from Debian's ``perl`` package that ``perl -Mbignum=bpi`` (the Kubernetes Job
example) needs. Files are read from this machine, so the digest is stable for a given Debian release.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path

from kruise.sandbox.realnode import oci
from kruise.sandbox.realnode.prereqs import PrerequisitesMissing

PERL = Path("/usr/bin/perl")

# What ``perl -Mbignum=bpi -wle 'print bpi(2000)'`` loads beyond perl-base (relative to privlib).
BIGNUM_MODULES = (
    "bigint.pm",
    "bignum.pm",
    "bigfloat.pm",
    "bigrat.pm",
    "Math/BigFloat.pm",
    "Math/BigInt.pm",
    "Math/BigInt/Calc.pm",
    "Math/BigInt/Lib.pm",
    "Math/BigRat.pm",
)

_LDD_LINE = re.compile(r"^\s*(?:\S+ => )?(/\S+) \(0x[0-9a-f]+\)$")


def shared_libraries(binary: Path, ldd_output: str | None = None) -> list[Path]:
    """The absolute paths the loader resolves ``binary``'s libraries to (loader included), as ldd says."""
    if ldd_output is None:
        ldd_output = subprocess.run(["ldd", str(binary)], check=True, capture_output=True, text=True).stdout
    found = []
    for line in ldd_output.splitlines():
        match = _LDD_LINE.match(line)
        if match:
            found.append(Path(match.group(1)))
    if not found:
        raise ValueError(f"ldd {binary}: no shared libraries listed (is it a dynamic executable?)")
    return sorted(set(found))


def _perl_config(perl: Path, *keys: str) -> list[str]:
    script = "use Config; print join(qq(\\n), map { $Config{$_} } @ARGV), qq(\\n)"
    answer = subprocess.run([str(perl), "-e", script, *keys], check=True, capture_output=True, text=True)
    return answer.stdout.splitlines()


def perl_base_dir(perl: Path = PERL) -> Path:
    """perl-base's module directory (Debian puts it on @INC as ``/usr/lib/<triplet>/perl-base``)."""
    listed = subprocess.run(
        [str(perl), "-e", "print join(qq(\\n), @INC), qq(\\n)"], check=True, capture_output=True, text=True
    ).stdout.split()
    for entry in listed:
        if entry.endswith("/perl-base") and Path(entry).is_dir():
            return Path(entry)
    raise PrerequisitesMissing(
        f"{perl}: no perl-base directory on @INC ({listed}); install with: apt-get install perl-base"
    )


def _relative(path: Path) -> str:
    return str(path).lstrip("/")


def tree_entries(root: Path) -> list[oci.Entry]:
    """Every file and symlink below ``root``, at its absolute path inside the image."""
    entries: list[oci.Entry] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if (Path(folder) / d).is_symlink()]:
            path = Path(folder) / name
            if path.is_symlink():
                entries.append(oci.symlink(_relative(path), os.readlink(path)))
            else:
                mode = 0o755 if os.access(path, os.X_OK) else 0o644
                entries.append(oci.file(_relative(path), path.read_bytes(), mode=mode))
    return entries


def _files(paths: Iterable[Path], mode: int = 0o644) -> list[oci.Entry]:
    return [oci.file(_relative(p), p.resolve().read_bytes(), mode=mode) for p in paths]


def perl_entries(perl: Path = PERL, *, modules: Sequence[str] = ()) -> list[oci.Entry]:
    """Perl, its libraries and perl-base; ``modules`` (relative to privlib) come from Debian's ``perl``."""
    if not os.access(perl, os.X_OK):
        raise PrerequisitesMissing(f"{perl}: not found; install with: apt-get install perl-base")
    entries = [oci.file(_relative(perl), perl.resolve().read_bytes(), mode=0o755)]
    entries += _files(shared_libraries(perl), mode=0o755)
    entries += tree_entries(perl_base_dir(perl))
    if modules:
        (privlib,) = _perl_config(perl, "privlibexp")
        wanted = [Path(privlib) / module for module in modules]
        absent = [str(p) for p in wanted if not p.is_file()]
        if absent:
            raise PrerequisitesMissing(f"Perl modules missing: {absent}; install with: apt-get install perl")
        entries += _files(wanted)
    return entries
