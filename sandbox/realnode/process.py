"""Long-running helper processes (containerd, the registry) and finding the ones left behind.

Daemons run in their own session, so a Ctrl-C at the terminal reaches the sandbox, which then
tears the node down in order (pods first, containerd last) instead of every process dying at once.
Their output goes to a log file under the sandbox's directory, where a person can read it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path


class DaemonFailed(RuntimeError):
    """A daemon exited or never became ready; the message carries the tail of its log."""


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no log written)"


class Daemon:
    """One background process whose output is appended to ``log_file``."""

    def __init__(self, name: str, argv: Sequence[str], log_file: Path) -> None:
        if not argv:
            raise ValueError(f"{name}: argv: must name a program")
        self.name = name
        self.argv = list(argv)
        self.log_file = log_file
        self._process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def start(self) -> None:
        if self._process is not None:
            raise RuntimeError(f"{self.name}: already started (pid {self.pid})")
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )

    def failed(self, why: str) -> DaemonFailed:
        return DaemonFailed(f"{self.name} {why}; last lines of {self.log_file}:\n{log_tail(self.log_file)}")

    async def wait_ready(self, probe: Callable[[], object], timeout: float, interval: float = 0.05) -> None:
        """Poll the async ``probe`` until it returns truthy; fail at once if the process exits."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        last: object = None
        while True:
            if not self.running:
                code = self._process.returncode if self._process else None
                raise self.failed(f"exited with status {code} before it was ready")
            try:
                if await probe():  # type: ignore[misc]
                    return
            except Exception as exc:
                last = exc
            if loop.time() >= deadline:
                raise self.failed(f"not ready within {timeout}s (last probe: {last!r})")
            await asyncio.sleep(interval)

    async def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds; idempotent."""
        process = self._process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def find_processes(match: Callable[[list[str]], bool]) -> list[int]:
    """PIDs whose argv satisfies ``match`` (processes that vanish while scanning are skipped)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            argv = cmdline(int(entry))
            if argv and match(argv):
                found.append(int(entry))
    return sorted(found)


def children_of(pid: int) -> list[int]:
    """Direct children, from /proc/<pid>/task/*/children."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            found.extend(int(child) for child in (task / "children").read_text().split())
    return found


def kill(pids: Sequence[int], sig: int = signal.SIGKILL) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
