"""robfig-exact next activation, especially across daylight-saving changes."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.api.cronschedule import field_bits, parse_standard
from kruise.control.advancedcronjob.cronnext import go_date, next_activation

NY = zoneinfo.ZoneInfo("America/New_York")


def _next(spec: str, after: str) -> datetime | None:
    return next_activation(parse_standard(spec), datetime.fromisoformat(after))


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        # Spring forward in New York, 2024-03-10: 02:00 EST jumps to 03:00 EDT.
        ("TZ=America/New_York 0 * * * *", "2024-03-10T01:00:00-05:00", "2024-03-10T03:00:00-04:00"),
        ("TZ=America/New_York 0 1 * * *", "2024-03-10T01:00:00-05:00", "2024-03-11T01:00:00-04:00"),
        # a time inside the gap does not run that day (croniter would run it at 03:00)
        ("TZ=America/New_York 30 2 * * *", "2024-03-09T12:00:00-05:00", "2024-03-11T02:30:00-04:00"),
        ("TZ=America/New_York 30 2 10 3 *", "2024-03-01T00:00:00-05:00", "2025-03-10T02:30:00-04:00"),
        # Fall back, 2024-11-03: 02:00 EDT becomes 01:00 EST, the 1 o'clock hour happens twice.
        ("TZ=America/New_York 0 * * * *", "2024-11-03T01:00:00-04:00", "2024-11-03T01:00:00-05:00"),
        ("TZ=America/New_York 0 * * * *", "2024-11-03T01:00:00-05:00", "2024-11-03T02:00:00-05:00"),
        ("TZ=America/New_York 30 1 * * *", "2024-11-03T00:00:00-04:00", "2024-11-03T01:30:00-04:00"),
        ("TZ=America/New_York 30 1 * * *", "2024-11-03T01:30:00-04:00", "2024-11-03T01:30:00-05:00"),
        ("TZ=America/New_York 30 1 * * *", "2024-11-03T01:30:00-05:00", "2024-11-04T01:30:00-05:00"),
        ("TZ=America/New_York 0 2 * * *", "2024-11-03T00:00:00-04:00", "2024-11-03T02:00:00-05:00"),
        ("TZ=America/New_York 0 3 3 * *", "2024-11-03T00:00:00-04:00", "2024-11-03T03:00:00-05:00"),
        ("TZ=America/New_York 0 3 3 * *", "2024-11-03T03:00:00-05:00", "2024-12-03T03:00:00-05:00"),
        # Sao Paulo 2018-11-04: midnight did not exist (00:00 -03 became 01:00 -02).
        ("TZ=America/Sao_Paulo 0 0 * * *", "2018-11-03T12:00:00-03:00", "2018-11-05T00:00:00-02:00"),
        ("TZ=America/Sao_Paulo 0 9 10 * *", "2018-10-17T05:00:00-04:00", "2018-11-10T06:00:00-05:00"),
        # A zone from spec.timeZone is the same TZ= prefix.
        ("TZ=Asia/Shanghai 0 10 * * ?", "2022-09-05T09:01:00+00:00", "2022-09-06T02:00:00+00:00"),
        ("TZ=Asia/Shanghai 0 10 * * ?", "2022-09-06T01:01:00+00:00", "2022-09-06T02:00:00+00:00"),
        # Without a zone the schedule is read in the zone of the time given.
        ("0 10 * * ?", "2022-09-05T09:01:00+00:00", "2022-09-05T10:00:00+00:00"),
        ("0 10 * * ?", "2022-09-05T09:01:00+08:00", "2022-09-05T10:00:00+08:00"),
        ("TZ=Local 0 10 * * *", "2022-09-05T11:01:00+00:00", "2022-09-06T10:00:00+00:00"),
        ("TZ= 0 10 * * *", "2022-09-05T09:01:00+08:00", "2022-09-05T18:00:00+08:00"),
    ],
)
def test_next_activation_matches_robfig(spec, after, expected):
    found = _next(spec, after)
    assert found == datetime.fromisoformat(expected)  # the same instant
    assert found.utcoffset() == datetime.fromisoformat(after).utcoffset()  # in the input's zone


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        # day-of-month and day-of-week: OR when both are restricted, AND when either is a star
        ("0 0 */5 Apr,Aug,Oct Mon", "2012-07-09T23:35:00+00:00", "2012-08-01T00:00:00+00:00"),
        ("0 0 */5 Oct Mon", "2012-07-09T23:35:00+00:00", "2012-10-01T00:00:00+00:00"),
        ("0 0 * Feb Mon", "2012-07-09T23:35:00+00:00", "2013-02-04T00:00:00+00:00"),
        ("0 0 * Feb Mon/2", "2012-07-09T23:35:00+00:00", "2013-02-01T00:00:00+00:00"),
        ("0 0 13 * 5", "2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00"),
        ("0 0 13 * */1", "2026-01-01T00:00:00+00:00", "2026-01-13T00:00:00+00:00"),
        ("0 0 29 Feb ?", "2012-07-09T23:35:00+00:00", "2016-02-29T00:00:00+00:00"),
        ("59 23 31 12 *", "2026-12-31T23:59:00+00:00", "2027-12-31T23:59:00+00:00"),
        ("@every 90s", "2026-01-01T00:00:10.900+00:00", "2026-01-01T00:01:40+00:00"),
        ("@hourly", "2026-01-01T00:00:00+00:00", "2026-01-01T01:00:00+00:00"),
        ("@weekly", "2026-01-01T00:00:00+00:00", "2026-01-04T00:00:00+00:00"),
        ("@monthly", "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"),
    ],
)
def test_next_activation_field_semantics(spec, after, expected):
    assert _next(spec, after) == datetime.fromisoformat(expected)


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        ("*/5 * * * *", "2026-11-23T00:59:30.123456+00:00", "2026-11-23T01:00:00+00:00"),
        ("*/5 * * * *", "2026-11-23T01:00:00+00:00", "2026-11-23T01:05:00+00:00"),
        ("TZ=Asia/Shanghai 0 9 * * *", "2026-11-23T00:59:30+00:00", "2026-11-23T01:00:00+00:00"),
        ("TZ=America/New_York 0 9 * * MON-FRI", "2026-11-23T00:59:30+00:00", "2026-11-23T14:00:00+00:00"),
        ("0 9 * * SAT", "2026-11-23T00:59:30+00:00", "2026-11-28T09:00:00+00:00"),  # from a Monday
        ("@every 90s", "2026-11-23T00:59:30.123456+00:00", "2026-11-23T01:01:00+00:00"),
        ("@yearly", "2026-11-23T00:59:30+00:00", "2027-01-01T00:00:00+00:00"),
    ],
)
def test_next_activation_everyday_schedules(spec, after, expected):
    assert _next(spec, after) == datetime.fromisoformat(expected)


@st.composite
def _field(draw, low: int, high: int):
    """One field made of in-range elements: N, A-B, */S, N/S, A-B/S."""
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        a = draw(st.integers(low, high))
        b = draw(st.integers(a, high))
        step = draw(st.integers(1, high - low + 1))
        parts.append(
            draw(st.sampled_from([str(a), f"{a}-{b}", f"*/{step}", f"{a}/{step}", f"{a}-{b}/{step}", "*"]))
        )
    return ",".join(parts)


_BOUNDS = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]


@given(st.tuples(*(_field(lo, hi) for lo, hi in _BOUNDS)), st.integers(0, 10**8))
def test_next_activation_is_strictly_later_on_a_whole_minute(fields, offset):
    after = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=offset)
    found = next_activation(parse_standard(" ".join(fields)), after)
    if found is None:  # e.g. day 31 in a month-set without 31-day months
        return
    assert found > after
    assert found.second == 0 and found.microsecond == 0


@pytest.mark.parametrize("spec", ["0 0 30 2 *", "0 0 31 4 *", "0 0 31 2,4,6,9,11 *"])
def test_a_schedule_that_never_fires_has_no_next_activation(spec):
    assert _next(spec, "2026-01-01T00:00:00+00:00") is None


def test_next_activation_needs_an_aware_time():
    with pytest.raises(ValueError, match="timezone-aware"):
        next_activation(parse_standard("* * * * *"), datetime(2026, 1, 1))


def test_go_date_resolves_gaps_and_repeats_like_go():
    # 02:30 does not exist on the spring-forward day: Go lands on 01:30 EST.
    gap = go_date(2024, 3, 10, 2, 30, 0, NY)
    assert datetime.fromtimestamp(gap, NY).isoformat() == "2024-03-10T01:30:00-05:00"
    # 01:30 exists twice on the fall-back day: Go picks the first (EDT).
    repeat = go_date(2024, 11, 3, 1, 30, 0, NY)
    assert datetime.fromtimestamp(repeat, NY).isoformat() == "2024-11-03T01:30:00-04:00"
    # Overflowing fields are normalised.
    overflow = go_date(2025, 13, 32, 0, 0, 0, UTC)
    assert datetime.fromtimestamp(overflow, UTC).isoformat() == "2026-02-01T00:00:00+00:00"


def test_field_bits_star_flags_follow_robfig():
    assert field_bits("0 0 * * 1").dom_star and not field_bits("0 0 * * 1").dow_star
    assert not field_bits("0 0 */2 * 1").dom_star  # a step above one clears the star
    assert field_bits("0 0 ?/1 * 1").dom_star
    assert field_bits("0 0 1,* * 1").dom_star
    assert field_bits("0-10/5 * * * *").minute == (1 << 0) | (1 << 5) | (1 << 10)


_ZONES = ["UTC", "America/New_York", "Europe/London", "Australia/Sydney", "America/Sao_Paulo"]
# Instants a few days before DST changes in the zones above.
_NEAR_CHANGES = [
    datetime(2024, 3, 8, tzinfo=UTC),
    datetime(2024, 3, 29, tzinfo=UTC),
    datetime(2024, 4, 5, tzinfo=UTC),
    datetime(2024, 10, 4, tzinfo=UTC),
    datetime(2024, 10, 25, tzinfo=UTC),
    datetime(2024, 11, 1, tzinfo=UTC),
    datetime(2018, 11, 1, tzinfo=UTC),
]


def _matches(spec_fields: list[str], moment: datetime) -> bool:
    bits = field_bits(" ".join(spec_fields))
    dom = bool(bits.dom >> moment.day & 1)
    dow = bool(bits.dow >> ((moment.weekday() + 1) % 7) & 1)
    day = (dom and dow) if (bits.dom_star or bits.dow_star) else (dom or dow)
    return (
        moment.second == 0
        and bool(bits.minute >> moment.minute & 1)
        and bool(bits.hour >> moment.hour & 1)
        and bool(bits.month >> moment.month & 1)
        and day
    )


_minute = st.sampled_from(["0", "*/15", "30", "0,45", "*"])
_hour = st.sampled_from(["*", "0", "1", "2", "3", "1-3", "*/2", "23"])


@settings(max_examples=150, deadline=None)
@given(
    zone=st.sampled_from(_ZONES),
    base=st.sampled_from(_NEAR_CHANGES),
    offset_minutes=st.integers(0, 6 * 24 * 60),
    minute=_minute,
    hour=_hour,
)
def test_next_activation_is_the_first_matching_wall_time_across_dst(zone, base, offset_minutes, minute, hour):
    """In any zone and around any DST change, the result is later, its wall clock matches the schedule,
    and no instant in between (at whole minutes) has a matching wall clock."""
    tz = zoneinfo.ZoneInfo(zone)
    fields = [minute, hour, "*", "*", "*"]
    after = (base + timedelta(minutes=offset_minutes, seconds=17)).astimezone(tz)
    found = next_activation(parse_standard(f"TZ={zone} " + " ".join(fields)), after)
    assert found is not None and found > after
    assert _matches(fields, found.astimezone(tz))
    probe = after.replace(second=0, microsecond=0).astimezone(UTC) + timedelta(minutes=1)
    while probe < found:
        assert not _matches(fields, probe.astimezone(tz)), probe.astimezone(tz).isoformat()
        probe += timedelta(minutes=1)
