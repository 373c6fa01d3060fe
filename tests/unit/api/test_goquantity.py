"""Quantity values as manifests hold them (strings and JSON numbers) and Go's rounding accessors."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.goquantity import Quantity, QuantityError


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("500m", Decimal("0.5")),
        ("1Gi", Decimal(2**30)),
        ("2", Decimal(2)),
        ("1.5k", Decimal(1500)),
        ("1e3", Decimal(1000)),
        ("1E-3", Decimal("0.001")),
        (".5", Decimal("0.5")),
        (" 3 ", Decimal(3)),  # UnmarshalJSON trims the text before parsing it
        (3, Decimal(3)),
        (0.25, Decimal("0.25")),
        (1e-05, Decimal("0.00001")),
    ],
)
def test_of_reads_strings_and_json_numbers(raw, value):
    assert Quantity.of(raw).value == value


@pytest.mark.parametrize("raw", ["abc", "1Qi", "", "--1", "1 Gi"])
def test_of_refuses_text_that_is_no_quantity(raw):
    with pytest.raises(QuantityError):
        Quantity.of(raw)


@pytest.mark.parametrize("raw", [True, None, [1], {"cpu": 1}])
def test_of_refuses_other_types_naming_value_and_type(raw):
    with pytest.raises(QuantityError, match=r"quantity .*must be a string or a number, not"):
        Quantity.of(raw)


@pytest.mark.parametrize(
    ("raw", "milli", "whole"),
    [
        ("1", 1000, 1),
        ("0.0001", 1, 1),
        ("1.5", 1500, 2),
        ("1Ki", 1024000, 1024),
        ("-1.5", -1500, -1),  # ceiling, as Go's ScaledValue
        ("0", 0, 0),
    ],
)
def test_milli_and_whole_values_round_up(raw, milli, whole):
    quantity = Quantity.of(raw)
    assert quantity.milli_value() == milli
    assert quantity.whole_value() == whole


@given(st.integers(min_value=-(2**62), max_value=2**62), st.sampled_from(["", "k", "M", "Ki", "Mi", "m"]))
def test_a_rendered_quantity_parses_back_to_the_same_value(number, suffix):
    quantity = Quantity.of(f"{number}{suffix}")
    again = Quantity.of(str(quantity))
    assert again.value == quantity.value
