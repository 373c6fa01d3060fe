import asyncio
from datetime import UTC, datetime, timedelta, timezone

from kruise.kube.clock import FakeClock, RealClock, parse_rfc3339, rfc3339, rfc3339_micro


async def test_fake_clock_wakes_sleepers_in_deadline_order():
    clock = FakeClock()
    woke: list[str] = []

    async def sleeper(name, seconds):
        await clock.sleep(seconds)
        woke.append(name)

    tasks = [asyncio.ensure_future(sleeper(n, s)) for n, s in (("late", 3), ("early", 1), ("mid", 2))]
    await asyncio.sleep(0)
    assert clock.sleepers == 3
    clock.step(1.5)
    await asyncio.sleep(0)
    assert woke == ["early"]
    clock.step(10)
    await asyncio.gather(*tasks)
    assert woke == ["early", "mid", "late"]
    assert clock.wall() == datetime(2026, 11, 22, 23, 0, 11, 500000, tzinfo=UTC)


def test_times_are_always_utc():
    local = datetime(2026, 11, 23, 1, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert rfc3339_micro(local) == "2026-11-22T23:00:00.123456Z"
    assert rfc3339(local) == "2026-11-22T23:00:00Z"
    assert parse_rfc3339("2026-11-22T23:00:00.123456Z") == local
    assert parse_rfc3339("2026-11-22T23:00:00Z").tzinfo is not None
    assert RealClock().wall().tzinfo is UTC
