"""``python -m kruise.sandbox.simulator`` runs as its own process and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

from kruise.sandbox.simulator.client import Client, resource_path


async def test_module_entry_point_registers_nodes_and_stops_cleanly(sandbox_emulator: Any):
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kruise.sandbox.simulator",
        "--kubeconfig",
        str(sandbox_emulator.kubeconfig),
        "--nodes",
        "2",
        "--speed",
        "50",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        line = await asyncio.wait_for(process.stdout.readline(), 30)
        assert line.decode().strip() == "ready: 2 node(s): node-1, node-2"
        client = Client(sandbox_emulator.kubeconfig)
        try:
            nodes = (await client.list(resource_path("v1", "nodes")))["items"]
        finally:
            await client.close()
        assert sorted(n["metadata"]["name"] for n in nodes) == ["node-1", "node-2"]
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, stderr.decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
