"""`tests.kit.until_fetched`: fetch until the predicate holds, return what was fetched, fail naming it."""

from __future__ import annotations

import asyncio

import pytest

from tests.kit import until_fetched


async def test_returns_the_fetched_value_the_predicate_accepted():
    versions = iter(range(10))

    async def fetch():
        return {"version": next(versions)}

    assert await until_fetched(fetch, lambda o: o["version"] >= 3, timeout=2, interval=0) == {"version": 3}


async def test_sync_fetch_and_awaitable_returning_lambda():
    counter = {"n": 0}

    def bump():
        counter["n"] += 1
        return counter["n"]

    assert await until_fetched(bump, lambda n: n == 2, timeout=2, interval=0) == 2
    assert await until_fetched(lambda: asyncio.sleep(0, counter["n"]), lambda n: n == 2, timeout=2) == 2


async def test_fetch_errors_propagate_at_once():
    async def broken():
        raise KeyError("status")

    with pytest.raises(KeyError):
        await until_fetched(broken, bool, timeout=2)


async def test_a_timeout_error_of_the_fetch_itself_is_not_taken_for_the_deadline():
    async def times_out():
        raise TimeoutError("upstream read timed out")

    with pytest.raises(TimeoutError, match="upstream read"):
        await until_fetched(times_out, bool, timeout=2)


async def test_timeout_names_what_was_awaited_and_the_last_value():
    async def phase():
        return {"phase": "Recreating"}

    def completed(crr):
        return crr["phase"] == "Completed"

    with pytest.raises(AssertionError) as exc:
        await until_fetched(phase, completed, timeout=0.05, interval=0.01)
    text = str(exc.value)
    assert text.startswith("test_timeout_names_what_was_awaited_and_the_last_value.<locals>.completed over ")
    assert "phase: not true within 0.05s" in text
    assert "last fetched {'phase': 'Recreating'}" in text


async def test_a_hanging_fetch_meets_the_deadline_with_a_custom_message():
    async def hangs():
        await asyncio.Event().wait()

    with pytest.raises(AssertionError) as exc:
        await until_fetched(hangs, bool, timeout=0.05, message="NodeImage node-1 pulled")
    assert str(exc.value) == "NodeImage node-1 pulled: not true within 0.05s (1 attempts); nothing fetched"


@pytest.mark.parametrize(("timeout", "interval", "field"), [(0, 0.1, "timeout"), (1, -1, "interval")])
async def test_bad_arguments_name_the_field(timeout, interval, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        await until_fetched(lambda: 1, bool, timeout=timeout, interval=interval)
