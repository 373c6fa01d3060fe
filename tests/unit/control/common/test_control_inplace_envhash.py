"""The env-from-metadata hash is upstream's to the bit (pkg/util/containermeta/env_hash.go).

Upstream ships no test vectors for it (its env_hash_test.go only compares two hashes), so the expected
numbers below were derived by hand from its algorithm, independently of kruise-py's code: write out the
bytes Go's ``json.Marshal`` gives for the ``[]v1.EnvVar`` the hasher builds (``{"name","value"}`` in struct
order, ``value`` omitted when empty by ``omitempty``, ``null`` for a nil slice, ``<`` escaped as
``\\u003c``), render them as ``hashutil.DeepHashObject`` feeds spew's ``%#v`` of a ``[]byte`` —
``([]uint8)[91 123 ...]``, the decimal bytes space-separated — and run FNV-1a 32 over that rendering. The
spew rendering is the one whose values kruise-py's volumeClaimTemplates hash already matches against
upstream's own vectors (tests/unit/control/cloneset/test_control_cloneset_vcthash.py).
"""

from __future__ import annotations

import pytest

from kruise.control.common.inplace import envhash


def env_ref(name: str, path: str) -> dict:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


TEST_ENV = {"name": "main", "env": [env_ref("TEST_ENV", "metadata.annotations['test-env']")]}


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({"test-env": "foo"}, 27323935),  # [{"name":"TEST_ENV","value":"foo"}]
        ({"test-env": "bar"}, 3944769931),  # [{"name":"TEST_ENV","value":"bar"}]
        ({}, 1647751841),  # [{"name":"TEST_ENV"}]: an absent key is "", which omitempty drops
    ],
)
def test_expected_hash_matches_upstream(annotations: dict, expected: int) -> None:
    assert envhash.expected_hash(TEST_ENV, {"annotations": annotations}) == expected


def test_no_metadata_env_hashes_a_nil_slice() -> None:
    plain = {"name": "main", "env": [{"name": "A", "value": "x"}, env_ref("N", "metadata.name")]}
    assert envhash.expected_hash(plain, {}) == 86995377  # json.Marshal of a nil slice: null
    assert envhash.current_hash(plain, lambda _: "never read") == 86995377


def test_sorted_by_name_and_html_escaped_as_go() -> None:
    container = {
        "env": [
            env_ref("z", "metadata.labels['l']"),
            {"name": "e1", "value": "a"},  # a literal value is not read from metadata
            env_ref("e2", "metadata.annotations['a']"),
            env_ref("SIDECARSET_VERSION", "metadata.annotations['v']"),  # excluded as upstream
        ]
    }
    metadata = {"labels": {"l": "a<b"}, "annotations": {"a": "foo", "v": "2"}}
    # [{"name":"e2","value":"foo"},{"name":"z","value":"a\u003cb"}]
    assert envhash.expected_hash(container, metadata) == 2984655840


def test_current_hash_reads_values_the_container_has() -> None:
    values = {"TEST_ENV": "foo"}
    assert envhash.current_hash(TEST_ENV, values.__getitem__) == 27323935


def test_subscript_split_is_upstreams() -> None:
    assert envhash.split_subscripted_path("metadata.labels['a']") == ("metadata.labels", "a")
    assert envhash.split_subscripted_path("metadata.labels['a['b']") == ("metadata.labels", "a['b")
    assert envhash.split_subscripted_path("metadata.labels") is None
    assert envhash.split_subscripted_path("['a']") is None
