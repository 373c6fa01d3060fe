"""Check an object against a structural CRD schema the way the apiserver would.

Reports type mismatches and missing required fields as errors, and fields the apiserver would
silently prune as a separate list — a pruned field in a user's YAML means our schema lost it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


@dataclass
class SchemaReport:
    errors: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and not self.pruned


def check(
    value: Any, schema: dict[str, Any], path: str = "", report: SchemaReport | None = None
) -> SchemaReport:
    report = report if report is not None else SchemaReport()
    if value is None:
        return report
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, int | str):
            report.errors.append(f"{path}: Invalid value: must be an integer or a string")
        return report
    typ = schema.get("type")
    if typ:
        expected = _TYPES[typ]
        if not isinstance(value, expected) or (typ in ("integer", "number") and isinstance(value, bool)):
            report.errors.append(f"{path}: Invalid value: must be of type {typ}")
            return report
    if isinstance(value, dict):
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        for name in schema.get("required") or []:
            if name not in value:
                report.errors.append(f"{path}.{name}: Required value".lstrip("."))
        for key, sub in value.items():
            sub_path = f"{path}.{key}" if path else key
            if props and key in props:
                check(sub, props[key], sub_path, report)
            elif isinstance(additional, dict):
                check(sub, additional, sub_path, report)
            elif not preserve and typ == "object" and path != "metadata":
                report.pruned.append(sub_path)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            check(item, schema["items"], f"{path}[{i}]", report)
    return report
