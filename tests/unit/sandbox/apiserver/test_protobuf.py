"""The protobuf decoder against hand-built wire bytes (field numbers of k8s.io/api)."""

from __future__ import annotations

import pytest

from kruise.sandbox.apiserver.protobuf import ProtobufError, decode_object, is_protobuf


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def vfield(num: int, value: int) -> bytes:
    return varint(num << 3) + varint(value)


def bfield(num: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return varint(num << 3 | 2) + varint(len(data)) + data


def entry(key: str, value: bytes | str) -> bytes:
    return bfield(1, key) + bfield(2, value)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return b"k8s\x00" + bfield(1, bfield(1, api_version) + bfield(2, kind)) + bfield(2, raw)


# ObjectMeta the way Go's marshaller writes it: every non-pointer field, zero or not.
META = (
    bfield(1, "demo")
    + bfield(2, "")
    + bfield(3, "ns")
    + bfield(6, "")
    + vfield(7, 0)
    + bfield(8, b"")  # zero creationTimestamp
    + bfield(11, entry("app", "web"))
)


def test_media_type_detection():
    assert is_protobuf("application/vnd.kubernetes.protobuf")
    assert is_protobuf("application/vnd.kubernetes.protobuf; charset=utf-8")
    assert not is_protobuf("application/json")


def test_secret_bytes_map_and_zero_meta_fields():
    raw = bfield(1, META) + bfield(2, entry("pw", b"\x00\xff")) + bfield(3, "Opaque")
    obj = decode_object(envelope("v1", "Secret", raw))
    assert obj == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "demo", "namespace": "ns", "creationTimestamp": None, "labels": {"app": "web"}},
        "data": {"pw": "AP8="},
        "type": "Opaque",
    }


def test_pointer_zero_kept_non_pointer_zero_dropped_and_int_or_string():
    rolling = bfield(1, vfield(1, 1) + bfield(3, "25%")) + bfield(2, vfield(1, 0) + vfield(2, 2))
    spec = (
        vfield(1, 0)  # replicas (*int32) = 0
        + vfield(5, 0)  # minReadySeconds (int32, omitempty) = 0
        + vfield(7, 0)  # paused (bool, omitempty) = false
        + bfield(4, bfield(1, "RollingUpdate") + bfield(2, rolling))
        + bfield(2, bfield(1, entry("app", "web")))
    )
    obj = decode_object(envelope("apps/v1", "Deployment", bfield(1, META) + bfield(2, spec)))
    assert obj["spec"] == {
        "replicas": 0,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}},
        "selector": {"matchLabels": {"app": "web"}},
    }


def test_negative_ints_times_quantities_and_repeated():
    container = (
        bfield(1, "c")
        + bfield(3, "sh")
        + bfield(3, "-c")
        + bfield(8, bfield(1, entry("cpu", bfield(1, "100m"))))
        + vfield(16, 0)  # stdin false, omitempty
    )
    pod_spec = bfield(2, container) + vfield(4, (-5) & ((1 << 64) - 1))  # terminationGracePeriodSeconds
    meta = bfield(1, "p") + bfield(9, vfield(1, 1_700_000_000))  # deletionTimestamp
    obj = decode_object(envelope("v1", "Pod", bfield(1, meta) + bfield(2, pod_spec)))
    assert obj["metadata"]["deletionTimestamp"] == "2023-11-14T22:13:20Z"
    assert obj["spec"]["terminationGracePeriodSeconds"] == -5
    assert obj["spec"]["containers"] == [
        {"name": "c", "command": ["sh", "-c"], "resources": {"limits": {"cpu": "100m"}}}
    ]


def test_inline_embedded_struct_is_merged():
    # SecretKeySelector embeds LocalObjectReference with json:",inline"
    selector = bfield(1, bfield(1, "creds")) + bfield(2, "token")
    env = bfield(1, "TOKEN") + bfield(3, bfield(4, selector))
    container = bfield(1, "c") + bfield(7, env)
    obj = decode_object(envelope("v1", "Pod", bfield(1, bfield(1, "p")) + bfield(2, bfield(2, container))))
    assert obj["spec"]["containers"][0]["env"] == [
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}
    ]


def test_unknown_fields_are_skipped():
    raw = bfield(1, META) + bfield(99, "future") + bfield(2, entry("k", "v"))
    assert decode_object(envelope("v1", "ConfigMap", raw))["data"] == {"k": "v"}


@pytest.mark.parametrize(
    "body, message",
    [
        (b'{"kind": "ConfigMap"}', "Kubernetes protobuf prefix"),
        (envelope("example.com/v1", "Widget", b""), "no protobuf schema"),
        (envelope("v1", "ConfigMap", b"\x0a\x05ab"), "truncated"),
    ],
)
def test_malformed_bodies(body, message):
    with pytest.raises(ProtobufError, match=message):
        decode_object(body)


@pytest.mark.parametrize("api_version", ["v1", "apps/v1", "rbac.authorization.k8s.io/v1"])
def test_delete_options_decode_in_any_group_version(api_version):
    # client-go's typed clients send DeleteOptions in their own group version (helm's release Secret)
    raw = vfield(1, 0) + bfield(4, "Background") + bfield(5, "All")
    obj = decode_object(envelope(api_version, "DeleteOptions", raw))
    assert obj["gracePeriodSeconds"] == 0
    assert obj["propagationPolicy"] == "Background"
    assert obj["dryRun"] == ["All"]
