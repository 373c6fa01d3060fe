"""Child processes that die with the sandbox, however the sandbox dies.

Pod processes run in their own session (so a container stop reaches their whole group), which also
puts them out of reach of a terminal's Ctrl-C and of anyone killing the sandbox's process group.
A sandbox stopped by SIGTERM stops them itself; one stopped by SIGKILL cannot. Linux's parent-death
signal covers that case: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` in the child, between fork and exec,
makes the kernel kill it when its parent goes. The signal fires when the *thread* that forked the
child exits; the sandbox forks from its event loop thread, which lives as long as the sandbox does.

If the parent died between fork and prctl the signal would never come, so the child checks its
parent is still the one that forked it and kills itself otherwise. Elsewhere than on Linux there is
no such signal and ``die_with_parent`` gives None (children then outlive a SIGKILLed sandbox).

A ``preexec_fn`` makes Python fork instead of vfork, which runs gRPC's fork handlers (the sandbox
serves CRI over gRPC): they log "skipping fork() handlers" at every spawn and are of no use to a
child that execs at once. So gRPC's fork support is switched off unless the environment says
otherwise; gRPC reads the setting when it first starts a channel or server, after this import.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable
from functools import cache

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
GRPC_FORK_SUPPORT = "GRPC_ENABLE_FORK_SUPPORT"

os.environ.setdefault(GRPC_FORK_SUPPORT, "false")


@cache
def _prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl  # type: ignore[no-any-return]


def die_with_parent(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A ``preexec_fn`` arming the parent-death signal, or None where the platform has none.

    Everything it calls is resolved before the fork: the child only makes two system calls.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent is already gone: the signal will never come
            os.kill(os.getpid(), sig)

    return arm
