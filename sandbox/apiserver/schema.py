"""CRD structural schemas: pruning, defaulting and validation of custom objects.

Field errors are phrased like kube-openapi's validators as the apiserver surfaces them
(`spec.replicas in body should be greater than or equal to 0`), since users and tests read them.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from kruise.sandbox.apiserver.errors import field_error
from kruise.sandbox.apiserver.jsonfmt import go_value

_ROOT_META = ("apiVersion", "kind", "metadata")


@dataclass
class PruneResult:
    unknown: list[str] = field(default_factory=list)  # dotted paths of dropped fields


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def prune(obj: dict[str, Any], schema: dict[str, Any]) -> PruneResult:
    """Drop fields the schema does not declare (in place); report them for fieldValidation."""
    result = PruneResult()
    _prune(obj, schema, "", result, root=True)
    return result


def _prune(value: Any, schema: dict[str, Any], path: str, result: PruneResult, root: bool = False) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        for key in list(value):
            if (root or embedded) and key in _ROOT_META:
                if key == "metadata" and embedded and isinstance(value[key], dict):
                    for mk in list(value[key]):
                        if mk not in (
                            "name",
                            "namespace",
                            "labels",
                            "annotations",
                            "generateName",
                            "finalizers",
                        ):
                            del value[key][mk]
                continue
            if props is not None and key in props:
                _prune(value[key], props[key], _join(path, key), result)
            elif isinstance(addl, dict):
                _prune(value[key], addl, _join(path, key), result)
            elif addl is True or preserve:
                continue
            elif props is None and addl is None and not preserve:
                result.unknown.append(_join(path, key))
                del value[key]
            else:
                result.unknown.append(_join(path, key))
                del value[key]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _prune(item, schema["items"], f"{path}[{i}]", result)


def apply_defaults(value: Any, schema: dict[str, Any]) -> None:
    """Fill `default`s for absent properties, recursively (in place), like the structural defaulter."""
    if not isinstance(schema, dict):
        return
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key not in value and isinstance(sub, dict) and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                apply_defaults(value[key], sub)
        addl = schema.get("additionalProperties")
        if isinstance(addl, dict):
            for key in value:
                apply_defaults(value[key], addl)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])


_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


def _json_type(value: Any) -> str:
    for name in ("boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return "null"


def validate(obj: dict[str, Any], schema: dict[str, Any]) -> list[dict[str, str]]:
    """All field errors (causes) of `obj` against `schema`; empty when valid. Root metadata is skipped."""
    errors: list[dict[str, str]] = []
    props = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if key not in obj and key not in _ROOT_META:
            errors.append(field_error("FieldValueRequired", key))
    for key, value in obj.items():
        if key in _ROOT_META:
            continue
        if key in props:
            _validate(value, props[key], key, errors)
    return errors


def _validate(value: Any, schema: dict[str, Any], path: str, errors: list[dict[str, str]]) -> None:
    if not isinstance(schema, dict):
        return
    if value is None:
        if not schema.get("nullable"):
            kind = schema.get("type")
            if kind:
                errors.append(
                    field_error(
                        "FieldValueTypeInvalid",
                        path,
                        "null",
                        f'{path} in body must be of type {kind}: "null"',
                    )
                )
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))):
            errors.append(
                field_error(
                    "FieldValueTypeInvalid",
                    path,
                    value,
                    f'{path} in body must be of type integer,string: "{_json_type(value)}"',
                )
            )
            return
    else:
        kind = schema.get("type")
        if kind and kind in _TYPES and not _TYPES[kind](value):
            errors.append(
                field_error(
                    "FieldValueTypeInvalid",
                    path,
                    value,
                    f'{path} in body must be of type {kind}: "{_json_type(value)}"',
                )
            )
            return
    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(go_value(v) for v in schema["enum"])
        errors.append(field_error("FieldValueNotSupported", path, value, f"supported values: {supported}"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema:
            lo = schema["minimum"]
            if value < lo or (schema.get("exclusiveMinimum") and value == lo):
                op = "greater than" if schema.get("exclusiveMinimum") else "greater than or equal to"
                errors.append(
                    field_error(
                        "FieldValueInvalid", path, value, f"{path} in body should be {op} {go_value(lo)}"
                    )
                )
        if "maximum" in schema:
            hi = schema["maximum"]
            if value > hi or (schema.get("exclusiveMaximum") and value == hi):
                op = "less than" if schema.get("exclusiveMaximum") else "less than or equal to"
                errors.append(
                    field_error(
                        "FieldValueInvalid", path, value, f"{path} in body should be {op} {go_value(hi)}"
                    )
                )
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(
                field_error(
                    "FieldValueInvalid",
                    path,
                    value,
                    f"{path} in body should be at least {schema['minLength']} chars long",
                )
            )
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(
                field_error(
                    "FieldValueTooLong", path, value, f"may not be more than {schema['maxLength']} bytes"
                )
            )
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(
                field_error(
                    "FieldValueInvalid", path, value, f"{path} in body should match '{schema['pattern']}'"
                )
            )
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(
                field_error(
                    "FieldValueInvalid",
                    path,
                    len(value),
                    f"{path} in body should have at least {schema['minItems']} items",
                )
            )
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(
                {
                    "reason": "FieldValueTooMany",
                    "field": path,
                    "message": f"Too many: {len(value)}: must have at most {schema['maxItems']} items",
                }
            )
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                _validate(item, items, f"{path}[{i}]", errors)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        for key in schema.get("required") or []:
            if key not in value:
                errors.append(field_error("FieldValueRequired", _join(path, key)))
        for key, sub in value.items():
            if embedded and key in _ROOT_META:
                continue
            if key in props:
                _validate(sub, props[key], _join(path, key), errors)
            elif isinstance(schema.get("additionalProperties"), dict):
                _validate(sub, schema["additionalProperties"], _join(path, key), errors)
