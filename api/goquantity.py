"""A resource quantity that does arithmetic the way apimachinery's `resource.Quantity` does.

SidecarSet `resourcesPolicy` computes sidecar resources from the app containers' quantities, and
the numbers it writes into pods must be the ones upstream writes: the value is an exact decimal
(rounded up to nano units, as Go rounds), the format (DecimalSI, BinarySI, DecimalExponent) travels
with it through `add` (a zero receiver takes the other's format), `set_milli` truncates as Go's
int64 conversion does, and `str()` is Go's canonical rendering.
"""

from __future__ import annotations

import decimal
import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_CONTEXT = decimal.Context(prec=80)
_NANO = Decimal("1e-9")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIX = {e: s for s, e in _DECIMAL.items()}
_NUMBER = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$")
_EXPONENT = re.compile(r"^[eE]([+-]?[0-9]+)$")
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_WRONG = "unable to parse quantity's suffix"


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity; the message is apimachinery's."""


@dataclass(frozen=True)
class Quantity:
    """An exact value in base units (cores, bytes) plus the format it renders in."""

    value: Decimal
    format: str = DECIMAL_SI

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """`resource.ParseQuantity`: sign, digits with an optional fraction, then one suffix."""
        match = _NUMBER.match(text.strip() if text else "")
        if not text or match is None or not (match.group(2) or match.group(3)):
            raise QuantityError(FORMAT_WRONG)
        sign, whole, fraction, suffix = match.groups()
        number = Decimal(f"{sign}{whole or '0'}.{fraction or '0'}", context=_CONTEXT)
        if suffix in _BINARY:
            value, fmt = number * (Decimal(2) ** _BINARY[suffix]), BINARY_SI
        elif suffix in _DECIMAL:
            value, fmt = number.scaleb(_DECIMAL[suffix], context=_CONTEXT), DECIMAL_SI
        elif (exponent := _EXPONENT.match(suffix)) is not None:
            value, fmt = number.scaleb(int(exponent.group(1)), context=_CONTEXT), DECIMAL_EXPONENT
        else:
            raise QuantityError(SUFFIX_WRONG)
        return cls(_round_nano(value), fmt)

    @classmethod
    def from_milli(cls, milli: int, fmt: str = DECIMAL_SI) -> Quantity:
        """`resource.NewMilliQuantity`."""
        return cls(Decimal(milli).scaleb(-3, context=_CONTEXT), fmt)

    @classmethod
    def from_int(cls, value: int, fmt: str = DECIMAL_SI) -> Quantity:
        """`resource.NewQuantity`."""
        return cls(Decimal(value), fmt)

    def milli_value(self) -> int:
        """`MilliValue`: thousandths, rounded up."""
        return int((self.value * 1000).to_integral_value(rounding=ROUND_CEILING))

    def with_milli(self, milli: int) -> Quantity:
        """`SetMilli`: a new value, same format."""
        return Quantity(Decimal(milli).scaleb(-3, context=_CONTEXT), self.format)

    def add(self, other: Quantity) -> Quantity:
        """`Add`: the receiver's format, unless it is zero (then the other's)."""
        fmt = other.format if self.value == 0 else self.format
        return Quantity(self.value + other.value, fmt)

    def neg(self) -> Quantity:
        return Quantity(-self.value, self.format)

    def cmp(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def is_zero(self) -> bool:
        return self.value == 0

    def __str__(self) -> str:
        """`String()`: zero is "0"; BinarySI below 1024 or fractional falls back to DecimalSI; an
        unknown format (the zero Quantity's) renders as DecimalExponent, as Go does."""
        if self.value == 0:
            return "0"
        sign = "-" if self.value < 0 else ""
        value = abs(self.value)
        fmt = self.format if self.format in (DECIMAL_SI, BINARY_SI) else DECIMAL_EXPONENT
        if fmt == BINARY_SI:
            if value >= 1024 and value == value.to_integral_value():
                whole, index = int(value), 0
                while whole % 1024 == 0 and index < len(_BINARY_SUFFIXES) - 1:
                    whole, index = whole // 1024, index + 1
                return f"{sign}{whole}{_BINARY_SUFFIXES[index]}"
            fmt = DECIMAL_SI
        exponent = -9
        while exponent < 18:
            shifted = value.scaleb(-(exponent + 3), context=_CONTEXT)
            if shifted != shifted.to_integral_value():
                break
            exponent += 3
        mantissa = int(value.scaleb(-exponent, context=_CONTEXT))
        if fmt == DECIMAL_EXPONENT:
            return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
        return f"{sign}{mantissa}{_DECIMAL_SUFFIX[exponent]}"


ZERO = Quantity(Decimal(0), "")
"""Go's zero `resource.Quantity{}` (no format): what a missing map entry reads as."""


def _round_nano(value: Decimal) -> Decimal:
    """Go keeps at most nano precision, rounding away from zero."""
    scaled = value / _NANO
    if scaled == scaled.to_integral_value():
        return value
    rounded = abs(scaled).to_integral_value(rounding=ROUND_CEILING)
    return (rounded if value > 0 else -rounded) * _NANO
