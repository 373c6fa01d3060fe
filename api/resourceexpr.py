"""The expression language of SidecarSet `resourcesPolicy.resourcesExpr` (upstream `pkg/util/calculator`).

Expressions such as `max(cpu*50%, 50m)` combine plain numbers (`2`, `0.5`, `50%` = 0.5) and
quantities (`50m`, `100Mi`; only the suffixes m k M G T P Ki Mi Gi Ti Pi are quantities) with
`+ - * /`, unary minus, parentheses and the two-argument functions `max`/`min`; the variables
`cpu` / `memory` hold the aggregated app-container quantity. Mixing follows upstream:

- `+`/`-` with a quantity on either side turn a number into millis (`int64(n*1000)`, DecimalSI);
- `*`/`/` need one number: the quantity's milli value is scaled as a float and truncated;
  two quantities multiplied, a division by a quantity or by zero is an error;
- `max`/`min` compare as quantities when either side is one (ties keep the left argument);
- a negative final result is an error.

Like upstream's yacc parser, a semantic error (an undefined variable, `100m*2m`) does not stop the
parse: the last such error is reported, and wins over a later syntax error; a number that does not
parse (`5x`, `1e`) is 0, because upstream ignores that parse error.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from kruise.api.goquantity import DECIMAL_SI, Quantity, QuantityError

QUANTITY_UNITS = frozenset({"m", "k", "M", "G", "T", "P", "Ki", "Mi", "Gi", "Ti", "Pi"})
FUNCTIONS = ("max", "min")


class ExpressionError(ValueError):
    """The expression cannot be evaluated; the message is upstream's."""


@dataclass(frozen=True)
class Value:
    """A number or a quantity (upstream `calculator.Value`)."""

    number: float = 0.0
    quantity: Quantity | None = None

    @property
    def is_quantity(self) -> bool:
        return self.quantity is not None

    def __str__(self) -> str:
        return str(self.quantity) if self.quantity is not None else go_g(self.number)


def go_g(number: float) -> str:
    """Go's `%g` for a float64: shortest digits, exponent form below 1e-4 or from 1e6 up."""
    if math.isinf(number) or math.isnan(number):
        return {math.inf: "+Inf", -math.inf: "-Inf"}.get(number, "NaN")
    if number == 0:
        return "-0" if math.copysign(1, number) < 0 else "0"
    sign, digits, exponent = Decimal(repr(number)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)
    prefix = "-" if sign else ""
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{prefix}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{prefix}{text}{'0' * (point - len(text))}"
    return f"{prefix}{text[:point]}.{text[point:]}"


# --- lexer ---

_NUMBER, _QUANTITY, _IDENT, _EOF = "NUMBER", "QUANTITY", "IDENT", "EOF"


@dataclass(frozen=True)
class _Token:
    kind: str  # NUMBER, QUANTITY, IDENT, EOF, or the character itself
    text: str
    end: int  # index just past the token: upstream reports errors at column end+1


def _read_number(text: str, pos: int) -> int:
    """Digits, one dot, one exponent (sign only right after it), one percent, then letters as a unit."""
    seen_dot = seen_e = seen_percent = expect_digit = False
    while pos < len(text):
        char = text[pos]
        if char.isdecimal():
            expect_digit = False
        elif char == ".":
            if seen_dot or seen_e or seen_percent:
                break
            seen_dot = True
        elif char in "eE":
            if seen_e or seen_percent:
                break
            seen_e = expect_digit = True
        elif char in "+-":
            if not expect_digit:
                break
            expect_digit = False
        elif char == "%":
            if seen_percent:
                break
            seen_percent = True
        elif char.isalpha():
            if expect_digit:
                break
            while pos < len(text) and text[pos].isalpha():
                pos += 1
            break
        else:
            break
        pos += 1
    return pos


def _is_quantity(word: str) -> bool:
    end = next((i for i, c in enumerate(word) if not (c.isdecimal() or c in ".eE+-")), 0)
    return end > 0 and word[end:] in QUANTITY_UNITS


def tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            tokens.append(_Token(_EOF, "", pos))
            return tokens
        char = text[pos]
        if char.isdecimal() or char == ".":
            end = _read_number(text, pos)
            word = text[pos:end]
            tokens.append(_Token(_QUANTITY if _is_quantity(word) else _NUMBER, word, end))
        elif char.isalpha():
            end = pos
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            tokens.append(_Token(_IDENT, text[pos:end], end))
        else:
            end = pos + 1
            tokens.append(_Token(char, char, end))
        pos = end


# --- evaluation ---


def _parse_number(word: str) -> float:
    try:
        if word.endswith("%"):
            return float(word[:-1]) / 100
        return float(word)
    except ValueError:
        return 0.0  # upstream drops this parse error


def _as_quantity(value: Value) -> Quantity:
    if value.quantity is not None:
        return value.quantity
    return Quantity.from_milli(int(value.number * 1000), DECIMAL_SI)


def _scale(quantity: Quantity, factor: float, divide: bool) -> Quantity:
    milli = float(quantity.milli_value())
    return quantity.with_milli(int(milli / factor if divide else milli * factor))


class _Parser:
    """Recursive descent over upstream's grammar; values are None once something failed."""

    def __init__(self, text: str, variables: Mapping[str, Value]):
        self.tokens = tokenize(text)
        self.index = 0
        self.variables = {k.lower(): v for k, v in variables.items()}
        self.error: str | None = None  # the last semantic error, as upstream keeps it

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def take(self, kind: str | None = None) -> _Token:
        token = self.tokens[self.index]
        if kind is not None and token.kind != kind:
            raise _SyntaxError(token)
        if token.kind != _EOF:
            self.index += 1
        return token

    def fail(self, message: str) -> None:
        self.error = message

    def expr(self) -> Value | None:
        left = self.term()
        while self.peek().kind in ("+", "-"):
            op = self.take().kind
            right = self.term()
            left = self.add(left, right, op == "-")
        return left

    def term(self) -> Value | None:
        left = self.factor()
        while self.peek().kind in ("*", "/"):
            op = self.take().kind
            right = self.factor()
            left = self.div(left, right) if op == "/" else self.mul(left, right)
        return left

    def factor(self) -> Value | None:
        token = self.take()
        if token.kind == _NUMBER:
            return Value(number=_parse_number(token.text))
        if token.kind == _QUANTITY:
            try:
                return Value(quantity=Quantity.parse(token.text))
            except QuantityError as exc:
                self.fail(str(exc))
                return None
        if token.kind == _IDENT:
            if self.peek().kind == "(":
                return self.call(token.text)
            value = self.variables.get(token.text.lower())
            if value is None:
                self.fail(f"undefined variable: {token.text}")
            return value
        if token.kind == "(":
            value = self.expr()
            self.take(")")
            return value
        if token.kind == "-":
            value = self.factor()
            if value is None:
                return None
            if value.quantity is not None:
                return Value(quantity=value.quantity.neg())
            return Value(number=-value.number)
        raise _SyntaxError(token)

    def call(self, name: str) -> Value | None:
        self.take("(")
        args = [self.expr()]
        if self.peek().kind == ",":
            self.take()
            args.append(self.expr())
        self.take(")")
        result = self.function(name, args)
        if result is None and self.error is None:
            self.fail("function call failed")
        return result

    def function(self, name: str, args: list[Value | None]) -> Value | None:
        if name.lower() not in FUNCTIONS:
            self.fail(f"unknown function: {name}")
            return None
        if len(args) != 2:
            self.fail(f"{name.lower()} function requires exactly 2 arguments, got {len(args)}")
            return None
        left, right = args
        if left is None or right is None:
            return None
        pick_left_when = (lambda c: c >= 0) if name.lower() == "max" else (lambda c: c <= 0)
        if left.is_quantity or right.is_quantity:
            lq, rq = _as_quantity(left), _as_quantity(right)
            return Value(quantity=lq if pick_left_when(lq.cmp(rq)) else rq)
        diff = (left.number > right.number) - (left.number < right.number)
        return left if pick_left_when(diff) else right

    def add(self, left: Value | None, right: Value | None, subtract: bool) -> Value | None:
        if left is None or right is None:
            if self.error is None:
                self.fail(f"invalid {'subtraction' if subtract else 'addition'} operation")
            return None
        if left.is_quantity or right.is_quantity:
            other = _as_quantity(right)
            return Value(quantity=_as_quantity(left).add(other.neg() if subtract else other))
        return Value(number=left.number - right.number if subtract else left.number + right.number)

    def mul(self, left: Value | None, right: Value | None) -> Value | None:
        if left is None or right is None:
            if self.error is None:
                self.fail("invalid multiplication operation")
            return None
        if left.quantity is not None and right.quantity is not None:
            self.fail("multiplication of two quantities")
            return None
        if left.quantity is not None:
            return Value(quantity=_scale(left.quantity, right.number, divide=False))
        if right.quantity is not None:
            return Value(quantity=_scale(right.quantity, left.number, divide=False))
        return Value(number=left.number * right.number)

    def div(self, left: Value | None, right: Value | None) -> Value | None:
        if left is None or right is None:
            if self.error is None:
                self.fail("invalid division operation")
            return None
        if right.quantity is not None:
            self.fail("division by quantity")
            return None
        if right.number == 0:
            self.fail("division by zero")
            return None
        if left.quantity is not None:
            return Value(quantity=_scale(left.quantity, right.number, divide=True))
        return Value(number=left.number / right.number)


class _SyntaxError(Exception):
    def __init__(self, token: _Token):
        super().__init__(f"parse error: syntax error at line 1, col {token.end + 1}")


def evaluate(expression: str, variables: Mapping[str, Value] | None = None) -> Value:
    """The value of `expression`; raises ExpressionError with upstream's message."""
    parser = _Parser(expression, variables or {})
    try:
        result = parser.expr()
        parser.take(_EOF)
    except _SyntaxError as exc:
        raise ExpressionError(parser.error or str(exc)) from None
    if result is None:
        raise ExpressionError(parser.error or "no result from parser")
    negative = result.quantity.value < 0 if result.quantity is not None else result.number < 0
    if negative:
        raise ExpressionError(f"calculation result is negative: {result}")
    return result
