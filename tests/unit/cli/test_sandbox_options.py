"""`kruise sandbox up` options that are refused before any cluster starts."""

from __future__ import annotations

from typer.testing import CliRunner

from kruise.cli.main import app


def test_via_helm_and_host_processes_exclude_each_other():
    result = CliRunner().invoke(app, ["sandbox", "up", "--via-helm", "--host-processes"], terminal_width=200)
    assert result.exit_code == 2
    assert "--via-helm and --host-processes exclude each other" in " ".join(
        result.output.replace("│", " ").split()
    )


def test_help_names_host_processes_and_hides_via_helm():
    result = CliRunner().invoke(app, ["sandbox", "up", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "--host-processes" in result.output
    assert "--via-helm" not in result.output


def test_an_unknown_api_set_is_refused_naming_the_flag():
    result = CliRunner().invoke(app, ["sandbox", "up", "--api-set", "1.8"], terminal_width=200)
    assert result.exit_code == 2
    assert '--api-set: Unsupported value: "1.8": supported values: "1.9", "2.0"' in " ".join(
        result.output.replace("│", " ").split()
    )
