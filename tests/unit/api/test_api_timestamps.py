"""The one time module: apiserver timestamps read leniently, user annotations the way Go reads them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from kruise.api.timestamps import (
    go_format_rfc3339,
    go_parse_rfc3339,
    parse_rfc3339,
    parse_time,
    rfc3339,
    rfc3339_micro,
)

MOMENTS = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1), timezones=st.just(UTC))
OFFSETS = st.integers(min_value=-23 * 60, max_value=23 * 60).map(lambda m: timezone(timedelta(minutes=m)))


@given(MOMENTS)
def test_kubernetes_time_round_trips_to_the_second(moment: datetime) -> None:
    assert parse_rfc3339(rfc3339(moment)) == moment.replace(microsecond=0)
    assert parse_time(rfc3339(moment)) == moment.replace(microsecond=0)
    assert parse_rfc3339(rfc3339_micro(moment)) == moment


@given(MOMENTS, OFFSETS)
def test_go_format_keeps_the_offset_and_go_parse_reads_it_back(moment: datetime, zone: timezone) -> None:
    local = moment.astimezone(zone)
    text = go_format_rfc3339(local)
    assert go_parse_rfc3339(text) == moment.replace(microsecond=0)
    assert parse_time(text) == moment.replace(microsecond=0)


def test_absent_or_broken_values_are_no_time() -> None:
    assert parse_time(None) is None and parse_time("") is None and parse_time(5) is None
    assert parse_time("yesterday") is None
    assert parse_time("2026-01-01T00:00:00") == datetime(2026, 1, 1, tzinfo=UTC)


def test_go_refuses_what_go_refuses() -> None:
    assert go_parse_rfc3339("2026-01-01 00:00:00Z") is None
    assert go_parse_rfc3339("2026-01-01T00:00:00") is None
    assert go_parse_rfc3339("2026-01-01T00:00:00+24:00") is None
    assert go_parse_rfc3339("2026-02-30T00:00:00Z") is None
    assert go_parse_rfc3339("2026-01-01t01:00:00.5+01:00") == datetime(
        2026, 1, 1, 0, 0, 0, 500000, tzinfo=UTC
    )
