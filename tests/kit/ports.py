"""A free local TCP port for a process a test starts (kruise-webhook, the emulator's peers)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the kernel just handed out and released; good enough for one test's server."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
