"""A real kruise-daemon process on API set 1.9 talks NodeImage at its storage version (v1beta1) and
converts in-process (`kruise.kube.wire`): it pulls what its NodeImage asks and writes the status with no
conversion webhook at all. No kruise-webhook runs here, so any /convert call would fail; the emulator's
conversions are counted anyway (`tests.kit.conversions`).
"""

from __future__ import annotations

from pathlib import Path

from kruise.kube.resources import NODEIMAGES
from tests.integration.daemon.test_daemon_process import start_daemon
from tests.kit.conversions import counting_conversions
from tests.kit.daemon_node import image_tag, node_image, nodeimage_status, simulated_node
from tests.kit.polling import until_fetched

CRDS_1_9 = Path(__file__).resolve().parents[3] / "crds"


async def test_daemon_pulls_and_reports_nodeimage_without_convert(emulator):
    with counting_conversions(emulator) as conversions:
        async with simulated_node(emulator, "daemon-wire-", CRDS_1_9) as (simulator, client):
            client.wire = await client.read_wire_versions()  # the test's writes are v1beta1 too
            assert client.wire.wire_ref(NODEIMAGES) is not None
            proc, lines, drainer = await start_daemon(emulator, simulator)
            try:
                await client.create(NODEIMAGES, node_image({"nginx": [image_tag("1.25")]}))
                final = await until_fetched(
                    nodeimage_status(client), lambda s: s.get("succeeded") == 1, timeout=30.0
                )
            finally:
                proc.terminate()
                await proc.wait()
                await drainer
    (tag,) = final["imageStatuses"]["nginx"]["tags"]
    assert tag["phase"] == "Succeeded", tag
    (wire,) = [line for line in lines if '"wire versions"' in line]
    assert "nodeimages.apps.kruise.io" in wire and "v1beta1" in wire, wire
    assert conversions.of("NodeImage") == []
