"""The one error a conversion raises: it names the field that could not be converted and why."""

from __future__ import annotations


class ConversionError(ValueError):
    """`field` is a dotted path in the object being converted (e.g. `spec.scaleStrategy.disablePVCReuse`)."""

    def __init__(self, field: str, rule: str) -> None:
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule
