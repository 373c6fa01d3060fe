"""SidecarSet hashes byte-identical with upstream, and the Go JSON encoding they rest on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sidecar_builders import sidecarset

from kruise.api.keys import ANNOTATION_SIDECARSET_HASH, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE
from kruise.control.sidecarset import gojson
from kruise.control.sidecarset.hashing import _encode, sidecarset_hash, sidecarset_hash_without_image


def test_hash_matches_upstream_golden_vector():
    # upstream pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go: container dns-f, image dns:1.0
    stored = sidecarset("sidecarset-test", [{"name": "dns-f", "image": "dns:1.0"}])
    annotations = stored["metadata"]["annotations"]
    assert annotations[ANNOTATION_SIDECARSET_HASH] == (
        "6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684"
    )
    assert annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] == (
        "82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94"
    )


def test_encoding_is_go_struct_order_with_omitempty():
    spec = {
        "containers": [{"shareVolumePolicy": {"type": "disabled"}, "image": "x", "name": "c", "tty": False}]
    }
    assert _encode(spec) == (
        b'{"containers":[{"name":"c","image":"x","resources":{},"upgradeStrategy":{},'
        b'"shareVolumePolicy":{"type":"disabled"}}]}'
    )


def test_no_containers_encode_as_null():
    assert _encode({}) == b'{"containers":null}'


def test_plain_init_containers_do_not_count_but_a_native_sidecar_brings_all_of_them():
    base = {"containers": [{"name": "c", "image": "x"}]}
    plain = {**base, "initContainers": [{"name": "init", "image": "i"}]}
    assert sidecarset_hash(plain) == sidecarset_hash(base)
    native = {
        **base,
        "initContainers": [{"name": "init", "image": "i"}, {"name": "s", "restartPolicy": "Always"}],
    }
    assert _encode(native).endswith(
        b'"initContainers":[{"name":"init","image":"i","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}},'
        b'{"name":"s","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}]}'
    )
    assert sidecarset_hash(native) != sidecarset_hash(base)


@given(st.text(min_size=1, max_size=30), st.text(min_size=1, max_size=30))
def test_hash_without_image_ignores_images(first, second):
    def spec(image: str) -> dict:
        return {"containers": [{"name": "c", "image": image}]}

    assert sidecarset_hash_without_image(spec(first)) == sidecarset_hash_without_image(spec(second))
    assert (sidecarset_hash(spec(first)) == sidecarset_hash(spec(second))) == (first == second)


def test_hash_alphabet_and_length():
    value = sidecarset_hash({"containers": [{"name": "c"}]})
    assert len(value) == 64
    assert set(value) <= set("bcdfghjklmnpqrstvwxz2456789")


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("100m", "100m"),
        ("0.5", "500m"),
        ("1", "1"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("512", "512"),
        ("100Ki", "100Ki"),
        ("0", "0"),
        ("1e3", "1e3"),
        ("1500M", "1500M"),
        ("2G", "2G"),
        (2, "2"),
        ("0.0000000001", "1n"),
    ],
)
def test_canonical_quantity(raw, canonical):
    assert gojson.canonical_quantity(raw) == canonical


@pytest.mark.parametrize(
    ("type_name", "value", "expected"),
    [
        ("SecurityContext", {"privileged": False, "runAsUser": 0}, {"privileged": False, "runAsUser": 0}),
        ("Container", {"name": "c", "stdin": False, "unknown": 1}, {"name": "c", "resources": {}}),
        ("Container", {}, {"name": "", "resources": {}}),
        ("ResourceFieldSelector", {"resource": "limits.cpu"}, {"resource": "limits.cpu", "divisor": "0"}),
        ("ContainerPort", {"name": "http"}, {"name": "http", "containerPort": 0}),
        ("Probe", {"httpGet": {"port": 80}, "periodSeconds": 0}, {"httpGet": {"port": 80}}),
        ("GRPCAction", {"port": 9}, {"port": 9, "service": None}),
        ("EnvVar", {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}},
         {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}),
        ("ResourceRequirements", {"requests": {"memory": "1Gi", "cpu": "0.1"}},
         {"requests": {"cpu": "100m", "memory": "1Gi"}}),
    ],
)  # fmt: skip
def test_go_struct_shapes(type_name, value, expected):
    encoded = gojson.struct(value, type_name)
    assert encoded == expected
    assert list(encoded) == list(expected)
