"""Manifests applied to a fresh sandbox before kruise-py's processes start (``--apply``).

Some kruise behaviour is configured by objects kruise reads once when it starts — kruise-webhook
learns the kinds in kruise-configuration's WorkloadSpread whitelist then — so a cluster set up the
way upstream's e2e one is (``kubectl apply -f test/kruise-e2e-config.yaml`` before installing
kruise) needs them in place before the first kruise process runs. They go through the real
``kubectl apply -f``, so files, directories and multi-document YAML behave as they do against any
cluster; CustomResourceDefinitions among them are waited for until Established, so a later path can
hold objects of a kind an earlier one defined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from kruise.sandbox.binaries import find_binary

CRD_PREFIX = "customresourcedefinition.apiextensions.k8s.io/"


def find_kubectl() -> str:
    return find_binary("kubectl")


def check_paths(paths: Sequence[Path]) -> list[Path]:
    """The paths as given; a missing one is a ValueError naming it (before any cluster starts)."""
    for path in paths:
        if not path.exists():
            raise ValueError(f"manifests: {path}: no such file or directory")
    return list(paths)


async def _kubectl(kubeconfig: Path, *args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        find_kubectl(), "--kubeconfig", str(kubeconfig), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(
            f"kubectl {' '.join(args)} failed (exit {process.returncode}): {err.decode().strip()}"
        )
    return out.decode()


async def apply_manifests(kubeconfig: Path, paths: Sequence[Path], *, timeout: float) -> list[str]:
    """``kubectl apply -f`` each path in order (a directory: its .yaml/.yml/.json files), waiting
    after each until the CRDs it applied are Established; the applied objects as ``kind/name``."""
    applied: list[str] = []
    for path in paths:
        try:
            names = (await _kubectl(kubeconfig, "apply", "-f", str(path), "-o", "name")).split()
        except RuntimeError as exc:
            raise RuntimeError(f"manifests: {path}: {exc}") from exc
        crds = [name for name in names if name.startswith(CRD_PREFIX)]
        if crds:
            wait = ["wait", "--for=condition=Established", f"--timeout={timeout:g}s"]
            await _kubectl(kubeconfig, *wait, *crds)
        applied += names
    return applied
