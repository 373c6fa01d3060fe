"""The ``cluster`` fixture: the sandbox emulator plus a ``Simulator`` at high speed.

Tests are skipped, visibly, while the emulator fixture does not exist.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from simulator_testkit import SPEED, Cluster

from kruise.sandbox.simulator import Simulator, Timing
from kruise.sandbox.simulator.client import Client


@pytest.fixture
def simulator_options() -> dict[str, Any]:
    """Override per module/test to shape the cluster (nodes, pods_per_node, timing...)."""
    return {}


@pytest.fixture
def sandbox_emulator(request: pytest.FixtureRequest) -> Any:
    """The emulator fixture, looked up lazily (sync, so the async fixture runs outside a loop)."""
    try:
        return request.getfixturevalue("emulator")
    except pytest.FixtureLookupError:
        pytest.skip("the sandbox emulator fixture is not available yet")


@pytest.fixture
async def cluster(sandbox_emulator: Any, simulator_options: dict[str, Any]) -> AsyncIterator[Cluster]:
    emulator = sandbox_emulator
    cri_dir = Path(tempfile.mkdtemp(prefix="sim-cri-", dir="/tmp"))
    options = {"nodes": 3, "timing": Timing(run_seconds=20.0, init_seconds=5.0, termination_seconds=5.0)}
    options |= simulator_options
    simulator = Simulator(emulator.kubeconfig, speed=SPEED, cri_socket_dir=cri_dir, **options)
    await simulator.start()
    client = Client(emulator.kubeconfig)
    try:
        yield Cluster(simulator, client, cri_dir)
    finally:
        await client.close()
        await simulator.stop()
        shutil.rmtree(cri_dir, ignore_errors=True)
