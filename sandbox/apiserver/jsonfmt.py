"""Render values the way Go's `%v`/`%q` formatting in apimachinery's field errors does."""

from __future__ import annotations

from typing import Any

import orjson


def go_value(value: Any) -> str:
    """Strings are quoted, numbers bare, bools lower-case, compound values as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, int | float):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if value is None:
        return "null"
    return orjson.dumps(value).decode()
