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
