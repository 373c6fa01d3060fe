"""The two ways kruise-tools prints an age, so `get all` and `describe rollout` read as upstream's.

`get all` formats Go's `time.Duration` rounded to the second (`1h2m3s`); `describe rollout`
formats a pod's age with apimachinery's `HumanDuration` (`62m`, `3d4h`), as `kubectl get` does.
"""

from __future__ import annotations

from datetime import UTC, datetime


def parse_time(text: str | None) -> datetime | None:
    """An RFC 3339 timestamp as the apiserver writes it; None when absent."""
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def age_seconds(created: str | None, now: datetime) -> float:
    """Seconds since `created`; a missing timestamp counts from the zero time, as Go's would."""
    when = parse_time(created)
    if when is None:
        when = datetime(1, 1, 1, tzinfo=UTC)
    return (now - when).total_seconds()


def go_duration(seconds: float) -> str:
    """Go's Duration.String() of a duration already rounded to whole seconds."""
    total = round(abs(seconds))
    sign = "-" if seconds < 0 and total else ""
    if total == 0:
        return "0s"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{sign}{minutes}m{secs}s"
    return f"{sign}{secs}s"


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration: coarser the older it is."""
    if seconds < -1:
        return "<invalid>"
    s = max(int(seconds), 0)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    years = days // 365
    if days < 365 * 8:
        return f"{years}y{days % 365}d" if days % 365 else f"{years}y"
    return f"{years}y"
