"""Ports reserved machine-wide (`kruise.sandbox.ports`): no two reservers — in this process or another —
get the same port, a port something listens on is skipped, and the kernel's ephemeral range is left to
client connections."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kruise.sandbox import ports

HOLDER = """
import sys
from pathlib import Path
from kruise.sandbox.ports import reserve_port
print(reserve_port(lock_dir=Path(sys.argv[1])), flush=True)
sys.stdin.read()
"""


@pytest.fixture
def lock_dir(tmp_path: Path) -> Path:
    return tmp_path / "locks"


def first_listenable_port() -> socket.socket:
    for port in range(ports.FIRST_PORT, ports.LAST_PORT):
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            sock.close()
            continue
        sock.listen()
        return sock
    raise AssertionError("no port to listen on below the ephemeral range")


def test_two_reservations_in_one_process_differ(lock_dir: Path) -> None:
    first, second = ports.reserve_port(lock_dir=lock_dir), ports.reserve_port(lock_dir=lock_dir)
    try:
        assert first != second
        assert min(first, second) >= ports.FIRST_PORT and max(first, second) < ports.ephemeral_start()
    finally:
        ports.release_port(first)
        ports.release_port(second)


def test_a_port_another_process_holds_is_not_handed_out(lock_dir: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(lock_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        held = int(holder.stdout.readline())
        mine = ports.reserve_port(lock_dir=lock_dir)
        ports.release_port(mine)
        assert mine != held
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # the holder's exit dropped its flock. Checked on the lock itself: whether the port is then handed out
    # again also depends on whether another process on the machine happens to listen on it by now.
    fd = os.open(lock_dir / f"port-{held}.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_a_port_with_a_listener_is_skipped(lock_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with first_listenable_port() as listener:
        busy = listener.getsockname()[1]
        monkeypatch.setattr(ports, "FIRST_PORT", busy)
        port = ports.reserve_port(lock_dir=lock_dir)
        ports.release_port(port)
        assert port > busy


def test_released_port_can_be_reserved_again(lock_dir: Path) -> None:
    port = ports.reserve_port(lock_dir=lock_dir)
    ports.release_port(port)
    again = ports.reserve_port(lock_dir=lock_dir)
    ports.release_port(again)
    assert again == port


def test_no_free_port_names_the_range(lock_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with first_listenable_port() as listener:
        busy = listener.getsockname()[1]
        monkeypatch.setattr(ports, "FIRST_PORT", busy)
        monkeypatch.setattr(ports, "LAST_PORT", busy)
        with pytest.raises(ports.NoFreePort, match=f"{busy}..{busy}"):
            ports.reserve_port(lock_dir=lock_dir)


@pytest.mark.parametrize(
    ("text", "start"), [("32768\t60999\n", 32768), ("25000 30000", 25000), ("", ports.LAST_PORT + 1)]
)
def test_ephemeral_start_reads_the_kernel_range(tmp_path: Path, text: str, start: int) -> None:
    table = tmp_path / "ip_local_port_range"
    table.write_text(text)
    assert ports.ephemeral_start(table) == start


def test_ephemeral_start_without_proc(tmp_path: Path) -> None:
    assert ports.ephemeral_start(tmp_path / "absent") == ports.LAST_PORT + 1
