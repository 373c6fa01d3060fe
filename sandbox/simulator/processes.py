"""Real local processes for the containers of configured images ("process images").

Most simulated containers run nothing. A container whose image matches a ``ProcessImage``
pattern instead runs as a real child process of the simulator: the image's entry points are
mapped to local commands (e.g. ``kruise-manager`` to the venv's console script of that name),
so the sandbox can run a project's own image the way a node would. The kubelet decides *when*
a process runs; this module only knows how to start one, pipe its output line by line to a
sink (the container's log) and stop it like a container runtime does: SIGTERM to the process
group, SIGKILL once the grace period is over. A process killed by signal N reports exit code
128+N, as a container does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from kruise.sandbox.simulator.deathsignal import die_with_parent

READ_CHUNK = 65536
MAX_LINE = 16384  # longer lines are split, like the container runtime's log line limit


class StartError(Exception):
    """The container's command cannot be started (exit code 128, as containerd's StartError)."""


@dataclass(frozen=True)
class ProcessImage:
    """Containers of images matching ``pattern`` run as local processes.

    Attributes:
        pattern: a glob matched against the image reference as written and against its last
            path segment (``kruise-py:*`` matches ``kruise-py:0.1`` and ``ghcr.io/x/kruise-py:0.1``).
        entrypoints: the image's executables (``command[0]``) and the local argv each runs as.
        default: the image's ENTRYPOINT, used when the container sets no ``command``.
    """

    pattern: str
    entrypoints: Mapping[str, Sequence[str]]
    default: str = ""

    def matches(self, image: str) -> bool:
        return fnmatchcase(image, self.pattern) or fnmatchcase(image.rsplit("/", 1)[-1], self.pattern)

    def argv(self, command: Sequence[str], args: Sequence[str]) -> list[str]:
        """The local argv for a container's command and args (``StartError`` if none maps)."""
        argv = [*(command or ([self.default] if self.default else [])), *args]
        if not argv:
            raise StartError("failed to create containerd task: no command specified")
        local = self.local(argv)
        if local is None:
            raise StartError(f"failed to create containerd task: {not_found(argv[0])}")
        return local

    def local(self, argv: Sequence[str]) -> list[str] | None:
        """``argv`` with its executable mapped to the local command, or None if the image has
        no such executable."""
        local = self.entrypoints.get(argv[0]) if argv else None
        return None if local is None else [*local, *argv[1:]]

    @classmethod
    def parse(cls, text: str, bin_dirs: Sequence[Path] = ()) -> ProcessImage:
        """``PATTERN=NAME[,NAME...]``: each NAME runs the local executable of that name (looked
        up in ``bin_dirs``, then next to the running Python, then on PATH); the first NAME is
        the image's default entry point."""
        pattern, sep, names = text.partition("=")
        entries = [n.strip() for n in names.split(",") if n.strip()]
        if not sep or not pattern or not entries:
            raise ValueError(f"process image {text!r}: expected PATTERN=NAME[,NAME...]")
        mapping: dict[str, list[str]] = {}
        for name in entries:
            path = find_executable(name, bin_dirs)
            if path is None:
                raise ValueError(f"process image {text!r}: executable {name!r} not found")
            mapping[name] = [path]
        return cls(pattern, mapping, entries[0])


def not_found(executable: str) -> str:
    """How runc words an executable the container does not have."""
    return f'exec: "{executable}": executable file not found in $PATH'


def find_executable(name: str, bin_dirs: Sequence[Path] = ()) -> str | None:
    for directory in [*bin_dirs, Path(sys.executable).parent]:
        candidate = Path(directory) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def match_image(images: Sequence[ProcessImage], image: str) -> ProcessImage | None:
    return next((rule for rule in images if rule.matches(image)), None)


def exit_code_of(returncode: int) -> int:
    """A container's exit code: the process's, or 128+N when signal N killed it."""
    return 128 - returncode if returncode < 0 else returncode


@dataclass
class ContainerProcess:
    """One running container process; ``on_exit(exit_code)`` is called once it is gone and its
    output is fully written to the sink."""

    proc: asyncio.subprocess.Process
    sink: Callable[[str], None]
    on_exit: Callable[[int], None]
    container_id: str = ""
    grace: float = 30.0  # seconds between SIGTERM and SIGKILL when the kubelet stops it
    exit_code: int | None = None
    stopping: bool = False
    _task: asyncio.Task[None] | None = field(default=None, repr=False)

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        sink: Callable[[str], None],
        on_exit: Callable[[int], None],
    ) -> ContainerProcess:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                env=dict(env),
                cwd=str(cwd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group, so a stop reaches its children
                preexec_fn=die_with_parent(),  # and gone with the simulator, even a SIGKILLed one
            )
        except OSError as error:
            raise StartError(f"failed to create containerd task: {error}") from None
        process = cls(proc, sink, on_exit)
        process._task = asyncio.create_task(process._run(), name=f"process {proc.pid}")
        return process

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.exit_code is None

    async def _pipe(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        pending = b""
        while chunk := await stream.read(READ_CHUNK):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._emit(line)
            while len(pending) > MAX_LINE:
                self._emit(pending[:MAX_LINE])
                pending = pending[MAX_LINE:]
        if pending:
            self._emit(pending)

    def _emit(self, line: bytes) -> None:
        self.sink(line.decode(errors="replace").rstrip("\r"))

    async def _run(self) -> None:
        try:
            await asyncio.gather(self._pipe(self.proc.stdout), self._pipe(self.proc.stderr))
        finally:
            returncode = await self.proc.wait()
            self.exit_code = exit_code_of(returncode)
            self.on_exit(self.exit_code)

    def signal(self, sig: int) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)

    async def wait(self) -> int:
        if self._task is not None:
            await asyncio.shield(self._task)
        assert self.exit_code is not None
        return self.exit_code

    async def stop(self, grace: float) -> int:
        """SIGTERM, then SIGKILL after ``grace`` seconds; returns the exit code."""
        self.signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(self.wait(), timeout=max(grace, 0.0))
        except TimeoutError:
            self.signal(signal.SIGKILL)
            return await self.wait()
