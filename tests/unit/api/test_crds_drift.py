"""Each API set's CRD directory must be exactly what the models generate, every schema structural."""

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from kruise.api.apisets import API_SETS
from kruise.api.crdfiles import SET_DIRS, drift, rendered
from kruise.api.crdgen import structural_errors
from kruise.cli.main import app

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("api_set", API_SETS)
def test_crds_directory_matches_models(api_set):
    assert drift(REPO / SET_DIRS[api_set], api_set) == []


@pytest.mark.parametrize("api_set", API_SETS)
def test_every_generated_schema_is_structural(api_set):
    for name, text in rendered(api_set).items():
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
    # the directory holds the default (1.9) set, so checking it as 2.0 reports every file that differs
    result = runner.invoke(app, ["crds", "check", "--dir", str(out), "--api-set", "2.0"])
    assert result.exit_code == 1
    assert "apps.kruise.io_clonesets.yaml: differs from API set 2.0" in result.output
    (out / "stray.yaml").write_text("x: 1\n")
    result = runner.invoke(app, ["crds", "check", "--dir", str(out)])
    assert result.exit_code == 1
    assert "stray.yaml" in result.output


def test_cli_without_options_handles_both_sets(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["crds", "generate"]).exit_code == 0
    assert (tmp_path / "crds" / "apps.kruise.io_clonesets.yaml").exists()
    assert (tmp_path / "crds-2.0" / "apps.kruise.io_clonesets.yaml").exists()
    assert runner.invoke(app, ["crds", "check"]).exit_code == 0
    (tmp_path / "crds-2.0" / "apps.kruise.io_clonesets.yaml").unlink()
    result = runner.invoke(app, ["crds", "check"])
    assert result.exit_code == 1
    assert "crds-2.0/apps.kruise.io_clonesets.yaml: missing" in result.output


def test_cli_rejects_an_unknown_set(tmp_path):
    result = CliRunner().invoke(app, ["crds", "check", "--api-set", "3.0"])
    assert result.exit_code == 2
    assert 'Unsupported value: "3.0"' in result.output
