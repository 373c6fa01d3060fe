"""The webhook's JSONPatch generator: applying its patch always yields the mutated object."""

from __future__ import annotations

import json

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kruise.webhook.patch import make_patch

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-2, 2, allow_nan=False)
    | st.text("ab/~", max_size=3)
)
_json = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("ab/~", max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)
_documents = st.dictionaries(st.text("ab/~", max_size=3), _json, max_size=5)


@settings(max_examples=300)
@given(_documents, _documents)
def test_patch_turns_original_into_mutated(original, mutated):
    patched = jsonpatch.apply_patch(original, make_patch(original, mutated))
    assert patched == mutated
    assert json.dumps(patched, sort_keys=True) == json.dumps(mutated, sort_keys=True)  # 1, 1.0, true differ


@pytest.mark.parametrize(
    ("original", "mutated", "ops"),
    [
        ({"a": 1}, {"a": 1}, []),
        ({"a": 1}, {"a": True}, [{"op": "replace", "path": "/a", "value": True}]),
        ({"a/b": {"~": 1}}, {"a/b": {}}, [{"op": "remove", "path": "/a~1b/~0"}]),
        (
            {"l": [1]},
            {"l": [1, 2, 3]},
            [{"op": "add", "path": "/l/1", "value": 2}, {"op": "add", "path": "/l/2", "value": 3}],
        ),
        ({"l": [1]}, {"l": [0, 1]}, [{"op": "replace", "path": "/l", "value": [0, 1]}]),
        # equal to Python's ==, not to JSON: found inside subtrees too
        (
            {"a": {"b": [1, {"c": 1}]}},
            {"a": {"b": [1, {"c": 1.0}]}},
            [{"op": "replace", "path": "/a/b/1/c", "value": 1.0}],
        ),
        ({"l": [{"v": 0}]}, {"l": [{"v": False}]}, [{"op": "replace", "path": "/l/0/v", "value": False}]),
        ({"a": {"x": 1, "y": 2}}, {"a": {"y": 2, "x": 1}}, []),  # key order is not a change
        ({"a": {"n": 2**70}}, {"a": {"n": 2**70}}, []),  # beyond what orjson encodes
        (
            {"a": {"n": [2**70, 1]}},
            {"a": {"n": [2**70, True]}},
            [{"op": "replace", "path": "/a/n/1", "value": True}],
        ),
    ],
)
def test_patch_shapes(original, mutated, ops):
    assert make_patch(original, mutated) == ops
