"""--slow-image: parsing names the flag; a matching pull takes its delay over speed, others do not wait."""

from __future__ import annotations

import pytest

from kruise.sandbox.cri.image_store import ImageStore
from kruise.sandbox.cri.slow_pulls import SlowImages, parse_slow_image


def test_parse_accepts_glob_and_seconds():
    assert parse_slow_image("registry.example/slow/*=120") == ("registry.example/slow/*", 120.0)
    assert parse_slow_image("a=b=0.5") == ("a=b", 0.5)


@pytest.mark.parametrize("value", ["120", "=3", "nginx:*=soon", "nginx:*=-1", "nginx:*=inf", "nginx:*=nan"])
def test_parse_rejects_naming_the_flag(value: str):
    with pytest.raises(ValueError, match="--slow-image"):
        parse_slow_image(value)


def test_first_matching_pattern_wins_on_normalized_or_familiar_name():
    delays = SlowImages([("busybox:*", 7.0), ("docker.io/library/*", 3.0)], default=1.0)
    assert delays("docker.io/library/busybox:1.36") == 7.0
    assert delays("docker.io/library/nginx:alpine") == 3.0
    assert delays("quay.io/x/y:1") == 1.0


async def test_store_waits_only_for_the_slow_image(monkeypatch: pytest.MonkeyPatch):
    waited: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr("kruise.sandbox.cri.image_store.asyncio.sleep", fake_sleep)
    store = ImageStore(speed=20, pull_delay=SlowImages([("slow/*", 40.0)]))
    await store.pull("nginx:alpine")
    await store.pull("slow/app:1")
    assert waited == [2.0]
    assert store.get("slow/app:1") is not None
