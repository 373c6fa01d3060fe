"""A local TCP port for a process a test starts (kruise-webhook, the emulator's peers)."""

from __future__ import annotations

from kruise.sandbox.ports import reserve_port


def free_port() -> int:
    """Reserved machine-wide for the life of this test process (`kruise.sandbox.ports`): tests run on
    several pytest workers at once, and a port the kernel merely handed out and released can be taken
    before the test's server binds it."""
    return reserve_port()
