"""v1 Secret decoding: `stringData` is folded into `data` as base64 and never kept."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.apiserver import defaults
from kruise.sandbox.apiserver.errors import StatusError

keys = st.from_regex(r"[-._a-zA-Z0-9]{1,20}", fullmatch=True)


@given(
    data=st.dictionaries(
        keys, st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode()), max_size=4
    ),
    string_data=st.dictionaries(keys, st.text(max_size=40), max_size=4),
)
def test_string_data_overwrites_data_and_disappears(data, string_data):
    secret = {"metadata": {"name": "s"}, "data": dict(data), "stringData": dict(string_data)}
    defaults.secret(secret)
    assert "stringData" not in secret
    for key, value in string_data.items():
        assert base64.b64decode(secret["data"][key]).decode() == value
    for key in set(data) - set(string_data):
        assert secret["data"][key] == data[key]
    assert secret["type"] == "Opaque"


def test_null_value_is_an_empty_string_and_empty_string_data_adds_no_data():
    secret = {"metadata": {"name": "s"}, "stringData": {"a": None}}
    defaults.secret(secret)
    assert secret["data"] == {"a": ""}
    bare = {"metadata": {"name": "s"}, "stringData": {}}
    defaults.secret(bare)
    assert bare == {"metadata": {"name": "s"}, "type": "Opaque"}


@pytest.mark.parametrize(
    ("string_data", "message"),
    [
        ({"a": 1}, "cannot unmarshal number into Go struct field Secret.stringData of type string"),
        ({"a": True}, "cannot unmarshal bool into Go struct field Secret.stringData of type string"),
        (["a"], "cannot unmarshal array into Go struct field Secret.stringData of type map[string]string"),
    ],
)
def test_values_that_are_not_strings_are_a_bad_request(string_data, message):
    with pytest.raises(StatusError) as caught:
        defaults.secret({"metadata": {"name": "s"}, "stringData": string_data})
    assert caught.value.code == 400
    assert str(caught.value.status()["message"]).endswith(message)
    assert caught.value.status()["message"].startswith('Secret in version "v1" cannot be handled as a Secret')
