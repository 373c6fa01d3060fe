"""The resourcesPolicy expression language and the Go-faithful quantity arithmetic under it."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.goquantity import BINARY_SI, DECIMAL_SI, Quantity, QuantityError
from kruise.api.resourceexpr import ExpressionError, Value, evaluate, go_g, tokenize

CPU = {"cpu": Value(quantity=Quantity.parse("200m")), "memory": Value(quantity=Quantity.parse("512Mi"))}


@pytest.mark.parametrize(
    ("text", "rendered", "fmt"),
    [
        ("100m", "100m", DECIMAL_SI),
        ("1Gi", "1Gi", BINARY_SI),
        ("1.5Gi", "1536Mi", BINARY_SI),
        ("0.1Mi", "104857600m", BINARY_SI),  # fractional bytes fall back to DecimalSI
        ("1000Mi", "1000Mi", BINARY_SI),
        ("512", "512", DECIMAL_SI),
        ("1500m", "1500m", DECIMAL_SI),
        ("2000m", "2", DECIMAL_SI),
        ("1e3", "1e3", "DecimalExponent"),
        ("0.0000000001", "1n", DECIMAL_SI),  # rounded up to nano, as Go rounds
        ("-100m", "-100m", DECIMAL_SI),
        ("0", "0", DECIMAL_SI),
    ],
)
def test_quantity_parse_and_render(text, rendered, fmt):
    quantity = Quantity.parse(text)
    assert str(quantity) == rendered
    assert quantity.format == fmt


@pytest.mark.parametrize("text", ["", "m", "abc"])
def test_quantity_format_errors(text):
    with pytest.raises(QuantityError, match="quantities must match the regular expression"):
        Quantity.parse(text)


@pytest.mark.parametrize("text", ["1e3Mi", "5x", "1Ei2", "1.2.3"])
def test_quantity_suffix_errors(text):
    with pytest.raises(QuantityError, match="unable to parse quantity's suffix"):
        Quantity.parse(text)


def test_add_to_zero_takes_the_other_format():
    assert str(Quantity.from_int(0).add(Quantity.parse("1Gi"))) == "1Gi"
    assert str(Quantity.parse("100Mi").add(Quantity.parse("200Mi"))) == "300Mi"
    # a non-zero receiver keeps its own format
    assert str(Quantity.parse("1").add(Quantity.parse("1023"))) == "1024"


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("max(cpu*50%, 50m)", "100m"),
        ("max(cpu*10%, 50m)", "50m"),
        ("min(cpu, 100m)", "100m"),
        ("cpu + 100m", "300m"),
        ("cpu - 50m", "150m"),
        ("cpu * 2", "400m"),
        ("2 * cpu", "400m"),
        ("cpu / 4", "50m"),
        ("cpu / 3", "66m"),  # milli value scaled as a float, truncated
        ("-cpu + 1", "800m"),
        ("(cpu + 100m) * 2", "600m"),
        ("memory * 2", "1Gi"),
        ("memory / 2", "256Mi"),
        ("memory / 3", "178956970666m"),
        ("min(memory, 100Mi)", "100Mi"),
        ("max(memory, 1Gi)", "1Gi"),
        ("memory + 1", "536870913"),  # 1 becomes 1000m; the BinarySI sum is whole, >= 1024
        ("2 + 3 * 4", "14"),
        ("(2 + 3) * 4", "20"),
        ("10 / 4", "2.5"),
        ("50%", "0.5"),
        (".5 + cpu", "700m"),
        ("1e3", "1000"),
        ("MAX(1, 2)", "2"),
        ("max(cpu, 1)", "1"),
        ("max(200m, cpu)", "200m"),
        ("5x * cpu", "0"),  # an unparsable number is 0: upstream drops that error
        ("  cpu\t*\n2 ", "400m"),
        ("--cpu", "200m"),
    ],
)
def test_evaluate(expression, expected):
    assert str(evaluate(expression, CPU)) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("cpu * cpu", "multiplication of two quantities"),
        ("cpu / cpu", "division by quantity"),
        ("cpu / 0", "division by zero"),
        ("4 / 0", "division by zero"),
        ("foo", "undefined variable: foo"),
        ("foo + bar", "undefined variable: bar"),  # the last semantic error is kept
        ("foo +", "undefined variable: foo"),  # and wins over a later syntax error
        ("cpu +", "parse error: syntax error at line 1, col 6"),
        ("(cpu", "parse error: syntax error at line 1, col 5"),
        ("cpu cpu", "parse error: syntax error at line 1, col 8"),
        ("max(1,2,3)", "parse error: syntax error at line 1, col 9"),
        ("cpu ^ 2", "parse error: syntax error at line 1, col 6"),
        ("", "parse error: syntax error at line 1, col 1"),
        ("max(1)", "max function requires exactly 2 arguments, got 1"),
        ("abs(1, 2)", "unknown function: abs"),
        ("max(foo, 1)", "undefined variable: foo"),
        ("cpu - 1", "calculation result is negative: -800m"),
        ("memory - 1Gi", "calculation result is negative: -512Mi"),
        ("1 - 2.5", "calculation result is negative: -1.5"),
        ("0 - 1234567", "calculation result is negative: -1.234567e+06"),
        ("1e3Mi", "unable to parse quantity's suffix"),
    ],
)
def test_evaluate_errors(expression, message):
    with pytest.raises(ExpressionError) as info:
        evaluate(expression, CPU)
    assert str(info.value) == message


def test_quantity_tokens_need_a_known_unit():
    kinds = [(t.kind, t.text) for t in tokenize("2Mi 2n 3 50% 4e2 x1")]
    assert kinds == [
        ("QUANTITY", "2Mi"),
        ("NUMBER", "2n"),
        ("NUMBER", "3"),
        ("NUMBER", "50%"),
        ("NUMBER", "4e2"),
        ("IDENT", "x1"),
        ("EOF", ""),
    ]


@pytest.mark.parametrize(
    ("number", "text"),
    [(0.5, "0.5"), (1e21, "1e+21"), (123456.0, "123456"), (1e-5, "1e-05"), (0.0001, "0.0001"), (-3.0, "-3")],
)
def test_go_g(number, text):
    assert go_g(number) == text


# --- properties ---

millis = st.integers(min_value=0, max_value=10**9)
mebis = st.integers(min_value=0, max_value=10**6)
cpu_texts = millis.map(lambda m: f"{m}m")
mem_texts = mebis.map(lambda m: f"{m}Mi")


@given(st.lists(st.one_of(cpu_texts, mem_texts), min_size=1, max_size=6))
def test_sum_is_exact_and_renders_back(texts):
    total = Quantity.from_int(0)
    for text in texts:
        total = total.add(Quantity.parse(text))
    assert total.value == sum(Quantity.parse(t).value for t in texts)
    assert Quantity.parse(str(total)).value == total.value


@given(millis, st.floats(min_value=0, max_value=100, allow_nan=False))
def test_scaling_truncates_the_milli_value(milli, factor):
    result = evaluate(
        "cpu * f", {"cpu": Value(quantity=Quantity.from_milli(milli)), "f": Value(number=factor)}
    )
    assert result.quantity is not None
    assert result.quantity.milli_value() == int(float(milli) * factor)


@given(cpu_texts, cpu_texts)
def test_max_min_pick_an_argument(a, b):
    variables = {"a": Value(quantity=Quantity.parse(a)), "b": Value(quantity=Quantity.parse(b))}
    high, low = evaluate("max(a, b)", variables).quantity, evaluate("min(a, b)", variables).quantity
    assert high is not None and low is not None
    assert {high.value, low.value} == {Quantity.parse(a).value, Quantity.parse(b).value}
    assert high.value >= low.value


@given(mem_texts, mem_texts)
def test_addition_of_binary_quantities_stays_binary_when_whole(a, b):
    result = evaluate(
        "memory + b", {"memory": Value(quantity=Quantity.parse(a)), "b": Value(quantity=Quantity.parse(b))}
    )
    assert result.quantity is not None
    expected = Decimal(int(a[:-2]) + int(b[:-2])) * 2**20
    assert result.quantity.value == expected
    assert Quantity.parse(str(result.quantity)).value == expected


@given(st.text(alphabet="cpumemoryax0123456789.%+-*/(), eMiGk", max_size=24))
def test_any_text_gives_a_value_or_an_expression_error(text):
    try:
        result = evaluate(text, CPU)
    except ExpressionError as exc:
        assert str(exc)
    else:
        assert result.number >= 0 and (result.quantity is None or result.quantity.value >= 0)
