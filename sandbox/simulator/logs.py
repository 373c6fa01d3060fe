"""Container logs of the simulated kubelet, as ``kubectl logs`` reads them.

Fake containers run no process, so each container instance gets a short synthetic log the
kubelet writes at its lifecycle points (started with which image and command; exited with
which code). Instances are kept per (pod uid, container name, attempt) — the kubelet's
``restartCount`` — so ``--previous`` shows the instance before the current one, as the real
kubelet does, until the pod is gone. Reading supports the kubelet's options (tailLines,
sinceSeconds/sinceTime, limitBytes, timestamps) and ``follow``, which streams new lines until
the instance exits.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

MAX_LINES = 1000


def rfc3339_nano(ns: int) -> str:
    """The kubelet's ``timestamps=true`` prefix: RFC 3339 with nanoseconds, UTC."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"


@dataclass
class LogOptions:
    """The subset of ``PodLogOptions`` the kubelet applies to the stored lines."""

    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    since_ns: int | None = None  # only lines at or after this wall-clock time
    limit_bytes: int | None = None
    follow: bool = False


@dataclass
class InstanceLog:
    """The log of one container instance; ``closed`` once it exited."""

    attempt: int
    lines: list[tuple[int, str]] = field(default_factory=list)
    closed: bool = False
    total: int = 0  # lines ever appended; ``lines`` keeps the last MAX_LINES
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def append(self, text: str) -> None:
        self.lines.append((time.time_ns(), text))
        self.total += 1
        del self.lines[:-MAX_LINES]
        self._wake()

    def close(self) -> None:
        """The instance exited: followers stop once they have read everything."""
        if not self.closed:
            self.closed = True
            self._wake()

    def _wake(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


class NoInstance(LookupError):
    """No log to show: the container has not started yet, or there is no previous instance."""


class ContainerLogs:
    """Every container instance's log on the simulated nodes, by pod uid."""

    def __init__(self) -> None:
        self._pods: dict[str, dict[str, dict[int, InstanceLog]]] = {}

    def started(self, uid: str, container: str, attempt: int, text: str) -> None:
        instances = self._pods.setdefault(uid, {}).setdefault(container, {})
        instance = instances.setdefault(attempt, InstanceLog(attempt))
        instance.append(text)

    def open(self, uid: str, container: str, attempt: int) -> InstanceLog:
        """A new, empty instance for a container that writes its own output (a real process)."""
        instances = self._pods.setdefault(uid, {}).setdefault(container, {})
        return instances.setdefault(attempt, InstanceLog(attempt))

    def exited(self, uid: str, container: str, attempt: int, text: str) -> None:
        instance = self._pods.get(uid, {}).get(container, {}).get(attempt)
        if instance is not None and not instance.closed:
            instance.append(text)
            instance.closed = True

    def forget(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def instance(self, uid: str, container: str, previous: bool) -> InstanceLog:
        """The latest instance of the container (or the one before it with ``previous``)."""
        attempts = sorted(self._pods.get(uid, {}).get(container, {}).items())
        index = -2 if previous else -1
        if len(attempts) < (2 if previous else 1):
            raise NoInstance(container)
        return attempts[index][1]

    async def read(self, instance: InstanceLog, options: LogOptions) -> AsyncIterator[bytes]:
        """The instance's lines as the kubelet writes them; with ``follow``, until it exits."""
        lines = [ln for ln in instance.lines if options.since_ns is None or ln[0] >= options.since_ns]
        if options.tail_lines is not None:
            lines = lines[-options.tail_lines :] if options.tail_lines > 0 else []
        budget = options.limit_bytes
        seen = instance.total
        while True:
            for stamp, text in lines:
                chunk = (f"{rfc3339_nano(stamp)} " if options.timestamps else "") + text + "\n"
                data = chunk.encode()
                if budget is not None:
                    data = data[:budget]
                    budget -= len(data)
                yield data
                if budget is not None and budget <= 0:
                    return
            if not options.follow or instance.closed:
                return
            await instance.changed.wait()
            new = min(instance.total - seen, len(instance.lines))
            lines = instance.lines[-new:] if new > 0 else []
            seen = instance.total
