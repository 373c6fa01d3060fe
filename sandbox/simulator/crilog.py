"""Reading a container's CRI log file as ``kubectl logs`` asks for it.

containerd writes each line of a container's stdout/stderr to the file the kubelet named in
ContainerConfig.log_path, in the CRI log format ``<RFC 3339 nano timestamp> <stdout|stderr> <F|P>
<text>``: ``P`` marks a partial line (the runtime split a long one), ``F`` the end of a line. The
kubelet joins partials back into one line and applies the PodLogOptions; so does this reader.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from kruise.sandbox.simulator.logs import LogOptions, rfc3339_nano

FOLLOW_POLL_SECONDS = 0.2


class LogFormatError(ValueError):
    """A line of a CRI log file that is not ``<timestamp> <stream> <tag> <text>``."""


@dataclass(frozen=True)
class LogLine:
    """One whole line of output: when the runtime wrote its end, on which stream."""

    time_ns: int
    stream: str
    text: str


def parse_timestamp(text: str) -> int:
    """RFC 3339 with up to nanoseconds (``2026-12-07T03:59:31.994378173Z``) -> Unix nanoseconds."""
    if not text.endswith("Z"):
        raise LogFormatError(f"timestamp {text!r}: must be RFC 3339 in UTC (end in Z)")
    whole, _, fraction = text[:-1].partition(".")
    try:
        seconds = datetime.fromisoformat(whole + "+00:00").timestamp()
        nanos = int((fraction or "0").ljust(9, "0")[:9])
    except ValueError as exc:
        raise LogFormatError(f"timestamp {text!r}: {exc}") from None
    return int(seconds) * 1_000_000_000 + nanos


def parse_line(raw: str) -> tuple[int, str, bool, str]:
    """``(time_ns, stream, partial, text)`` of one raw line of the file (without its newline)."""
    parts = raw.split(" ", 3)
    if len(parts) < 3:
        raise LogFormatError(f"CRI log line {raw[:80]!r}: must be '<timestamp> <stream> <F|P> <text>'")
    stamp, stream, tag = parts[:3]
    if stream not in ("stdout", "stderr"):
        raise LogFormatError(f"CRI log line {raw[:80]!r}: stream must be stdout or stderr, got {stream!r}")
    if tag not in ("F", "P"):
        raise LogFormatError(f"CRI log line {raw[:80]!r}: tag must be F or P, got {tag!r}")
    return parse_timestamp(stamp), stream, tag == "P", parts[3] if len(parts) > 3 else ""


class LineAssembler:
    """Feeds raw file bytes in, gets whole lines out (partials joined per stream)."""

    def __init__(self) -> None:
        self._rest = b""
        self._partial: dict[str, str] = {}

    def feed(self, data: bytes) -> list[LogLine]:
        lines = []
        chunks = (self._rest + data).split(b"\n")
        self._rest = chunks.pop()  # an unfinished raw line waits for its newline
        for chunk in chunks:
            if not chunk:
                continue
            stamp, stream, partial, text = parse_line(chunk.decode(errors="replace"))
            text = self._partial.pop(stream, "") + text
            if partial:
                self._partial[stream] = text
            else:
                lines.append(LogLine(stamp, stream, text))
        return lines


def render(lines: list[LogLine], options: LogOptions) -> list[bytes]:
    """Lines as ``kubectl logs`` prints them, with ``timestamps`` if asked."""
    return [
        ((f"{rfc3339_nano(line.time_ns)} " if options.timestamps else "") + line.text + "\n").encode()
        for line in lines
    ]


async def read_log(
    path: Path, options: LogOptions, running: Callable[[], Awaitable[bool]]
) -> AsyncIterator[bytes]:
    """The file's lines per ``options``; with ``follow``, new lines until ``running`` says the
    container exited (then whatever it wrote last)."""
    assembler = LineAssembler()
    offset = 0

    def read_new() -> list[LogLine]:
        nonlocal offset
        try:
            with path.open("rb") as stream:
                stream.seek(offset)
                data = stream.read()
        except FileNotFoundError:
            return []
        offset += len(data)
        return assembler.feed(data)

    lines = [ln for ln in read_new() if options.since_ns is None or ln.time_ns >= options.since_ns]
    if options.tail_lines is not None:
        lines = lines[-options.tail_lines :] if options.tail_lines > 0 else []
    budget = options.limit_bytes
    while True:
        for data in render(lines, options):
            if budget is not None:
                data = data[:budget]
                budget -= len(data)
            yield data
            if budget is not None and budget <= 0:
                return
        if not options.follow:
            return
        alive = await running()
        lines = read_new()
        if lines:
            continue
        if not alive:
            return
        await asyncio.sleep(FOLLOW_POLL_SECONDS)
        lines = read_new()
