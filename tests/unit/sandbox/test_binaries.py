"""Which kubectl/helm the sandbox and the CLI run: the venv's pinned copy first, then PATH's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kruise.sandbox import binaries


def executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_copy_beside_the_interpreter_wins_over_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv_bin, elsewhere = tmp_path / "venv", tmp_path / "elsewhere"
    venv_bin.mkdir(), elsewhere.mkdir()
    beside = executable(venv_bin / "kubectl")
    executable(elsewhere / "kubectl")
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    monkeypatch.setenv("PATH", str(elsewhere))
    assert binaries.find_binary("kubectl") == str(beside)


def test_path_is_the_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = executable(tmp_path / "helm")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "novenv" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert binaries.find_binary("helm") == str(on_path)


def test_a_missing_tool_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="helm: not found next to the Python interpreter nor on PATH"):
        binaries.find_binary("helm")
