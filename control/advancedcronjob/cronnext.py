"""The next activation of a cron schedule, computed the way upstream's robfig/cron v3 computes it.

croniter and robfig disagree around daylight-saving changes: on a spring-forward day robfig skips a
time that falls into the gap (`30 2 * * *` in New York does not run on that day) where croniter runs
it an hour late, and on a fall-back day robfig runs a time inside the repeated hour twice. Upstream's
behaviour wins, so this module walks robfig's field-by-field search itself.

Go's time arithmetic differs from Python's aware-datetime arithmetic, so times are handled as whole
Unix seconds (robfig works at second resolution) and only read as wall-clock fields in a zone:
- `t.Add(d)` is instant arithmetic: seconds are added to the Unix time;
- `time.Date(...)` normalises overflowing fields, then resolves the wall time with Go's rule for gaps
  and repeats (`go_date` below);
- `t.Truncate(time.Minute)` truncates the absolute time, not the wall clock.
"""

from __future__ import annotations

import calendar
import datetime as dt
import zoneinfo
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from kruise.api.cronschedule import FieldBits, ParsedSchedule, field_bits

_EPOCH = datetime(1970, 1, 1)
_YEARS_SEARCHED = 5  # robfig gives up (returns the zero time) after five years


@dataclass(frozen=True)
class _Wall:
    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    weekday: int  # Go's numbering: Sunday is 0


def _wall(unix: int, zone: tzinfo) -> _Wall:
    moment = datetime.fromtimestamp(unix, zone)
    return _Wall(
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
        (moment.weekday() + 1) % 7,
    )


def _offset_seconds(unix: int, zone: tzinfo) -> int:
    offset = datetime.fromtimestamp(unix, zone).utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


def go_date(year: int, month: int, day: int, hour: int, minute: int, second: int, zone: tzinfo) -> int:
    """Go's `time.Date` as a Unix time: fields may overflow (month 13, day 32) and are normalised.

    A wall time that does not exist or exists twice resolves like Go: take the offset in force at the
    wall time read as UTC; if the instant that gives lies outside that offset's period, use the offset
    in force at that instant instead. (For 02:30 on New York's spring-forward day that is 01:30 EST.)
    """
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    naive = datetime(year, month, 1) + timedelta(days=day - 1, hours=hour, minutes=minute, seconds=second)
    wall_unix = int((naive - _EPOCH).total_seconds())
    offset = _offset_seconds(wall_unix, zone)
    unix = wall_unix - offset
    other = _offset_seconds(unix, zone)
    if other != offset:
        unix = wall_unix - other
    return unix


def _add_months(unix: int, zone: tzinfo, months: int) -> int:
    w = _wall(unix, zone)
    return go_date(w.year, w.month + months, w.day, w.hour, w.minute, w.second, zone)


def _add_days(unix: int, zone: tzinfo, days: int) -> int:
    w = _wall(unix, zone)
    return go_date(w.year, w.month, w.day + days, w.hour, w.minute, w.second, zone)


def _day_matches(bits: FieldBits, w: _Wall) -> bool:
    dom = bool(bits.dom >> w.day & 1)
    dow = bool(bits.dow >> w.weekday & 1)
    if bits.dom_star or bits.dow_star:
        return dom and dow
    return dom or dow


def spec_next(bits: FieldBits, unix: int, zone: tzinfo) -> int | None:
    """robfig's SpecSchedule.Next on whole seconds: the first activation strictly after `unix`.

    The seconds field of a standard schedule is always 0. None when nothing fires within five years.
    """
    t = unix + 1
    added = False
    year_limit = _wall(t, zone).year + _YEARS_SEARCHED
    while True:  # each `continue` is robfig's `goto WRAP`
        w = _wall(t, zone)
        if w.year > year_limit:
            return None
        wrapped = False
        while not bits.month >> w.month & 1:
            if not added:
                added = True
                t = go_date(w.year, w.month, 1, 0, 0, 0, zone)
            t = _add_months(t, zone, 1)
            w = _wall(t, zone)
            if w.month == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not _day_matches(bits, w):
            if not added:
                added = True
                t = go_date(w.year, w.month, w.day, 0, 0, 0, zone)
            t = _add_days(t, zone, 1)
            w = _wall(t, zone)
            # Midnight may not exist (a DST change at 00:00): pull back to the day's first hour.
            if w.hour != 0:
                t += (24 - w.hour) * 3600 if w.hour > 12 else -w.hour * 3600
                w = _wall(t, zone)
            if w.day == 1:
                wrapped = True
                break
        if wrapped:
            continue
        while not bits.hour >> w.hour & 1:
            if not added:
                added = True
                t = go_date(w.year, w.month, w.day, w.hour, 0, 0, zone)
            t += 3600
            w = _wall(t, zone)
            if w.hour == 0:
                wrapped = True
                break
        if wrapped:
            continue
        while not bits.minute >> w.minute & 1:
            if not added:
                added = True
                t -= t % 60
            t += 60
            w = _wall(t, zone)
            if w.minute == 0:
                wrapped = True
                break
        if wrapped:
            continue
        if w.second != 0:  # the seconds field of a 5-field schedule is "0"
            if not added:
                added = True
            t += 60 - w.second
            continue
        return t


def resolve_zone(schedule: ParsedSchedule, fallback: tzinfo) -> tzinfo:
    """The zone a schedule is evaluated in: its TZ=/CRON_TZ= zone, else `fallback`.

    robfig evaluates a schedule without a zone (or with `TZ=Local`) in the zone of the time it is
    given, which upstream is the manager process's local zone.
    """
    name = schedule.location
    if name is None or name == "Local":
        return fallback
    if name in ("", "UTC"):  # Go's LoadLocation("") is UTC
        return dt.UTC
    return zoneinfo.ZoneInfo(name)


def next_activation(schedule: ParsedSchedule, after: datetime) -> datetime | None:
    """robfig's Schedule.Next: the first activation strictly after `after`, in `after`'s zone.

    `@every d` is `after` truncated to the second plus `d`; a 5-field expression is searched in the
    schedule's zone (see `resolve_zone`). None when the expression never fires within five years, where
    robfig returns Go's zero time.
    """
    if after.tzinfo is None:
        raise ValueError("next_activation needs a timezone-aware datetime")
    unix = calendar.timegm(after.utctimetuple())
    if schedule.every_seconds is not None:
        return datetime.fromtimestamp(unix + schedule.every_seconds, after.tzinfo)
    assert schedule.expression is not None
    found = spec_next(field_bits(schedule.expression), unix, resolve_zone(schedule, after.tzinfo))
    if found is None:
        return None
    return datetime.fromtimestamp(found, after.tzinfo)
