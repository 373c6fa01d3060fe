"""Typed reads and moves on raw object dicts, shared by the per-kind converters.

Converters work on JSON dicts rather than on the pydantic models so that every field they do not
know about passes through untouched; these helpers check the shape of what they do touch and raise
a ConversionError naming the field when it is not what the schema promises.
"""

from __future__ import annotations

from typing import Any

from kruise.api.conversion.errors import ConversionError


def _type_name(value: object) -> str:
    return type(value).__name__


def child(parent: dict[str, Any], key: str, path: str) -> dict[str, Any] | None:
    """The object at `parent[key]`, None when absent or null; an error if it is not an object."""
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConversionError(f"{path}.{key}".lstrip("."), f"must be an object, got {_type_name(value)}")
    return value


def ensure_child(parent: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    """The object at `parent[key]`, created empty when absent."""
    value = child(parent, key, path)
    if value is None:
        value = parent[key] = {}
    return value


def boolean(parent: dict[str, Any], key: str, path: str) -> bool | None:
    value = parent.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise ConversionError(f"{path}.{key}", f"must be a boolean, got {value!r}")


def string(parent: dict[str, Any], key: str, path: str) -> str | None:
    value = parent.get(key)
    if value is None or isinstance(value, str):
        return value
    raise ConversionError(f"{path}.{key}", f"must be a string, got {value!r}")


def string_map(obj: dict[str, Any], key: str) -> dict[str, str] | None:
    """`metadata.labels` or `metadata.annotations`; every value must be a string."""
    meta = child(obj, "metadata", "")
    if meta is None:
        return None
    values = child(meta, key, "metadata")
    if values is None:
        return None
    for name, value in values.items():
        if not isinstance(value, str):
            raise ConversionError(f"metadata.{key}[{name}]", f"must be a string, got {value!r}")
    return values


def pop_meta(obj: dict[str, Any], key: str, name: str) -> str | None:
    """Remove `metadata.<key>[name]` and return its value; an emptied map is removed, as Go's
    omitempty would never serialise it."""
    values = string_map(obj, key)
    if values is None or name not in values:
        return None
    value = values.pop(name)
    if not values:
        del obj["metadata"][key]
    return value


def set_meta(obj: dict[str, Any], key: str, name: str, value: str) -> None:
    """Set `metadata.<key>[name]`, creating the metadata and the map when absent."""
    meta = ensure_child(obj, "metadata", "")
    ensure_child(meta, key, "metadata")[name] = value


def drop_if_empty(parent: dict[str, Any], key: str) -> None:
    """Remove `parent[key]` when it is an empty object, as omitempty on a pointer struct would."""
    if parent.get(key) == {}:
        del parent[key]


def rename(parent: dict[str, Any] | None, old: str, new: str) -> None:
    """Move `parent[old]` to `parent[new]`. A stray `new` key (unknown in the source version, so a
    typed conversion would never see it) is dropped, so the target holds only what `old` said."""
    if parent is None:
        return
    parent.pop(new, None)
    if old in parent:
        parent[new] = parent.pop(old)


def object_list(parent: dict[str, Any], key: str, path: str) -> list[dict[str, Any]]:
    """The list of objects at `parent[key]`; empty when absent or null; an error naming the item
    that is not an object."""
    value = parent.get(key)
    if value is None:
        return []
    field = f"{path}.{key}".lstrip(".")
    if not isinstance(value, list):
        raise ConversionError(field, f"must be a list, got {_type_name(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise ConversionError(f"{field}[{index}]", f"must be an object, got {_type_name(item)}")
    return value


def int32_map(parent: dict[str, Any], key: str, path: str) -> dict[str, int] | None:
    """A `map[string]int32` at `parent[key]`, None when absent or null."""
    values = child(parent, key, path)
    if values is None:
        return None
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConversionError(f"{path}.{key}[{name}]".lstrip("."), f"must be an integer, got {value!r}")
    return values


def integer(parent: dict[str, Any], key: str, path: str) -> int | None:
    value = parent.get(key)
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ConversionError(f"{path}.{key}", f"must be an integer, got {value!r}")
