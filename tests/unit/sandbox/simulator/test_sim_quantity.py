import pytest

from kruise.sandbox.quantity import milli, parse_quantity, whole


@pytest.mark.parametrize(
    ("text", "millis"),
    [("1", 1000), ("500m", 500), ("0.25", 250), ("1k", 1_000_000), ("100u", 1), (2, 2000)],
)
def test_milli(text, millis):
    assert milli(text) == millis


@pytest.mark.parametrize(
    ("text", "value"), [("1Gi", 2**30), ("128Mi", 128 * 2**20), ("1G", 10**9), ("1e3", 1000)]
)
def test_whole(text, value):
    assert whole(text) == value


@pytest.mark.parametrize("bad", ["", "1x", "abc", "1.5e3Mi"])
def test_bad_quantities_name_the_value(bad):
    with pytest.raises(ValueError, match="quantities must match"):
        parse_quantity(bad)
