"""The layering of docs/architecture (../shared/design/architecture.md) as a test: imports go downward only.

    cli                                   (the `kruise` command: may use everything)
    manager  webhook  daemon              (processes)      sandbox (a generic Kubernetes stand-in)
    control  kube                         (domain logic; talking to Kubernetes)
    api                                   (models, keys, defaults, validation)

`sandbox` imports nothing else of kruise, and `control` does no I/O: it is pure, so a reconciler's
decisions can be tested without a cluster and shared by the webhook and the manager.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

ALLOWED: dict[str, set[str]] = {
    "api": {"api"},
    "kube": {"api", "kube"},
    "control": {"api", "control"},
    "manager": {"api", "kube", "control", "manager"},
    "webhook": {"api", "kube", "control", "webhook"},
    "daemon": {"api", "kube", "control", "daemon"},
    "sandbox": {"sandbox"},
    "cli": {"api", "kube", "control", "manager", "webhook", "daemon", "sandbox", "cli"},
}

IO_MODULES = {"asyncio", "aiohttp", "httpx", "kubernetes_asyncio", "grpc", "socket", "subprocess", "requests"}


def _modules(layer: str) -> list[Path]:
    return sorted(p for p in (ROOT / layer).rglob("*.py") if "_pb2" not in p.name)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


def _kruise_layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "kruise" else None


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_imports_go_downward_only(layer: str) -> None:
    wrong = []
    for path in _modules(layer):
        for line, module in _imports(path):
            target = _kruise_layer(module)
            if target is not None and target not in ALLOWED[layer]:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not wrong, f"{layer} may import only {sorted(ALLOWED[layer])}:\n" + "\n".join(wrong)


def test_control_does_no_io() -> None:
    wrong = []
    for path in _modules("control"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for line, module in _imports(path):
            if module.split(".")[0] in IO_MODULES:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
        for node in ast.walk(tree):
            if isinstance(node, ast.AsyncFunctionDef | ast.Await):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno} is asynchronous")
    assert not wrong, "kruise.control is pure (no I/O, no awaiting):\n" + "\n".join(wrong)


def test_the_checker_sees_a_wrong_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("import os\nfrom kruise.manager.app import run\nimport kruise.sandbox.cluster\n")
    assert [_kruise_layer(m) for _, m in _imports(module)] == [None, "manager", "sandbox"]


def test_production_image_leaves_the_sandbox_out() -> None:
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    assert "COPY sandbox" not in dockerfile and "KRUISE_NO_SANDBOX=1" in dockerfile
    listing = subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup = lambda **kw: print(kw); import setup"],
        cwd=ROOT,
        env={**os.environ, "KRUISE_NO_SANDBOX": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    packages = listing.stdout
    assert "kruise.manager" in packages and "kruise.sandbox" not in packages


def test_the_cri_proto_is_defined_once() -> None:
    """kruise-daemon and the sandbox speak the same CRI subset; a second .proto would drift."""
    protos = []
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [name for name in subfolders if not name.startswith(".") and name != "build"]
        protos += [str((Path(folder) / name).relative_to(ROOT)) for name in files if name.endswith(".proto")]
    assert protos == ["daemon/cri/api.proto"]
