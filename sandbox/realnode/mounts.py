"""Unmounting what a crashed or killed containerd left mounted below a node's directory.

containerd mounts container root filesystems, /dev/shm of sandboxes and (with
netns_mounts_under_state_dir) the pods' network namespaces below its state directory; if it dies
before it unmounts them, they pin overlay snapshots and network namespaces until someone does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

MNT_DETACH = 2


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (``\\040``)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def mounts_below(directory: Path, mountinfo: str | None = None) -> list[Path]:
    """Mount points at or below ``directory``, deepest first (the order to unmount them in)."""
    root = os.path.realpath(directory)
    if mountinfo is None:
        mountinfo = Path("/proc/self/mountinfo").read_text()
    found = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) > 4:
            point = _unescape(fields[4])
            if point == root or point.startswith(root + "/"):
                found.append(Path(point))
    return sorted(set(found), key=lambda p: (-len(p.parts), str(p)))


def unmount(path: Path) -> None:
    """Lazily detach ``path`` (``umount -l``); an already-gone mount is no error."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if libc.umount2(os.fsencode(path), MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        if errno not in (22, 2):  # EINVAL: not a mount point (any more); ENOENT: gone
            raise OSError(errno, f"umount {path}: {os.strerror(errno)}")


def unmount_below(directory: Path) -> list[Path]:
    """Unmount everything below ``directory``; returns what was unmounted."""
    done = []
    for point in mounts_below(directory):
        unmount(point)
        done.append(point)
    return done
