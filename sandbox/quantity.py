"""Kubernetes resource quantities as numbers, shared by the API emulator and the simulator.

Only comparison and sums matter (the scheduler's and kubelet's fit checks, the apiserver's
semantic equality of resource lists), so a quantity becomes a Decimal of base units; suffixes
follow apimachinery's resource.Quantity.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIXES = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}
_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")


def parse_quantity(value: str | int | float) -> Decimal:
    """``"500m"`` -> 0.5, ``"1Gi"`` -> 1073741824; raises ValueError naming the bad quantity."""
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.match(str(value).strip())
    if not match or match.group(2) not in _SUFFIXES:
        raise ValueError(f"quantities must match the regular expression, got {value!r}")
    number, suffix = match.groups()
    if suffix and ("e" in number.lower()):
        raise ValueError(f"quantities must match the regular expression, got {value!r}")
    try:
        return Decimal(number) * _SUFFIXES[suffix]
    except InvalidOperation as error:
        raise ValueError(f"quantities must match the regular expression, got {value!r}") from error


def amount(value: object) -> Decimal | None:
    """A quantity in base units, or None when it does not parse (for semantic comparison)."""
    if value is None:
        return None
    try:
        return parse_quantity(value)  # type: ignore[arg-type]
    except ValueError:
        return None


def milli(value: str | int | float) -> int:
    """A quantity in thousandths, rounded up (the scheduler's MilliValue)."""
    scaled = parse_quantity(value) * 1000
    return int(scaled.to_integral_value(rounding="ROUND_CEILING"))


def whole(value: str | int | float) -> int:
    """A quantity in base units, rounded up (the scheduler's Value)."""
    return int(parse_quantity(value).to_integral_value(rounding="ROUND_CEILING"))
