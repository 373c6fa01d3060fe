"""Seed YAML: every Kruise object in the user's tutorials (shared/reference/seeds), by kind."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

SEEDS = Path("/work/shared/reference/seeds")
if not SEEDS.exists():
    SEEDS = Path(__file__).resolve().parents[4] / "shared" / "reference" / "seeds"

_FENCE = re.compile(r"```[a-zA-Z]*\n(.*?)```", re.S)


def _is_whole_object(doc: object) -> bool:
    """A full manifest, not a fragment the prose shows (e.g. only metadata.annotations)."""
    return (
        isinstance(doc, dict)
        and "kruise.io/" in str(doc.get("apiVersion", ""))
        and "kind" in doc
        and "spec" in doc
    )


def load_seed_objects() -> list[dict[str, Any]]:
    """Kruise objects from every fenced block that parses as YAML (prose blocks are skipped)."""
    objects: list[dict[str, Any]] = []
    for path in sorted(SEEDS.glob("*.txt")) if SEEDS.exists() else []:
        for block in _FENCE.findall(path.read_text()):
            if "kruise.io/" not in block or "kind:" not in block:
                continue
            try:
                docs = list(yaml.safe_load_all(block))
            except yaml.YAMLError:
                continue
            for doc in docs:
                if _is_whole_object(doc):
                    objects.append(doc)
    return objects


def seed_objects_of(kind: str) -> list[dict[str, Any]]:
    return [obj for obj in load_seed_objects() if obj["kind"] == kind]


@pytest.fixture
def seeds_by_kind():
    return seed_objects_of
