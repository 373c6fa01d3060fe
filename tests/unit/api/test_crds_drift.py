"""crds/ must be exactly what the models generate, and every generated schema must be structural."""

from pathlib import Path

import yaml
from typer.testing import CliRunner

from kruise.api.crdfiles import drift, rendered
from kruise.api.crdgen import structural_errors
from kruise.cli.main import app

REPO = Path(__file__).resolve().parents[3]


def test_crds_directory_matches_models():
    assert drift(REPO / "crds") == []


def test_every_generated_schema_is_structural():
    for name, text in rendered().items():
        crd = yaml.safe_load(text)
        for version in crd["spec"]["versions"]:
            assert structural_errors(version["schema"]["openAPIV3Schema"]) == [], (name, version["name"])
        assert sum(1 for v in crd["spec"]["versions"] if v["storage"]) == 1, name


def test_cli_generate_then_check(tmp_path):
    runner = CliRunner()
    out = tmp_path / "crds"
    result = runner.invoke(app, ["crds", "generate", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(app, ["crds", "check", "--dir", str(out)]).exit_code == 0
    (out / "stray.yaml").write_text("x: 1\n")
    result = runner.invoke(app, ["crds", "check", "--dir", str(out)])
    assert result.exit_code == 1
    assert "stray.yaml" in result.output
