"""metav1.Time and metav1.MicroTime on the wire.

Every layer writes timestamps into objects and reads them back; keeping the format in `api`
lets the pure `control` layer and the I/O layers agree on it without importing each other.
Two readings exist because upstream has two: the apiserver's own fields are read leniently (a
value that is not a time is no time), while a user's annotation goes through Go's strict
``time.Parse(time.RFC3339, …)`` so the same texts are accepted and refused as upstream.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta


def rfc3339_micro(dt: datetime) -> str:
    """Kubernetes MicroTime: `2026-11-22T23:00:00.000000Z`, always UTC."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(dt: datetime) -> str:
    """Kubernetes Time: `2026-11-22T23:00:00Z`, always UTC, second precision."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(value: str) -> datetime:
    """Parse Time or MicroTime as written by the apiserver (trailing `Z`, optional fraction)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


def parse_time(value: object) -> datetime | None:
    """A timestamp field that may be absent, null or not a time: None for all three. A value
    without an offset is taken as UTC, as the apiserver means it."""
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


_GO_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)


def go_format_rfc3339(moment: datetime) -> str:
    """Go's `Format(time.RFC3339)`: whole seconds, `Z` for a zero offset, else the moment's `±hh:mm`."""
    offset = moment.utcoffset()
    if offset is None:
        raise ValueError("go_format_rfc3339 needs a timezone-aware datetime")
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
    if offset == timedelta(0):
        return text + "Z"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{text}{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def go_parse_rfc3339(text: str) -> datetime | None:
    """Go's `time.Parse(time.RFC3339, ...)` for the values it accepts (in UTC); None for anything else."""
    match = _GO_RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, frac, zulu, sign, off_h, off_m = match.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    try:
        naive = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micro)
    except ValueError:
        return None
    if zulu:
        return naive.replace(tzinfo=UTC)
    if int(off_h) > 23 or int(off_m) > 59:
        return None
    offset = timedelta(hours=int(off_h), minutes=int(off_m))
    return (naive - offset if sign == "+" else naive + offset).replace(tzinfo=UTC)
