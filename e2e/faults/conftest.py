"""The fault suite's marker follows its directory, as e2e's does (tests/conftest.py): `-m fault` selects
e2e/faults whether pytest starts from the repository root or from this folder, with no marker to forget in
a new scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.fault)
