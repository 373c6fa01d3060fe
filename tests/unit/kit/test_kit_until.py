"""`tests.kit.until`: returns the first truthy value, accepts async predicates, fails loudly."""

from __future__ import annotations

import asyncio

import pytest

from kruise.kube.errors import NotFound
from tests.kit import until


async def test_returns_first_truthy_value_of_a_sync_predicate():
    box: list[int] = []

    async def fill():
        for i in range(3):
            await asyncio.sleep(0)
            box.append(i)

    task = asyncio.create_task(fill())
    assert await until(lambda: len(box) == 3 and list(box), timeout=2) == [0, 1, 2]
    await task


async def test_awaits_an_async_predicate():
    calls = 0

    async def third_time():
        nonlocal calls
        calls += 1
        return calls if calls >= 3 else None

    assert await until(third_time, timeout=2, interval=0) == 3


async def test_ignored_exceptions_count_as_not_yet():
    calls = 0

    def appears():
        nonlocal calls
        calls += 1
        if calls < 3:
            raise NotFound('pods "p" not found')
        return "found"

    assert await until(appears, timeout=2, interval=0, ignore=(NotFound,)) == "found"


async def test_other_exceptions_propagate_at_once():
    def broken():
        raise KeyError("spec")

    with pytest.raises(KeyError):
        await until(broken, timeout=2)


async def test_timeout_names_the_predicate_and_the_last_value():
    def never_ready():
        return 0

    with pytest.raises(AssertionError) as exc:
        await until(never_ready, timeout=0.05, interval=0.01)
    text = str(exc.value)
    assert "never_ready" in text and "within 0.05s" in text and "last returned 0" in text


async def test_timeout_reports_the_last_ignored_error_and_a_custom_message():
    def missing():
        raise NotFound('pods "p" not found')

    with pytest.raises(AssertionError) as exc:
        await until(missing, timeout=0.03, ignore=(NotFound,), message="pod p exists")
    assert str(exc.value).startswith("pod p exists: not true within 0.03s")
    assert "last raised NotFound(code=404, reason='NotFound', message='pods \"p\" not found')" in str(
        exc.value
    )


@pytest.mark.parametrize(("timeout", "interval", "field"), [(0, 0.1, "timeout"), (1, -1, "interval")])
async def test_bad_arguments_name_the_field(timeout, interval, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        await until(lambda: True, timeout=timeout, interval=interval)
