"""The effective schedule and the due run (upstream's formatSchedule and getNextSchedule)."""

from __future__ import annotations

import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.cronschedule import parse_standard
from kruise.control.advancedcronjob.schedule import (
    TOO_MANY_MISSED,
    ScheduleProblem,
    due_run,
    effective_schedule,
    parse_effective,
)

T0 = datetime(2026, 3, 2, 10, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("schedule", "time_zone", "expected"),
    [
        ("0 10 * * *", None, "0 10 * * *"),
        ("0 10 * * *", "Asia/Shanghai", "TZ=Asia/Shanghai 0 10 * * *"),
        ("TZ=UTC 0 10 * * *", "Asia/Shanghai", "TZ=UTC 0 10 * * *"),
        ("CRON_TZ=UTC 0 10 * * *", None, "CRON_TZ=UTC 0 10 * * *"),
        ("0 10 * * *", "Mars/Olympus", "0 10 * * *"),
    ],
)
def test_effective_schedule(schedule, time_zone, expected):
    assert effective_schedule(schedule, time_zone) == expected


def test_an_unparsable_schedule_is_a_problem_with_upstreams_text():
    with pytest.raises(ScheduleProblem) as err:
        parse_effective("bad cron", None)
    assert str(err.value) == 'unparsable schedule "bad cron": expected exactly 5 fields, found 2: [bad cron]'


def _minutely():
    return parse_standard("*/1 * * * *")


def test_nothing_is_due_before_the_first_activation_after_creation():
    due = due_run(_minutely(), None, T0, None, T0 + timedelta(seconds=30))
    assert due.missed is None
    assert due.next_run == T0 + timedelta(minutes=1)


def test_only_the_most_recent_missed_activation_is_run():
    due = due_run(_minutely(), None, T0, None, T0 + timedelta(minutes=7, seconds=5))
    assert due.missed == T0 + timedelta(minutes=7)
    assert due.next_run == T0 + timedelta(minutes=8)


def test_the_last_scheduled_child_moves_the_window_past_creation():
    last = T0 + timedelta(minutes=7)
    due = due_run(_minutely(), last, T0, None, last + timedelta(seconds=59))
    assert due.missed is None
    assert due.next_run == last + timedelta(minutes=1)


def test_an_activation_exactly_now_is_due():
    due = due_run(_minutely(), None, T0, None, T0 + timedelta(minutes=1))
    assert due.missed == T0 + timedelta(minutes=1)


def test_starting_deadline_skips_a_run_that_would_start_too_late():
    hourly = parse_standard("0 * * * *")
    now = T0 + timedelta(minutes=30)  # the 10:00 run is 30 min old
    assert due_run(hourly, None, T0 - timedelta(hours=1), 600, now).missed is None
    # the window is open at its start: a run exactly startingDeadlineSeconds old is not started
    assert due_run(hourly, None, T0 - timedelta(hours=1), 1800, now).missed is None
    assert due_run(hourly, None, T0 - timedelta(hours=1), 1801, now).missed == T0
    assert due_run(hourly, None, T0 - timedelta(hours=1), None, now).missed == T0


def test_creation_in_the_future_only_reports_the_next_run():
    due = due_run(_minutely(), None, T0 + timedelta(hours=1), None, T0)
    assert due.missed is None and due.next_run == T0 + timedelta(minutes=1)


def test_a_hundred_missed_starts_still_run_the_latest():
    due = due_run(_minutely(), None, T0, None, T0 + timedelta(minutes=100, seconds=1))
    assert due.missed == T0 + timedelta(minutes=100)


def test_more_than_a_hundred_missed_starts_give_up():
    with pytest.raises(ScheduleProblem) as err:
        due_run(_minutely(), None, T0, None, T0 + timedelta(minutes=101))
    assert str(err.value) == TOO_MANY_MISSED


def test_a_starting_deadline_bounds_the_backlog_so_a_long_outage_still_runs():
    due = due_run(_minutely(), None, T0, 200, T0 + timedelta(days=30, seconds=10))
    assert due.missed == T0 + timedelta(days=30)


@pytest.mark.parametrize("created", [T0, None])
def test_a_schedule_that_never_fires_or_no_creation_time_gives_up(created):
    schedule = parse_standard("0 0 30 2 *") if created else _minutely()
    with pytest.raises(ScheduleProblem, match="too many missed start times"):
        due_run(schedule, None, created, None, T0 + timedelta(days=1))


def test_times_are_evaluated_and_returned_in_nows_zone():
    shanghai = zoneinfo.ZoneInfo("Asia/Shanghai")
    daily = parse_standard("0 9 * * *")  # no zone: evaluated in now's zone
    now = datetime(2026, 3, 2, 9, 5, tzinfo=shanghai)
    due = due_run(daily, None, now - timedelta(hours=2), None, now)
    assert due.missed == datetime(2026, 3, 2, 9, 0, tzinfo=shanghai)
    assert due.missed.utcoffset() == timedelta(hours=8)


def test_an_hourly_schedule_across_fall_back_counts_the_repeated_hour():
    ny = zoneinfo.ZoneInfo("America/New_York")
    hourly = parse_effective("0 * * * *", "America/New_York")
    created = datetime(2024, 11, 3, 0, 30, tzinfo=ny)
    now = datetime(2024, 11, 3, 3, 30, tzinfo=ny)  # 01:00 EDT, 01:00 EST, 02:00, 03:00 have passed
    due = due_run(hourly, None, created, None, now.astimezone(UTC))
    assert due.missed == datetime(2024, 11, 3, 3, 0, tzinfo=ny)
    assert due.next_run == datetime(2024, 11, 3, 4, 0, tzinfo=ny)
    repeated = datetime(2024, 11, 3, 1, 0, tzinfo=ny, fold=1)  # 01:00 EST
    assert due_run(hourly, created, created, None, repeated).missed == repeated


@given(
    minutes_late=st.integers(0, 5000),
    deadline=st.one_of(st.none(), st.integers(0, 100_000)),
    every=st.sampled_from(["*/1 * * * *", "*/5 * * * *", "0 * * * *", "@every 45s"]),
)
def test_the_due_run_is_the_latest_activation_within_the_window(minutes_late, deadline, every):
    schedule = parse_standard(every)
    now = T0 + timedelta(minutes=minutes_late, seconds=13)
    try:
        due = due_run(schedule, None, T0, deadline, now)
    except ScheduleProblem:
        return
    window_start = T0 if deadline is None else max(T0, now - timedelta(seconds=deadline))
    assert due.next_run is not None and due.next_run > now
    if due.missed is not None:
        assert window_start < due.missed <= now
        if deadline is not None:
            assert due.missed + timedelta(seconds=deadline) >= now
