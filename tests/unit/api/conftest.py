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


def _is_kruise_doc(doc: object) -> bool:
    return isinstance(doc, dict) and "kruise.io/" in str(doc.get("apiVersion", "")) and "kind" in doc


def _is_whole_object(doc: dict[str, Any]) -> bool:
    """A full manifest, not a fragment the prose shows as a patch (no name, or no spec)."""
    return "spec" in doc and bool((doc.get("metadata") or {}).get("name"))


def merge_patch(base: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as `kubectl patch --type merge` applies a fragment."""
    if not isinstance(patch, dict):
        return patch
    out = dict(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def load_seed_docs() -> list[dict[str, Any]]:
    """Kruise documents from every fenced block that parses as YAML (prose blocks are skipped)."""
    objects: list[dict[str, Any]] = []
    for path in sorted(SEEDS.glob("*.txt")) if SEEDS.exists() else []:
        for block in _FENCE.findall(path.read_text()):
            if "kruise.io/" not in block or "kind:" not in block:
                continue
            try:
                docs = list(yaml.safe_load_all(block))
            except yaml.YAMLError:
                continue
            objects.extend(doc for doc in docs if _is_kruise_doc(doc))
    return objects


def load_seed_objects() -> list[dict[str, Any]]:
    return [doc for doc in load_seed_docs() if _is_whole_object(doc)]


def seed_fragments_of(kind: str) -> list[dict[str, Any]]:
    """Fragments the tutorials apply as patches, each merged onto the kind's first whole example."""
    wholes = seed_objects_of(kind)
    if not wholes:
        return []
    return [
        merge_patch(wholes[0], {k: v for k, v in doc.items() if k != "apiVersion"})
        for doc in load_seed_docs()
        if doc["kind"] == kind and not _is_whole_object(doc)
    ]


def seed_objects_of(kind: str) -> list[dict[str, Any]]:
    return [obj for obj in load_seed_objects() if obj["kind"] == kind]


@pytest.fixture
def seeds_by_kind():
    """seeds_by_kind(kind) -> whole manifests; patch fragments are merged onto the first one."""

    def both(kind: str) -> list[dict[str, Any]]:
        return seed_objects_of(kind) + seed_fragments_of(kind)

    return both
