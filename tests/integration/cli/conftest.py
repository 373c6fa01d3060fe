"""The kubectl-kruise commands against the in-process API emulator, with the workload CRDs installed.

No controllers run: tests write specs, ControllerRevisions, ReplicaSets and status themselves
(status through the status subresource, as a controller would), which is all the plugin reads.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from kruise.cli.kubectl_kruise.app import run
from kruise.kube.client import Client
from kruise.kube.resources import CRDS

REPO = Path(__file__).resolve().parents[3]
# No kruise-webhook runs here, so nothing answers conversion: the 2.0 API set's CRDs, whose storage version of
# every kind is the one kruise-py's components talk (on the 1.9 set seven kinds are stored at v1beta1 and
# their v1alpha1 reads go through kruise-webhook's /convert, as e2e covers).
CRD_DIR = "crds-2.0"
WORKLOAD_CRDS = (
    "apps.kruise.io_clonesets.yaml",
    "apps.kruise.io_statefulsets.yaml",
    "apps.kruise.io_daemonsets.yaml",
    "apps.kruise.io_advancedcronjobs.yaml",
    "apps.kruise.io_broadcastjobs.yaml",
    "apps.kruise.io_sidecarsets.yaml",
    "apps.kruise.io_containerrecreaterequests.yaml",
)


async def install_crds(client: Client, files: tuple[str, ...] = WORKLOAD_CRDS, timeout: float = 10.0) -> None:
    await install_crds_from(
        client, [yaml.safe_load((REPO / CRD_DIR / file).read_text()) for file in files], timeout
    )


async def install_crds_from(client: Client, crds: list[dict], timeout: float = 10.0) -> None:
    """Create the CRDs and wait until each is Established (served)."""
    names = []
    for crd in crds:
        await client.create(CRDS, crd)
        names.append(crd["metadata"]["name"])
    async with asyncio.timeout(timeout):
        for name in names:
            while True:
                crd = await client.get(CRDS, name)
                conditions = (crd.get("status") or {}).get("conditions") or []
                if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                    break
                await asyncio.sleep(0.01)


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Plugin:
    """Runs the plugin's `run()` in-process against the emulator's kubeconfig."""

    client: Client
    kubeconfig: Path

    async def __call__(self, *args: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = await run(["--kubeconfig", str(self.kubeconfig), *args], out, err)
        return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
async def plugin(emulator) -> AsyncIterator[Plugin]:
    client = await Client.from_kubeconfig(emulator.kubeconfig, qps=1000, burst=1000)
    try:
        await install_crds(client)
        yield Plugin(client, emulator.kubeconfig)
    finally:
        await client.close()
