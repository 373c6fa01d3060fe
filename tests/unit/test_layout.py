"""The import root maps every top-level folder, and the CLI entry point runs."""

import importlib

import pytest
from typer.testing import CliRunner

from kruise.cli.main import app

LAYERS = ["api", "kube", "control", "manager", "webhook", "daemon", "sandbox", "cli"]


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_from_its_folder(layer: str) -> None:
    module = importlib.import_module(f"kruise.{layer}")
    assert module.__file__ is not None
    assert f"/{layer}/__init__.py" in module.__file__.replace("\\", "/")


def test_cli_prints_version() -> None:
    result = CliRunner().invoke(app, ["version"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "0.1.0"


def test_every_console_script_resolves_to_a_callable():
    """A script whose module is missing would install fine and crash on first use."""
    import importlib
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    for name, target in pyproject["project"]["scripts"].items():
        module, _, attr = target.partition(":")
        assert callable(getattr(importlib.import_module(module), attr)), name


def test_test_module_basenames_are_unique() -> None:
    """pytest imports test modules of folders without `__init__.py` by basename: two `test_x.py` in
    different folders stop the whole session at collection (a targeted run of either never shows it)."""
    from collections import Counter
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    names = Counter(p.name for folder in ("tests", "e2e") for p in (root / folder).rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
