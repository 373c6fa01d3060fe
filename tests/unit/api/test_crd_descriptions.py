"""Every property of every checked-in CRD, in every version each API set serves, carries a description,
so `kubectl explain` has something to print (issue 26). A new field or kind comes with its docstrings."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
import yaml

from kruise.api.crdfiles import SET_DIRS

REPO = Path(__file__).resolve().parents[3]


def undescribed(schema: dict[str, Any], path: str) -> list[str]:
    """Paths of the properties under `schema` (through nested objects, array items and map values)
    that have no non-empty description."""
    missing: list[str] = []
    for name, sub in (schema.get("properties") or {}).items():
        where = f"{path}.{name}"
        if not str(sub.get("description") or "").strip():
            missing.append(where)
        missing.extend(undescribed(sub, where))
    if isinstance(schema.get("items"), dict):
        missing.extend(undescribed(schema["items"], f"{path}[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        missing.extend(undescribed(schema["additionalProperties"], f"{path}[*]"))
    return missing


@functools.cache
def crds() -> list[tuple[str, dict[str, Any]]]:
    """(file path relative to the repository, CRD) for every file of every API set's directory."""
    found: list[tuple[str, dict[str, Any]]] = []
    for directory in SET_DIRS.values():
        for path in sorted((REPO / directory).glob("*.yaml")):
            loaded = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            found.append((f"{directory}/{path.name}", loaded))
    return found


def gaps(crd: dict[str, Any]) -> list[str]:
    """Every undescribed property of a CRD, per served version, plus a missing root description."""
    missing = []
    for version in crd["spec"]["versions"]:
        schema = version["schema"]["openAPIV3Schema"]
        root = version["name"]
        if not str(schema.get("description") or "").strip():
            missing.append(f"{root} (the kind itself)")
        missing.extend(undescribed(schema, root))
    return missing


CRDS = crds()


@pytest.mark.parametrize(("where", "crd"), CRDS, ids=[where for where, _ in CRDS])
def test_every_property_has_a_description(where, crd):
    assert gaps(crd) == [], f"{where}: properties without a description (write the field's docstring)"


def test_both_api_sets_are_checked():
    directories = {where.split("/")[0] for where, _ in CRDS}
    assert directories == {str(directory) for directory in SET_DIRS.values()}


def test_the_walk_finds_gaps_in_items_and_maps():
    schema = {
        "type": "object",
        "properties": {
            "list": {
                "type": "array",
                "description": "d",
                "items": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
            "map": {
                "type": "object",
                "description": "d",
                "additionalProperties": {"type": "object", "properties": {"b": {"type": "string"}}},
            },
            "blank": {"type": "string", "description": "  "},
        },
    }
    assert undescribed(schema, "v1") == ["v1.list[].a", "v1.map[*].b", "v1.blank"]
