"""IntOrString arithmetic, selectors and the base model's wire behaviour."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.common import (
    IntOrStringError,
    KruiseModel,
    LabelSelector,
    ObjectMeta,
    scaled_value,
    scaled_value_round_down,
    scaled_value_round_up,
    selector_matches,
    selector_to_string,
)


@pytest.mark.parametrize(
    ("value", "total", "up", "expected"),
    [
        (5, 10, True, 5),
        ("50%", 5, True, 3),
        ("50%", 5, False, 2),
        ("20%", 10, True, 2),
        ("0%", 10, True, 0),
        ("100%", 7, False, 7),
        ("33%", 10, True, 4),
        ("33%", 10, False, 3),
        ("+10%", 10, True, 1),
        ("-10%", 10, True, -1),
    ],
)
def test_scaled_value_table(value, total, up, expected):
    assert scaled_value(value, total, up) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("5", "invalid value for IntOrString: invalid type: string is not a percentage"),
        (
            "abc%",
            'invalid value for IntOrString: invalid value "abc%": '
            'strconv.Atoi: parsing "abc": invalid syntax',
        ),
        (
            " 5%",
            'invalid value for IntOrString: invalid value " 5%": strconv.Atoi: parsing " 5": invalid syntax',
        ),
        (
            "1_0%",
            'invalid value for IntOrString: invalid value "1_0%": '
            'strconv.Atoi: parsing "1_0": invalid syntax',
        ),
        (None, "nil value for IntOrString"),
    ],
)
def test_scaled_value_errors(value, message):
    with pytest.raises(IntOrStringError) as exc:
        scaled_value(value, 10, True)
    assert str(exc.value) == message


@given(st.integers(min_value=0, max_value=1000), st.integers(min_value=0, max_value=100000))
def test_percent_rounding_brackets_exact_value(percent, total):
    up = scaled_value_round_up(f"{percent}%", total)
    down = scaled_value_round_down(f"{percent}%", total)
    exact = percent * total / 100
    assert down <= exact <= up
    assert up - down in (0, 1)
    assert up == math.ceil(float(percent) * float(total) / 100)
    if (percent * total) % 100 == 0:
        assert up == down == percent * total // 100


@given(st.integers(min_value=-(2**31), max_value=2**31), st.integers(min_value=0, max_value=10**6))
def test_ints_are_not_scaled(value, total):
    assert scaled_value_round_up(value, total) == value
    assert scaled_value_round_down(value, total) == value


def test_selector_matching_rules():
    sel = LabelSelector.model_validate(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["a", "b"]},
                {"key": "skip", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel.matches({"app": "web", "tier": "a"})
    assert not sel.matches({"app": "web", "tier": "c"})
    assert not sel.matches({"app": "web", "tier": "a", "skip": "1"})
    assert not sel.matches({"tier": "a"})
    assert LabelSelector().matches({"x": "y"})
    assert not selector_matches(None, {"x": "y"})
    notin = LabelSelector.model_validate(
        {"matchExpressions": [{"key": "k", "operator": "NotIn", "values": ["v"]}]}
    )
    assert notin.matches({}) and notin.matches({"k": "w"}) and not notin.matches({"k": "v"})
    exists = LabelSelector.model_validate({"matchExpressions": [{"key": "k", "operator": "Exists"}]})
    assert exists.matches({"k": ""}) and not exists.matches({})
    with pytest.raises(ValueError, match="not a valid label selector operator"):
        LabelSelector.model_validate({"matchExpressions": [{"key": "k", "operator": "Gt"}]}).matches({})


def test_selector_string():
    sel = LabelSelector.model_validate(
        {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "c", "operator": "Exists"}]}
    )
    assert selector_to_string(sel) == "a=1,b=2,c"


class _Inner(KruiseModel):
    max_unavailable: int | None = None


class _Outer(KruiseModel):
    update_strategy: _Inner | None = None
    min_ready_seconds: int | None = None


def test_round_trip_keeps_user_shape_and_prunes_unknown():
    data = {"updateStrategy": {}, "unknownField": 1}
    model = _Outer.model_validate(data)
    assert model.to_dict() == {"updateStrategy": {}}
    model.min_ready_seconds = 0
    assert model.to_dict() == {"updateStrategy": {}, "minReadySeconds": 0}
    assert _Outer(min_ready_seconds=3).to_dict() == {"minReadySeconds": 3}


def test_object_meta_keeps_unknown_fields():
    meta = ObjectMeta.model_validate({"name": "a", "managedFields": [{"manager": "kubectl"}]})
    assert meta.to_dict() == {"name": "a", "managedFields": [{"manager": "kubectl"}]}
