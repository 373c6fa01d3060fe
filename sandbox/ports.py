"""Loopback TCP ports for the processes a sandbox (or a test) starts, reserved machine-wide.

Asking the kernel for a free port (bind to port 0, close, pass the number on) leaves a window before the
process that was given the number binds it; on a busy machine — several sandboxes side by side, the test
suite on several workers — a client connection's ephemeral port or another sandbox's pick lands there
and the process dies with "address already in use". So ports come from below the kernel's ephemeral
range (client connections never take them) and each one is claimed with an exclusive ``flock`` on
``<lock dir>/port-<n>.lock``, held until the reserving process exits (the kernel drops it however the
process ends, SIGKILL included), so two reservers never hand out the same port. A port something else on
the machine already listens on is skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from pathlib import Path

from kruise.sandbox.simulator.addresses import default_lock_dir, ensure_lock_dir, open_lock_file

FIRST_PORT = 20000
LAST_PORT = 32767  # Linux's default ephemeral range starts at 32768
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")

_held: dict[int, int] = {}  # port -> lock fd, for the life of this process


class NoFreePort(RuntimeError):
    """Every port below the ephemeral range is reserved or in use."""


def reserve_port(host: str = "127.0.0.1", *, lock_dir: Path | None = None) -> int:
    """A port no other reserver on the machine holds and nothing listens on, reserved until this process
    exits; the caller's child process binds it."""
    directory = lock_dir or default_lock_dir()
    ensure_lock_dir(directory)
    last = min(LAST_PORT, ephemeral_start() - 1)
    for port in range(FIRST_PORT, last + 1):
        if port in _held:
            continue
        fd = open_lock_file(directory / f"port-{port}.lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        if not bindable(host, port):
            os.close(fd)
            continue
        _held[port] = fd
        return port
    raise NoFreePort(f"no free port in {FIRST_PORT}..{last} on {host}: all reserved or in use")


def release_port(port: int) -> None:
    """Give a reservation back before the process exits (a test that stopped its server)."""
    fd = _held.pop(port, None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def ephemeral_start(table: Path = EPHEMERAL_RANGE) -> int:
    """The first port the kernel hands to client connections (32768 where /proc does not say)."""
    try:
        return int(table.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return LAST_PORT + 1


def bindable(host: str, port: int) -> bool:
    """Whether a listener could bind ``host:port`` now (no SO_REUSEADDR: a port in TIME_WAIT counts as
    taken, as it would for a server that does not set it)."""
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True
