"""Which loopback ranges a simulator's pods and nodes live in, claimed so two simulators never share one.

Pods that run as real processes bind their pod IP (see ``processes``), and the apiserver reaches a
Service through those IPs. Two sandboxes on one machine handing out the same pod IPs would reach each
other's processes (a webhook call answered by the other sandbox's webhook fails TLS with
CERTIFICATE_VERIFY_FAILED). So each simulator claims a *slot*: slot ``k`` gives pods
``127.<244-k>.0.0/16`` (one /24 per node) and nodes ``127.18.k.0/24``; slot 0 is the historical
``127.244.x.y`` / ``127.18.0.N``.

A claim is an exclusive ``flock`` on ``<lock dir>/slot-<k>.lock``: the kernel drops it when its
owner exits, however it exits (SIGKILL included), so a dead sandbox never keeps its slot. The lock
file is opened close-on-exec, so pod processes do not inherit it. Because a process left over by an
owner that died (or anything else on the machine) may still listen in a range, a slot whose ranges
have a listening TCP socket is skipped too, and the error names the listener.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SLOTS = 40  # pods 127.244/16 down to 127.205/16, nodes 127.18.0/24 to 127.18.39/24
FIRST_POD_OCTET = 244
NODE_OCTET = 18
LOCK_DIR_ENV = "KRUISE_SANDBOX_LOCK_DIR"
PROC_NET_TCP = Path("/proc/net/tcp")
MAX_NODE_INDEX = 254  # node IP 127.18.k.(index+1) and pod /24 127.x.index.0 must stay inside one octet


def default_lock_dir() -> Path:
    """Shared by every user of the machine (the addresses are), unless ``KRUISE_SANDBOX_LOCK_DIR`` says."""
    return Path(os.environ.get(LOCK_DIR_ENV) or Path(tempfile.gettempdir()) / "kruise-sandbox-addresses")


@dataclass(frozen=True)
class AddressRanges:
    """The pod and node networks of one slot."""

    slot: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.slot < SLOTS:
            raise ValueError(f"address slot: must be in 0..{SLOTS - 1}, got {self.slot}")

    @property
    def pod_network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(f"127.{FIRST_POD_OCTET - self.slot}.0.0/16")

    @property
    def node_network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(f"127.{NODE_OCTET}.{self.slot}.0/24")

    def pod_cidr(self, index: int) -> str:
        """Node ``index``'s pod /24."""
        _check_index(index)
        return f"127.{FIRST_POD_OCTET - self.slot}.{index}.0/24"

    def node_ip(self, index: int) -> str:
        """Node ``index``'s InternalIP (also the IP of its hostNetwork pods)."""
        _check_index(index)
        return f"127.{NODE_OCTET}.{self.slot}.{index + 1}"

    def describe(self) -> str:
        return f"pods {self.pod_network}, nodes {self.node_network}"

    def contains(self, address: str) -> bool:
        ip = ipaddress.IPv4Address(address)
        return ip in self.pod_network or ip in self.node_network


def _check_index(index: int) -> None:
    if not 0 <= index <= MAX_NODE_INDEX:
        raise ValueError(f"node index: must be in 0..{MAX_NODE_INDEX}, got {index}")


class AddressesInUse(RuntimeError):
    """No slot (or not the requested one) is free; the message names who holds it."""


@dataclass
class AddressClaim:
    """A held slot; ``release`` (or the owner's death) frees it."""

    ranges: AddressRanges
    _fd: int | None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the only descriptor drops the flock

    @property
    def held(self) -> bool:
        return self._fd is not None


def claim_addresses(
    slot: int | None = None, *, lock_dir: Path | None = None, tcp_table: Path = PROC_NET_TCP
) -> AddressClaim:
    """Claim ``slot``, or the first free one; `AddressesInUse` names the holder(s) when none is free."""
    directory = lock_dir or default_lock_dir()
    ensure_lock_dir(directory)
    candidates = [slot] if slot is not None else list(range(SLOTS))
    refusals: list[str] = []
    listeners = list(listening_sockets(tcp_table))
    for candidate in candidates:
        ranges = AddressRanges(candidate)
        fd = open_lock_file(directory / f"slot-{candidate}.lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            refusals.append(f"another sandbox is using {ranges.describe()} ({_owner(fd)})")
            os.close(fd)
            continue
        busy = [(address, port, inode) for address, port, inode in listeners if ranges.contains(address)]
        if busy:
            address, port, inode = busy[0]
            refusals.append(
                f"another sandbox is using {ranges.describe()} "
                f"({_listener(inode)} listens on {address}:{port})"
            )
            os.close(fd)
            continue
        _write_owner(fd)
        return AddressClaim(ranges, fd)
    if slot is not None:
        raise AddressesInUse(refusals[0])
    raise AddressesInUse(f"no free sandbox address range (all {SLOTS} taken): " + "; ".join(refusals[:3]))


def ensure_lock_dir(directory: Path) -> None:
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # sticky and world-writable, as /tmp: every user claims here
            directory.chmod(0o1777)


def open_lock_file(path: Path) -> int:
    """Read-write (to record the owner); read-only when another user created it (flock works on either)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except PermissionError:
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o666)  # past the umask, so other users can record themselves too
    return fd


def _write_owner(fd: int) -> None:
    owner = {"pid": os.getpid(), "argv": sys.argv}
    with contextlib.suppress(OSError):  # a read-only lock file: the claim holds, only unnamed
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(owner).encode(), 0)


def _owner(fd: int) -> str:
    """What the lock holder wrote about itself (it writes once it holds the lock)."""
    try:
        owner = json.loads(os.pread(fd, 65536, 0) or b"{}")
    except (OSError, ValueError):
        owner = {}
    pid = owner.get("pid")
    if not pid:
        return "its owner is starting"
    command = " ".join(str(a) for a in owner.get("argv") or [])
    return f"pid {pid}: {command}" if command else f"pid {pid}"


def listening_sockets(table: Path = PROC_NET_TCP) -> Iterator[tuple[str, int, int]]:
    """(address, port, socket inode) of every listening IPv4 TCP socket (none where /proc is absent)."""
    try:
        lines = table.read_text().splitlines()[1:]
    except OSError:
        return
    for line in lines:
        fields = line.split()
        if len(fields) < 10 or fields[3] != "0A":  # 0A: TCP_LISTEN
            continue
        hex_address, _, hex_port = fields[1].partition(":")
        address = str(ipaddress.IPv4Address(int(hex_address, 16).to_bytes(4, "little")))
        yield address, int(hex_port, 16), int(fields[9])


def _listener(inode: int) -> str:
    """``pid N (command)`` of the process holding socket ``inode``, if this user may see it."""
    target = f"socket:[{inode}]"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                if os.readlink(fd) == target:
                    command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                    return f"pid {proc.name} ({command.strip()})"
        except OSError:
            continue
    return "a process"
