"""Stopping the certificate loop must never be lost, whatever instant the cancel lands on.

Python 3.11's `asyncio.wait_for` returns the inner result when a cancel arrives just after the inner
wait finished; the loop then carried on and `kruise-webhook` hung on shutdown (seen in CI).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kruise.webhook.certcontroller import CertController


class _Patcher:
    async def ensure(self, ca_cert: bytes) -> list[str]:
        return []


@pytest.mark.parametrize("yields_before_cancel", range(6))
async def test_cancel_racing_a_wake_up_stops_the_loop(tmp_path: Path, yields_before_cancel: int) -> None:
    controller = CertController(object(), "kruise-system", "svc", tmp_path, _Patcher(), resync_seconds=60)  # type: ignore[arg-type]
    controller.informers = []
    synced = asyncio.Event()

    async def sync_once() -> None:
        synced.set()

    controller.sync_once = sync_once  # type: ignore[method-assign]
    task = asyncio.create_task(controller.run())
    await asyncio.sleep(0)  # the loop is now parked on its wake event
    controller._wake.set()
    for _ in range(yields_before_cancel):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    assert task in done, "the cancel was swallowed and the loop kept running"
    assert task.cancelled()
