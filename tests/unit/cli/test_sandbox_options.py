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


def test_an_unknown_runtime_is_refused_naming_the_choices():
    result = CliRunner().invoke(app, ["sandbox", "up", "--runtime", "podman"], terminal_width=200)
    assert result.exit_code == 2
    text = " ".join(result.output.replace("│", " ").split())
    assert "--runtime" in text and "must be fake or containerd, got 'podman'" in text


def test_containerd_without_its_packages_names_the_apt_get_line(monkeypatch):
    from kruise.sandbox.realnode import prereqs

    monkeypatch.setattr(prereqs, "missing", lambda which: list(prereqs.REQUIREMENTS))

    async def must_not_start(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sandbox started although prerequisites are missing")

    monkeypatch.setattr("kruise.sandbox.up.run_up", must_not_start)
    result = CliRunner().invoke(app, ["sandbox", "up", "--runtime", "containerd"], terminal_width=200)
    assert result.exit_code == 1
    assert "apt-get install -y containerd runc containernetworking-plugins" in result.output


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
