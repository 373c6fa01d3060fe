"""AdvancedCronJob schedule syntax, checked the way upstream's robfig/cron `ParseStandard` checks it.

Upstream validates `spec.schedule` with robfig/cron v3's standard parser, so the accepted language is
exactly: an optional `TZ=<zone> ` or `CRON_TZ=<zone> ` prefix, then either a descriptor (`@yearly`,
`@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly`, `@every <Go duration>`) or exactly
five fields (minute hour day-of-month month day-of-week). Error texts are robfig's, because the webhook
returns them verbatim. Activation times are computed from the parsed result by
`kruise.control.advancedcronjob.cronnext`, which follows robfig's search (daylight-saving included).
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass

_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS = {name: i for i, name in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


_FIELDS = (
    _Bounds(0, 59),
    _Bounds(0, 23),
    _Bounds(1, 31),
    _Bounds(1, 12, _MONTHS),
    _Bounds(0, 6, _DAYS),
)


class ScheduleError(ValueError):
    """A schedule robfig/cron's standard parser rejects; str() is robfig's message."""


@dataclass(frozen=True)
class ParsedSchedule:
    """What a valid schedule means: a 5-field expression or a fixed interval, in an optional zone."""

    location: str | None
    """IANA zone from a TZ=/CRON_TZ= prefix; None means the evaluating process's zone."""
    expression: str | None
    """Five-field expression (descriptors expanded, `?` as `*`); None for `@every`."""
    every_seconds: int | None
    """Interval of `@every` in whole seconds (robfig truncates, with a 1s minimum)."""


def load_location(name: str) -> None:
    """Accept what Go's time.LoadLocation accepts: "", "UTC", "Local" or an IANA zone name."""
    if name in ("", "UTC", "Local"):
        return
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name}") from None


def parse_standard(spec: str) -> ParsedSchedule:
    """Parse like robfig/cron `ParseStandard`; raise ScheduleError with robfig's wording."""
    if len(spec) == 0:
        raise ScheduleError("empty spec string")
    location: str | None = None
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        space = spec.find(" ")
        eq = spec.find("=")
        zone = spec[eq + 1 :] if space < 0 else spec[eq + 1 : space]
        try:
            load_location(zone)
        except ScheduleError as err:
            raise ScheduleError(f"provided bad location {zone}: {err}") from None
        location = zone
        spec = "" if space < 0 else spec[space:].strip()
    if spec.startswith("@"):
        return _parse_descriptor(spec, location)
    fields = spec.split()
    if len(fields) != 5:
        shown = "[" + " ".join(fields) + "]"
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {shown}")
    for field_expr, bounds in zip(fields, _FIELDS, strict=True):
        for part in field_expr.split(","):
            _check_range(part, bounds)
    # robfig reads "?" as "*"; the expression carries "*" so its readers need not know "?".
    normalized = [",".join("*" + p[1:] if p.startswith("?") else p for p in f.split(",")) for f in fields]
    return ParsedSchedule(location=location, expression=" ".join(normalized), every_seconds=None)


def _parse_descriptor(spec: str, location: str | None) -> ParsedSchedule:
    if spec in _DESCRIPTORS:
        return ParsedSchedule(location=location, expression=_DESCRIPTORS[spec], every_seconds=None)
    prefix = "@every "
    if spec.startswith(prefix):
        text = spec[len(prefix) :]
        try:
            nanos = parse_go_duration(text)
        except ScheduleError as err:
            raise ScheduleError(f"failed to parse duration {spec}: {err}") from None
        # robfig's Every(): below one second becomes one second, else truncated to whole seconds.
        seconds = max(1, nanos // 1_000_000_000)
        return ParsedSchedule(location=location, expression=None, every_seconds=seconds)
    raise ScheduleError(f"unrecognized descriptor: {spec}")


def _atoi(expr: str) -> int:
    """strconv.Atoi followed by robfig's non-negative check."""
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise ScheduleError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        )
    number = int(expr)
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {expr}")
    return number


def _int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _atoi(expr)


def _check_range(expr: str, bounds: _Bounds) -> tuple[int, bool]:
    """One comma-separated element: `*`/`?`, `N`, `A-B`, each optionally `/step`.

    Returns the values it selects as a bit set, and whether it is robfig's "star" (`*` or `?` with a step
    of at most 1), which decides how day-of-month and day-of-week combine.
    """
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    if low_and_high[0] in ("*", "?"):
        start, end = bounds.low, bounds.high
    else:
        start = _int_or_name(low_and_high[0], bounds.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds.names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _atoi(range_and_step[1])
        if single:
            end = bounds.high
    else:
        raise ScheduleError(f"too many slashes: {expr}")
    if start < bounds.low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({bounds.low}): {expr}")
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")
    star = low_and_high[0] in ("*", "?") and step <= 1
    return sum(1 << value for value in range(start, end + 1, step)), star


@dataclass(frozen=True)
class FieldBits:
    """A 5-field expression as robfig's SpecSchedule holds it: one bit set per field plus star flags."""

    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    dom_star: bool
    dow_star: bool


def field_bits(expression: str) -> FieldBits:
    """Expand a valid 5-field expression (as in ParsedSchedule.expression) into robfig's bit sets."""
    sets: list[int] = []
    stars: list[bool] = []
    for field_expr, bounds in zip(expression.split(), _FIELDS, strict=True):
        bits, star = 0, False
        for part in field_expr.split(","):
            part_bits, part_star = _check_range(part, bounds)
            bits |= part_bits
            star = star or part_star
        sets.append(bits)
        stars.append(star)
    return FieldBits(*sets, dom_star=stars[2], dow_star=stars[4])


_UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)([^0-9.]*)")


def parse_go_duration(text: str) -> int:
    """Go's time.ParseDuration, in nanoseconds ("1h30m", "1.5s", "-2m", "0"); Go's error texts."""
    original = text
    sign = 1
    if text and text[0] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return 0
    if text == "":
        raise ScheduleError(f'time: invalid duration "{original}"')
    total = 0
    while text:
        match = _DURATION_PART.match(text)
        assert match is not None  # both groups may match empty, so match() always succeeds
        number, unit = match.group(1), match.group(2)
        if number in ("", ".") or not number.strip("."):
            raise ScheduleError(f'time: invalid duration "{original}"')
        if unit == "":
            raise ScheduleError(f'time: missing unit in duration "{original}"')
        if unit not in _UNITS_NS:
            # Go stops the unit at the next digit or dot, which the regex already does.
            raise ScheduleError(f'time: unknown unit "{unit}" in duration "{original}"')
        whole, _, frac = number.partition(".")
        value = int(whole or "0") * _UNITS_NS[unit]
        if frac:
            value += int(frac) * _UNITS_NS[unit] // (10 ** len(frac))
        total += value
        text = text[match.end() :]
    return sign * total
