"""Helpers to drive the emulator with the real kubectl binary (as an asyncio subprocess)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kruise.sandbox.simulator.client import ApiError, Client

KUBECTL = Path(sys.executable).parent / "kubectl"


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


class Kubectl:
    def __init__(self, kubeconfig: Path, cache: Path):
        self.kubeconfig = kubeconfig
        self.cache = cache

    async def __call__(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 60
    ) -> Result:
        proc = await asyncio.create_subprocess_exec(
            str(KUBECTL),
            "--kubeconfig",
            str(self.kubeconfig),
            "--cache-dir",
            str(self.cache),
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(
            proc.communicate(stdin.encode() if stdin is not None else None), timeout
        )
        result = Result(proc.returncode or 0, out.decode(), err.decode())
        if check and result.code != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.code}):\n{result.err}\n{result.out}"
            )
        return result


@pytest.fixture
def kubectl(emulator, tmp_path) -> Kubectl:
    if not KUBECTL.exists() and shutil.which("kubectl") is None:
        pytest.skip("kubectl binary not available")
    return Kubectl(emulator.kubeconfig, tmp_path / "kube-cache")


# A namespaced custom resource with a status subresource and a free-form schema, for tests of what
# the emulator does to custom resources (status strategy, preconditions).
GROUP = "status.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = f"/apis/{GROUP}/v1/namespaces/default/gadgets"


def gadget_crd() -> dict[str, Any]:
    obj = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": obj, "status": obj}}
                    },
                }
            ],
        },
    }


async def served(client: Client, path: str, deadline: float = 10.0) -> None:
    """Poll until the CRD's resource is served (the emulator establishes it shortly after create)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        try:
            await client.list(path)
            return
        except ApiError as err:
            if err.status != 404 or loop.time() > end:
                raise
        await asyncio.sleep(0.02)


@pytest.fixture
async def gadgets(emulator):
    client = Client(emulator.kubeconfig)
    try:
        await client.create(CRDS, gadget_crd())
        await served(client, GADGETS)
    finally:
        await client.close()
    return GADGETS
