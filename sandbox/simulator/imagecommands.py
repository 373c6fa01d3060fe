"""What the simulated images' executables do: a small, explicit table.

A simulated container runs no process, so nothing tells the fake runtime whether its command
exists or when it ends. For the images the e2e suites use, this table says what a node would:
each image's ENTRYPOINT and CMD, which executables it has, and, for a few well-known commands,
what they do. ``outcome`` answers for one container spec:

- ``StartFails``: the executable is not in the image; runc fails the start (exit 128, reason
  ``StartError``, containerd's message), for any kind of container;
- ``Exits``: the command ends by itself after ``seconds`` (cluster seconds) with ``code``:
  ``sh`` without stdin or a tty (0 at once), ``true``/``false``, ``sleep N``, ``ls PATH`` (its
  exit code for a path the image lacks: busybox's 1, GNU coreutils' 2), ``sh -c`` of one
  such command or ``exit N`` (a missing command there is the shell's 127);
- ``None``: nothing known (an image not in the table, a script, a server) - the kubelet keeps
  its scripted behaviour (runs until stopped, or the pod's run time under Never/OnFailure).

Only images whose executables are listed (busybox) can fail a start; the others name just their
default command, and every executable is taken to exist there.
"""

from __future__ import annotations

import math
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.sandbox.cri.images import InvalidReferenceError, parse_reference

# The busybox applets a container is likely to be asked for (busybox 1.36, as linked in /bin).
BUSYBOX_APPLETS = frozenset(
    """
    [ [[ addgroup adduser ar arch arp arping ash awk base64 basename bc blkid bunzip2 busybox bzcat
    bzip2 cal cat chgrp chmod chown chroot cksum clear cmp comm cp cpio crond crontab cut date dc dd
    deluser df diff dirname dmesg dnsdomainname du echo ed egrep env expand expr factor fallocate
    false fdisk fgrep find flock fold free fsync fuser getopt grep groups gunzip gzip halt head
    hexdump hostid hostname httpd hwclock id ifconfig init install ip ipcalc kill killall less link
    ln logger login logname ls lsof md5sum mkdir mkfifo mknod mktemp more mount mv nc netstat nice
    nl nohup nproc nsenter nslookup od passwd paste patch pgrep pidof ping ping6 pivot_root pkill
    poweroff printenv printf ps pwd readlink realpath reboot renice reset rev rm rmdir route run-parts
    sed seq setsid sh sha1sum sha256sum sha512sum shred shuf sleep sort split stat strings stty su
    sum sync sysctl tac tail tar tee telnet test time timeout top touch tr traceroute true truncate
    tty umount uname uniq unlink unshare unzip uptime usleep uudecode uuencode vi watch wc wget which
    who whoami xargs yes zcat
    """.split()  # noqa: SIM905 - a word list reads best as words
)
PATH_DIRS = ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin")
SHELLS = frozenset({"sh", "ash", "bash", "dash"})
# Paths every Linux container has (plus its volume mounts).
STANDARD_PATHS = frozenset(
    """
    / /bin /dev /dev/null /dev/zero /dev/stdout /dev/stderr /etc /etc/hosts /etc/hostname
    /etc/resolv.conf /etc/passwd /etc/group /home /proc /root /sbin /sys /tmp /usr /usr/bin /var
    """.split()  # noqa: SIM905
)
RUNC_PREFIX = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
    "runc create failed: unable to start container process: "
)
_SLEEP_ARG = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$")
_SLEEP_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_SHELL_SYNTAX = re.compile(r"[;&|<>`$(){}\n*?\[\]~]")


@dataclass(frozen=True)
class ImageCommands:
    """One image (any tag) of the table.

    Attributes:
        repositories: normalized repositories (``docker.io/library/busybox``) it covers.
        entrypoint: the image's ENTRYPOINT.
        cmd: the image's CMD (replaced by a container's ``args``).
        executables: the names on its PATH (also found under ``PATH_DIRS``); None when not
            listed (every executable is taken to exist).
        ls_missing_exit: what its ``ls`` exits with for a path it lacks.
    """

    repositories: frozenset[str]
    entrypoint: tuple[str, ...] = ()
    cmd: tuple[str, ...] = ()
    executables: frozenset[str] | None = None
    ls_missing_exit: int = 1

    def argv(self, command: Sequence[str], args: Sequence[str]) -> list[str]:
        """What runs, by the kubelet's rules: ``command`` replaces ENTRYPOINT (and drops CMD),
        ``args`` replaces CMD."""
        if command:
            return [*command, *args]
        return [*self.entrypoint, *(args or self.cmd)]

    def executable(self, name: str) -> str | None:
        """The executable ``name`` runs (its base name), or None if the image has none such."""
        if "/" in name:
            directory, base = posixpath.split(posixpath.normpath(name))
            if self.executables is None:
                return base
            return base if directory in PATH_DIRS and base in self.executables else None
        if self.executables is None or name in self.executables:
            return name
        return None


def _e2e(name: str) -> frozenset[str]:
    return frozenset({f"registry.k8s.io/e2e-test-images/{name}", f"k8s.gcr.io/e2e-test-images/{name}"})


TABLE: tuple[ImageCommands, ...] = (
    ImageCommands(
        frozenset({"docker.io/library/busybox", "gcr.io/google-containers/busybox"}) | _e2e("busybox"),
        cmd=("sh",),
        executables=BUSYBOX_APPLETS,
    ),
    # the e2e images are alpine-based: busybox's shell and ls
    ImageCommands(_e2e("nginx"), cmd=("nginx", "-g", "daemon off;")),
    ImageCommands(_e2e("httpd"), cmd=("httpd-foreground",)),
    ImageCommands(_e2e("agnhost"), entrypoint=("/agnhost",), cmd=("pause",)),
    ImageCommands(_e2e("redis"), entrypoint=("docker-entrypoint.sh",), cmd=("redis-server",)),
    ImageCommands(
        frozenset({"docker.io/library/nginx"}),
        entrypoint=("/docker-entrypoint.sh",),
        cmd=("nginx", "-g", "daemon off;"),
        ls_missing_exit=2,  # debian: GNU coreutils
    ),
)


@dataclass(frozen=True)
class StartFails:
    """The runtime cannot start the command; ``message`` is containerd's."""

    message: str


@dataclass(frozen=True)
class Exits:
    """The command ends by itself after ``seconds`` (cluster seconds) with ``code``."""

    code: int
    seconds: float = 0.0


Outcome = StartFails | Exits


def image_commands(image: str) -> ImageCommands | None:
    try:
        repository = parse_reference(image).repository
    except InvalidReferenceError:
        return None
    return next((entry for entry in TABLE if repository in entry.repositories), None)


def not_found_message(executable: str) -> str:
    """runc's words for an executable the image lacks (a path: the stat error)."""
    if "/" in executable:
        return f'{RUNC_PREFIX}exec: "{executable}": stat {executable}: no such file or directory: unknown'
    return f'{RUNC_PREFIX}exec: "{executable}": executable file not found in $PATH: unknown'


def outcome(container: Mapping[str, Any]) -> Outcome | None:
    """What the container's command does in its image (see the module docstring)."""
    entry = image_commands(str(container.get("image") or ""))
    if entry is None:
        return None
    argv = entry.argv(
        [str(a) for a in container.get("command") or ()], [str(a) for a in container.get("args") or ()]
    )
    if not argv:
        return None
    name = entry.executable(argv[0])
    if name is None:
        return StartFails(not_found_message(argv[0]))
    mounts = [str(m.get("mountPath") or "") for m in container.get("volumeMounts") or ()]
    interactive = bool(container.get("stdin") or container.get("tty"))
    return _run(entry, name, argv[1:], mounts, interactive)


def _run(
    entry: ImageCommands, name: str, args: list[str], mounts: list[str], interactive: bool
) -> Outcome | None:
    if name in SHELLS:
        return _shell(entry, args, mounts, interactive)
    if name == "true":
        return Exits(0)
    if name == "false":
        return Exits(1)
    if name == "sleep":
        return _sleep(args)
    if name == "ls":
        return _ls(entry, args, mounts)
    return None


def _shell(entry: ImageCommands, args: list[str], mounts: list[str], interactive: bool) -> Outcome | None:
    """``sh`` reads commands from stdin: without one (and no tty) it reads EOF and exits 0."""
    if not args:
        return None if interactive else Exits(0)
    if args[0] != "-c" or len(args) < 2:
        return None  # a script file, or options: not known
    return _script(entry, args[1], mounts)


def _script(entry: ImageCommands, script: str, mounts: list[str]) -> Outcome | None:
    """One simple command (maybe after ``exec``); anything with more shell syntax is not known."""
    if _SHELL_SYNTAX.search(script):
        return None
    try:
        words = shlex.split(script)
    except ValueError:
        return Exits(2)  # the shell's syntax error
    if words[:1] == ["exec"]:
        words = words[1:]
    if not words:
        return Exits(0)
    if words[0] == "exit":
        return _exit(words[1:])
    if words[0] == ":":
        return Exits(0)
    name = entry.executable(words[0])
    if name is None:
        return Exits(127)  # sh: <name>: not found
    return _run(entry, name, words[1:], mounts, interactive=False)


def _exit(args: list[str]) -> Exits:
    if not args:
        return Exits(0)
    try:
        return Exits(int(args[0]) % 256)
    except ValueError:
        return Exits(2)  # sh: exit: Illegal number


def _sleep(args: list[str]) -> Exits | None:
    """busybox and GNU ``sleep`` add up their arguments (``1m 30s``); ``infinity`` never ends."""
    if not args:
        return Exits(1)  # usage
    total = 0.0
    for arg in args:
        if arg in ("inf", "infinity"):
            return None
        match = _SLEEP_ARG.match(arg)
        if match is None:
            return Exits(1)  # invalid number
        total += float(match.group(1)) * _SLEEP_UNIT[match.group(2)]
    return Exits(0, total) if math.isfinite(total) else None


def _ls(entry: ImageCommands, args: list[str], mounts: list[str]) -> Exits | None:
    """``ls`` of paths the image has exits 0; of one it lacks, the image's ``ls_missing_exit``.
    Inside a volume mount, or in an image whose files are not listed, nothing is known."""
    paths = [a for a in args if not a.startswith("-")]
    missing = False
    for path in paths:
        full = posixpath.normpath(posixpath.join("/", path))
        if full in STANDARD_PATHS or full in mounts or _image_path(entry, full):
            continue
        if entry.executables is None or any(full.startswith(m.rstrip("/") + "/") for m in mounts if m):
            return None  # an image whose files are not listed, or inside a volume
        missing = True
    return Exits(entry.ls_missing_exit if missing else 0)


def _image_path(entry: ImageCommands, path: str) -> bool:
    directory, base = posixpath.split(path)
    if path in PATH_DIRS:
        return True
    return directory in PATH_DIRS and entry.executables is not None and base in entry.executables
