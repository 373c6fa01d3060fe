"""The node runtime's handle on a process container: CRI StopContainer and ExecSync act on it.

The kubelet attaches a ``ProcessTask`` to each container it runs as a local process (see
``FakeRuntime.attach_task``), so a stop or an exec coming through the CRI (kruise-daemon's
ContainerRecreateRequest and SidecarTerminator, its preStop hooks, exec probes) reaches the real
process as containerd's would reach the container's task:

- ``kill(timeout)``: SIGTERM to the process group, SIGKILL once ``timeout`` seconds are over (0
  kills at once, as containerd does); the grace period is simulated time, so it is divided by the
  node's speed like every grace period the kubelet applies. The exit code is the process's
  (``processes.exit_code_of``: 143 if SIGTERM killed it, 137 after SIGKILL, its own if it
  handled SIGTERM and exited).
- ``exec(cmd, timeout)``: ``cmd[0]`` is looked up among the image's entry points (as the
  container's own command is) and runs with the container's environment and working directory,
  argument paths under its volume mounts mapped as for the container; the answer is the real
  exit code, stdout and stderr. An executable the image does not have fails the call with
  containerd's wording for runc's "executable file not found"; a command still running after
  ``timeout`` seconds (real seconds: a command takes the time it takes) is killed and the call
  fails with DEADLINE_EXCEEDED, as containerd answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kruise.sandbox.cri import DeadlineExceededError, ExecFailedError, ExecResult
from kruise.sandbox.simulator.process_runner import Launch
from kruise.sandbox.simulator.processes import ContainerProcess, ProcessImage, exit_code_of, not_found


def go_duration(seconds: int) -> str:
    """Whole seconds as Go prints a ``time.Duration`` (``1s``, ``1m30s``, ``1h0m0s``)."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def start_failed(exec_id: str, reason: str) -> str:
    """containerd's ExecSync error when runc cannot start the command."""
    return (
        f'failed to exec in container: failed to start exec "{exec_id}": OCI runtime exec failed: '
        f"exec failed: unable to start container process: {reason}: unknown"
    )


@dataclass
class ProcessTask:
    """``ContainerTask`` of one process container (see the module docstring)."""

    process: ContainerProcess
    image: ProcessImage
    launch: Launch
    scale: Callable[[float], float]  # simulated seconds -> real seconds on this node

    async def kill(self, timeout: int) -> None:
        if timeout <= 0:
            self.process.signal(signal.SIGKILL)
            await self.process.wait()
        else:
            await self.process.stop(self.scale(float(timeout)))

    async def exec(self, cmd: Sequence[str], timeout: int) -> ExecResult:
        exec_id = secrets.token_hex(32)
        argv = self.image.local(cmd)
        if argv is None:
            raise ExecFailedError(start_failed(exec_id, not_found(cmd[0])))
        argv = [argv[0], *(self.launch.paths.rewrite(arg) for arg in argv[1:])]
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                env=self.launch.env,
                cwd=str(self.launch.cwd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own group, so a timeout kills what it started too
                # no parent-death preexec_fn here: an exec is bounded by its timeout, and forking (which a
                # preexec_fn forces instead of vfork) from this threaded process once segfaulted the child
            )
        except OSError as error:
            raise ExecFailedError(start_failed(exec_id, str(error))) from None
        try:
            async with asyncio.timeout(timeout or None):
                stdout, stderr = await proc.communicate()
        except TimeoutError:
            limit = go_duration(timeout)
            raise DeadlineExceededError(
                f"failed to exec in container: timeout {limit} exceeded: context deadline exceeded"
            ) from None
        finally:
            if proc.returncode is None:  # timed out or cancelled: leave nothing running
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        assert proc.returncode is not None
        return ExecResult(exit_code=exit_code_of(proc.returncode), stdout=stdout, stderr=stderr)
