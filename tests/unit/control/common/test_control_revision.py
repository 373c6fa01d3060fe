"""Revision hashing must match Kubernetes' history package byte for byte."""

from __future__ import annotations

import copy

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.common import revision as rev
from tests.kit.control_builders import build_cloneset, build_pod


@pytest.mark.parametrize(
    ("data", "fnv1", "fnv1a"),
    [
        (b"", 0x811C9DC5, 0x811C9DC5),
        (b"a", 0x050C5D7E, 0xE40C292C),
        (b"foobar", 0x31F0B262, 0xBF9CF968),
    ],
)
def test_fnv_known_vectors(data: bytes, fnv1: int, fnv1a: int) -> None:
    assert rev.fnv1_32(data) == fnv1
    assert rev.fnv1a_32(data) == fnv1a


def test_safe_encode_maps_bytes_onto_alphabet() -> None:
    # '0' is byte 48 -> 48 % 27 = 21 -> '4'; '9' is 57 -> 57 % 27 = 3 -> 'f'
    assert rev.safe_encode_string("09") == "4f"
    assert set(rev.safe_encode_string("1234567890")) <= set(rev.SAFE_ALPHANUMS)


def test_go_json_sorts_keys_and_escapes_html() -> None:
    assert rev.go_json({"b": 1, "a": "<&>"}) == b'{"a":"\\u003c\\u0026\\u003e","b":1}'


def test_revision_data_is_a_replace_patch_with_go_struct_defaults() -> None:
    cs = build_cloneset()
    data = rev.cloneset_revision_data(cs["spec"]["template"])
    template = data["spec"]["template"]
    assert template["$patch"] == "replace"
    assert template["metadata"]["creationTimestamp"] is None
    assert template["spec"]["containers"][0]["resources"] == {}
    assert rev.template_from_revision_data(data)["spec"]["containers"][0]["image"] == "nginx:2"


def test_hash_is_fnv1_of_json_plus_collision_count() -> None:
    raw = b'{"spec":{}}'
    expected = rev.safe_encode_string(str(rev.fnv1_32(raw + b"0")))
    assert rev.hash_revision_data(raw, 0) == expected
    assert rev.hash_revision_data(raw, None) == rev.safe_encode_string(str(rev.fnv1_32(raw)))
    assert rev.hash_revision_data(raw, 1) != expected


def test_new_revision_names_labels_and_owner() -> None:
    cs = build_cloneset()
    cs["metadata"]["annotations"] = {"note": "x"}
    cr = rev.new_cloneset_revision(cs, 1, 0, vct_hash="h")
    hash_ = cr["metadata"]["labels"]["controller.kubernetes.io/hash"]
    assert cr["metadata"]["name"] == f"cs-{hash_}"
    assert cr["metadata"]["labels"]["app"] == "demo"
    assert cr["metadata"]["annotations"] == {"note": "x", "kruise.io/cloneset-volumeclaimtemplate-hash": "h"}
    assert cr["metadata"]["ownerReferences"][0]["controller"] is True
    assert cr["revision"] == 1


@given(st.text(min_size=1, max_size=20), st.integers(min_value=0, max_value=5))
def test_same_template_same_hash_and_image_change_differs(image: str, collisions: int) -> None:
    cs = build_cloneset()
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = image
    first = rev.new_cloneset_revision(cs, 1, collisions)
    again = rev.new_cloneset_revision(copy.deepcopy(cs), 7, collisions)
    assert first["metadata"]["name"] == again["metadata"]["name"]
    assert rev.revisions_equal(first, again)
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = image + "x"
    assert not rev.revisions_equal(first, rev.new_cloneset_revision(cs, 1, collisions))


def test_replicas_do_not_change_the_hash() -> None:
    a, b = build_cloneset(replicas=1), build_cloneset(replicas=9)
    assert (
        rev.new_cloneset_revision(a, 1, 0)["metadata"]["name"]
        == rev.new_cloneset_revision(b, 1, 0)["metadata"]["name"]
    )


def test_long_owner_names_are_truncated() -> None:
    assert rev.controller_revision_name("x" * 300, "abc") == "x" * 223 + "-abc"


@pytest.mark.parametrize(
    ("label", "revision", "match"),
    [
        ("cs-abc", "cs-abc", True),
        ("abc", "cs-abc", True),
        ("cs-abc", "abc", True),
        ("cs-abd", "cs-abc", False),
        ("", "cs-abc", False),
    ],
)
def test_pod_matches_revision_by_full_or_short_hash(label: str, revision: str, match: bool) -> None:
    assert rev.equal_to_revision_hash(build_pod(revision=label), revision) is match


def test_pod_labels_with_and_without_short_hash_gate() -> None:
    assert rev.revision_labels_for_pod("cs-abc") == {
        "controller-revision-hash": "cs-abc",
        "pod-template-hash": "abc",
    }
    assert rev.revision_labels_for_pod("cs-abc", short_hash_gate=True)["controller-revision-hash"] == "abc"


_NAME = st.from_regex(r"[a-z]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
_HASH = st.from_regex(r"[bcdfghjklmnpqrstvwxz2456789]{1,10}", fullmatch=True)


@given(name=_NAME, hash_=_HASH, gate=st.booleans())
def test_written_labels_match_their_revision_either_gate(name: str, hash_: str, gate: bool) -> None:
    """WriteRevisionHash: long or short label by gate, pod-template-hash always short, and the pod
    matches its own revision either way (so pods labelled before a gate flip keep matching)."""
    revision = rev.controller_revision_name(name, hash_)
    labels = rev.revision_labels_for_pod(revision, short_hash_gate=gate)
    assert labels["controller-revision-hash"] == (hash_ if gate else revision)
    assert labels["pod-template-hash"] == hash_
    for written in (labels["controller-revision-hash"], revision, hash_):
        assert rev.equal_to_revision_hash(build_pod(revision=written), revision)


def _stored(cs: dict, number: int) -> dict:
    return rev.new_cloneset_revision(cs, number, 0)


def test_choose_revisions_create_reuse_and_rollback() -> None:
    v1 = build_cloneset()
    assert rev.choose_revisions(v1, []).action == "create"
    r1 = _stored(v1, 1)
    choice = rev.choose_revisions(v1, [r1])
    assert (choice.action, choice.update["metadata"]["name"]) == ("reuse", r1["metadata"]["name"])
    v2 = copy.deepcopy(v1)
    v2["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:3"
    r2 = _stored(v2, 2)
    v1["status"] = {"currentRevision": r2["metadata"]["name"]}
    back = rev.choose_revisions(v1, [r1, r2])
    assert back.action == "rollback"
    assert back.update["metadata"]["name"] == r1["metadata"]["name"]
    assert back.update["revision"] == 3
    assert back.current["metadata"]["name"] == r2["metadata"]["name"]


def test_current_defaults_to_update_when_status_names_nothing_known() -> None:
    cs = build_cloneset()
    cs["status"] = {"currentRevision": "gone"}
    choice = rev.choose_revisions(cs, [_stored(cs, 1)])
    assert choice.current is choice.update


def test_truncation_deletes_oldest_unreferenced_beyond_limit() -> None:
    revisions = [{"metadata": {"name": f"cs-{i}"}, "revision": i} for i in (5, 1, 3, 2, 4)]
    assert rev.revisions_to_truncate(revisions, ["cs-5", "3"], 1) == ["cs-1", "cs-2"]
    assert rev.revisions_to_truncate(revisions, ["cs-5"], 10) == []


def _seed_template(image: str) -> dict:
    """cs-demo's template from seed 002 after the apiserver/webhook defaults are applied."""
    container = {
        "name": "nginx",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"containerPort": 80, "protocol": "TCP"}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    spec = {
        "containers": [container],
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    }
    return {"metadata": {"labels": {"app": "cs"}}, "spec": spec}


@pytest.mark.parametrize(
    ("image", "name"),
    [("nginx:1.7.9", "cs-demo-7cb9c88699"), ("nginx", "cs-demo-6599fc6cdd")],
)
def test_revision_names_match_a_real_openkruise_cluster(image: str, name: str) -> None:
    # Names observed in the seed tutorial's kubectl output from a real OpenKruise 1.0 cluster.
    cloneset = {"metadata": {"name": "cs-demo"}, "spec": {"template": _seed_template(image)}}
    assert rev.new_cloneset_revision(cloneset, 1, 0)["metadata"]["name"] == name


@given(
    st.dictionaries(
        st.text(max_size=6),
        st.recursive(
            st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
            ),
            max_leaves=8,
        ),
        max_size=4,
    )
)
def test_revision_for_write_sends_data_as_go_encodes_it(data: dict) -> None:
    body = orjson.dumps(rev.revision_for_write({"kind": "ControllerRevision", "data": data, "revision": 1}))
    assert b'"data":' + rev.go_json(data) + b',"revision":1' in body
    assert orjson.loads(body)["data"] == data
