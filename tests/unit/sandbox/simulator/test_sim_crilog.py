"""Reading CRI log files (containerd's ``<ts> <stream> <F|P> <text>`` lines) as kubectl logs asks."""

from __future__ import annotations

from pathlib import Path

import pytest

from kruise.sandbox.simulator.crilog import (
    LineAssembler,
    LogFormatError,
    parse_line,
    parse_timestamp,
    read_log,
)
from kruise.sandbox.simulator.logs import LogOptions

FILE = (
    "2026-12-07T03:59:31.994378173Z stdout F hello\n"
    "2026-12-07T03:59:32.000000001Z stderr P a long \n"
    "2026-12-07T03:59:32.100000000Z stdout F between\n"
    "2026-12-07T03:59:32.200000000Z stderr F line, joined\n"
    "2026-12-07T03:59:33Z stdout F \n"
)


def test_timestamps_keep_nanoseconds():
    assert parse_timestamp("2026-12-07T03:59:31.994378173Z") % 1_000_000_000 == 994378173
    assert parse_timestamp("1970-01-01T00:00:01.5Z") == 1_500_000_000
    with pytest.raises(LogFormatError, match="must be RFC 3339 in UTC"):
        parse_timestamp("2026-12-07T03:59:31+02:00")


def test_bad_lines_name_the_rule():
    with pytest.raises(LogFormatError, match="stream must be stdout or stderr"):
        parse_line("2026-12-07T03:59:31Z stdin F x")
    with pytest.raises(LogFormatError, match="tag must be F or P"):
        parse_line("2026-12-07T03:59:31Z stdout X x")
    assert parse_line("2026-12-07T03:59:31Z stdout F a b  c")[1:] == ("stdout", False, "a b  c")


def test_partials_join_per_stream_and_a_half_written_line_waits():
    assembler = LineAssembler()
    data = FILE.encode()
    first = assembler.feed(data[:60])  # first line whole, the second cut in the middle
    assert [line.text for line in first] == ["hello"]
    rest = assembler.feed(data[60:])
    assert [(line.stream, line.text) for line in rest] == [
        ("stdout", "between"),
        ("stderr", "a long line, joined"),
        ("stdout", ""),
    ]


async def _read(path: Path, options: LogOptions) -> str:
    async def exited() -> bool:
        return False

    return b"".join([chunk async for chunk in read_log(path, options, exited)]).decode()


async def test_options_apply_to_whole_lines(tmp_path: Path):
    path = tmp_path / "0.log"
    path.write_text(FILE)
    assert await _read(path, LogOptions()) == "hello\nbetween\na long line, joined\n\n"
    assert await _read(path, LogOptions(tail_lines=2)) == "a long line, joined\n\n"
    since = parse_timestamp("2026-12-07T03:59:32.150000000Z")
    assert await _read(path, LogOptions(since_ns=since)) == "a long line, joined\n\n"
    assert await _read(path, LogOptions(limit_bytes=8)) == "hello\nbe"
    stamped = await _read(path, LogOptions(timestamps=True, tail_lines=1))
    assert stamped == "2026-12-07T03:59:33.000000000Z \n"


async def test_follow_of_an_exited_container_ends_after_its_last_line(tmp_path: Path):
    path = tmp_path / "0.log"
    path.write_text(FILE)
    assert await _read(path, LogOptions(follow=True, tail_lines=1)) == "\n"
    assert await _read(tmp_path / "missing.log", LogOptions(follow=True)) == ""
