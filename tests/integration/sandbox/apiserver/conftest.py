"""Helpers to drive the emulator with the real kubectl binary (as an asyncio subprocess)."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

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
