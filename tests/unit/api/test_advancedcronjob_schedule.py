"""spec.schedule is checked like robfig/cron's ParseStandard: same accepted language, same messages."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.cronschedule import ScheduleError, parse_go_duration, parse_standard

VALID = [
    ("*/5 * * * *", None, "*/5 * * * *"),
    ("0 0 * * *", None, "0 0 * * *"),
    ("0-59/15 1,3,5 1-31 1-12 0-6", None, "0-59/15 1,3,5 1-31 1-12 0-6"),
    ("5/15 * * * *", None, "5/15 * * * *"),
    ("0 9 * jan-mar MON-FRI", None, "0 9 * jan-mar MON-FRI"),
    ("? * * * ?/2", None, "* * * * */2"),
    ("  1   2  3 4 5 ", None, "1 2 3 4 5"),
    ("TZ=Asia/Shanghai 0 1 * * *", "Asia/Shanghai", "0 1 * * *"),
    ("CRON_TZ=UTC 0 1 * * *", "UTC", "0 1 * * *"),
    ("TZ=Local @daily", "Local", "0 0 * * *"),
    ("@yearly", None, "0 0 1 1 *"),
    ("@annually", None, "0 0 1 1 *"),
    ("@monthly", None, "0 0 1 * *"),
    ("@weekly", None, "0 0 * * 0"),
    ("@daily", None, "0 0 * * *"),
    ("@midnight", None, "0 0 * * *"),
    ("@hourly", None, "0 * * * *"),
]


@pytest.mark.parametrize(("spec", "location", "expression"), VALID)
def test_valid_schedules(spec, location, expression):
    parsed = parse_standard(spec)
    assert parsed.location == location
    assert parsed.expression == expression


@pytest.mark.parametrize(
    ("spec", "seconds"),
    [
        ("@every 1h30m", 5400),
        ("@every 90s", 90),
        ("@every 1.5s", 1),
        ("@every 500ms", 1),
        ("@every 2m0.9s", 120),
    ],
)
def test_every_is_truncated_to_seconds_with_one_second_minimum(spec, seconds):
    parsed = parse_standard(spec)
    assert parsed.expression is None
    assert parsed.every_seconds == seconds


INVALID = [
    ("", "empty spec string"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("0 * * * * *", "expected exactly 5 fields, found 6: [0 * * * * *]"),
    ("60 * * * *", "end of range (60) above maximum (59): 60"),
    ("* 24 * * *", "end of range (24) above maximum (23): 24"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("* * * 13 *", "end of range (13) above maximum (12): 13"),
    ("* * * * 7", "end of range (7) above maximum (6): 7"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("*/2/3 * * * *", "too many slashes: */2/3"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("-1 * * * *", 'failed to parse int from : strconv.Atoi: parsing "": invalid syntax'),
    ("* * L * *", 'failed to parse int from L: strconv.Atoi: parsing "L": invalid syntax'),
    ("* * * * 1#2", 'failed to parse int from 1#2: strconv.Atoi: parsing "1#2": invalid syntax'),
    ("@reboot", "unrecognized descriptor: @reboot"),
    ("@every", "unrecognized descriptor: @every"),
    ("@every 5", 'failed to parse duration @every 5: time: missing unit in duration "5"'),
    ("@every 1x", 'failed to parse duration @every 1x: time: unknown unit "x" in duration "1x"'),
    ("TZ=Mars/Olympus 0 1 * * *", "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"),
]


@pytest.mark.parametrize(("spec", "message"), INVALID)
def test_invalid_schedules_carry_robfig_messages(spec, message):
    with pytest.raises(ScheduleError) as err:
        parse_standard(spec)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("0", 0),
        ("1h", 3600 * 10**9),
        ("1h30m", 5400 * 10**9),
        ("1.5s", 1_500_000_000),
        ("-2m", -120 * 10**9),
        ("3ms", 3_000_000),
        ("7us", 7_000),
        ("7µs", 7_000),
        ("9ns", 9),
    ],
)
def test_go_durations(text, nanos):
    assert parse_go_duration(text) == nanos


@pytest.mark.parametrize("text", ["", "h", ".s", "1..5s", "+"])
def test_bad_go_durations(text):
    with pytest.raises(ScheduleError):
        parse_go_duration(text)


_BOUNDS = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]


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


@given(st.tuples(*(_field(lo, hi) for lo, hi in _BOUNDS)))
def test_in_range_fields_always_parse(fields):
    expression = " ".join(fields)
    assert parse_standard(expression).expression == expression


@given(st.integers(0, 4), st.integers(1, 200))
def test_a_value_past_the_maximum_is_rejected_naming_the_bound(position, beyond):
    _low, high = _BOUNDS[position]
    fields = ["*"] * 5
    fields[position] = str(high + beyond)
    with pytest.raises(ScheduleError) as err:
        parse_standard(" ".join(fields))
    assert str(err.value) == f"end of range ({high + beyond}) above maximum ({high}): {high + beyond}"
