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


def _flat(output: str) -> str:
    return " ".join(output.replace("│", " ").split())


def test_kruise_image_needs_the_containerd_runtime(tmp_path):
    result = CliRunner().invoke(app, ["sandbox", "up", "--kruise-image", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 2
    assert "--kruise-image" in _flat(result.output) and "needs --runtime containerd" in _flat(result.output)


def test_kruise_image_excludes_host_processes(tmp_path):
    args = ["sandbox", "up", "--runtime", "containerd", "--host-processes", "--kruise-image", str(tmp_path)]
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 2
    assert "it excludes --host-processes" in _flat(result.output)


def test_kruise_image_that_is_no_layout_is_refused_before_anything_starts(tmp_path, monkeypatch):
    async def must_not_start(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sandbox started with an unreadable image")

    monkeypatch.setattr("kruise.sandbox.up.run_up", must_not_start)
    args = ["sandbox", "up", "--runtime", "containerd", "--kruise-image", str(tmp_path / "absent")]
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 2
    assert "must be an OCI image layout directory or an OCI archive" in _flat(result.output)


def test_kruise_image_installs_the_chart_with_the_layouts_tag(tmp_path, monkeypatch):
    import sys
    from pathlib import Path

    from kruise.sandbox.realnode import oci, prereqs

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "docker"))
    import image as make_image

    built = oci.build_image([oci.Layer.of([oci.file("x", "y")])], oci.ImageConfig())
    make_image.write_layout(built, "7.7.7", tmp_path / "oci", tmp_path / "a.tar")
    monkeypatch.setattr(prereqs, "missing", lambda which: [])
    seen = []

    async def fake_run_up(options, echo, stop=None):
        seen.append(options)

    monkeypatch.setattr("kruise.sandbox.up.run_up", fake_run_up)
    args = ["sandbox", "up", "--runtime", "containerd", "--kruise-image", str(tmp_path / "oci")]
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    pushed, release = seen[0].components
    assert pushed.reference == "kruise-py:7.7.7" and pushed.layout.image.digest == built.digest
    assert release.image_tag == "7.7.7" and not seen[0].install_crds  # the chart installs them


def test_a_missing_apply_path_is_refused_naming_the_flag(tmp_path):
    missing = tmp_path / "nope.yaml"
    result = CliRunner().invoke(app, ["sandbox", "up", "--apply", str(missing)], terminal_width=400)
    assert result.exit_code == 2
    assert "--apply" in _flat(result.output) and "no such file or directory" in _flat(result.output)


def test_apply_paths_reach_the_sandbox_in_order(monkeypatch, tmp_path):
    seen = []

    async def fake_run_up(options, echo, stop=None):
        seen.append(options)

    monkeypatch.setattr("kruise.sandbox.up.run_up", fake_run_up)
    (tmp_path / "a.yaml").write_text("")
    (tmp_path / "dir").mkdir()
    args = [
        "sandbox",
        "up",
        "--no-kruise",
        "--apply",
        str(tmp_path / "dir"),
        "--apply",
        str(tmp_path / "a.yaml"),
    ]
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert list(seen[0].manifests) == [tmp_path / "dir", tmp_path / "a.yaml"]
