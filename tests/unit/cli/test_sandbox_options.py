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


def test_fail_image_patterns_reach_the_sandbox(monkeypatch):
    seen = []

    async def fake_run_up(options, echo, stop=None):
        seen.append(options)

    monkeypatch.setattr("kruise.sandbox.up.run_up", fake_run_up)
    args = ["sandbox", "up", "--no-kruise", "--fail-image", "invalid.registry.k8s.io/*"]
    args += ["--fail-image", "*:bad"]
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert list(seen[0].fail_images) == ["invalid.registry.k8s.io/*", "*:bad"]
