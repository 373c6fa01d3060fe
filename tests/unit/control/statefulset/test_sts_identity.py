"""Advanced StatefulSet identity: names, ordinals, reserveOrdinals, ordinals.start, new pods."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sts_builders import TEMPLATE_V1, ordinal_pod, sts

from kruise.control.statefulset import identity as ident
from kruise.control.statefulset import pods as stspods


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("web-0", ("web", 0)),
        ("web-12", ("web", 12)),
        ("my-app-3", ("my-app", 3)),
        ("web", ("", -1)),
        ("web-", ("", -1)),
        ("web-a1", ("", -1)),
        ("web-99999999999", ("web", -1)),
    ],
)
def test_parent_and_ordinal(name, expected):
    assert ident.parent_and_ordinal(name) == expected


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (None, set()),
        ([1, 3], {1, 3}),
        (["3-5"], {3, 4, 5}),
        ([0, "2-3", 7], {0, 2, 3, 7}),
        (["4-4"], {4}),
        (["5-3"], set()),  # invalid range: whole list ignored, as upstream
        ([1, "x"], set()),
        ([1, "1-2-3"], set()),
    ],
)
def test_reserved_ordinals(items, expected):
    assert ident.reserved_ordinals(items) == frozenset(expected)


@pytest.mark.parametrize(
    ("replicas", "reserve", "start", "gate", "ordinals"),
    [
        (3, None, None, False, [0, 1, 2]),
        (3, [1], None, False, [0, 2, 3]),
        (3, ["0-1"], None, False, [2, 3, 4]),
        (4, [1, 3], 2, True, [2, 4, 5, 6]),  # upstream's own example
        (3, None, 2, True, [2, 3, 4]),
        (3, None, 2, False, [0, 1, 2]),  # gate off: start ignored
        (0, [0], None, False, []),
    ],
)
def test_ordinal_range(replicas, reserve, start, gate, ordinals):
    spec = sts(replicas, reserve=reserve, start=start)["spec"]
    assert ident.ordinal_range(spec, gate).ordinals() == ordinals


def test_ordinal_range_rejects_negative_replicas():
    with pytest.raises(ValueError, match=r"spec\.replicas: must be >= 0"):
        ident.ordinal_range({"replicas": -1})


@given(
    replicas=st.integers(0, 30),
    reserve=st.lists(st.integers(0, 40), max_size=10),
    start=st.integers(0, 5),
)
def test_ordinal_range_properties(replicas, reserve, start):
    spec = {"replicas": replicas, "reserveOrdinals": reserve, "ordinals": {"start": start}}
    rng = ident.ordinal_range(spec, True)
    live = rng.ordinals()
    assert len(live) == replicas
    assert all(n >= start and n not in reserve for n in live)
    assert live == sorted(live)
    # no gap: every unreserved ordinal below the highest live one is live
    if live:
        assert live == [n for n in range(start, live[-1] + 1) if n not in reserve]
        assert rng.end == live[-1] + 1
    assert all((n in rng) == (n in live) for n in range(0, 80))


@given(
    replicas=st.integers(0, 10),
    existing=st.sets(st.integers(0, 20), max_size=15),
    reserve=st.lists(st.integers(0, 12), max_size=5),
)
def test_partition_pods_splits_every_pod_once(replicas, existing, reserve):
    rng = ident.ordinal_range({"replicas": replicas, "reserveOrdinals": reserve})
    all_pods = [ordinal_pod(n) for n in existing] + [ordinal_pod(0, name="web-x"), ordinal_pod(0, name="web")]
    split = ident.partition_pods(all_pods, rng)
    assert set(split.live) == existing & set(rng.ordinals())
    condemned = [ident.ordinal_of(p) for p in split.condemned]
    assert condemned == sorted(existing - set(rng.ordinals()), reverse=True)
    assert len(split.ignored) == 2


def test_reserving_a_running_ordinal_condemns_it():
    spec = sts(3, reserve=[1])["spec"]
    split = ident.partition_pods([ordinal_pod(0), ordinal_pod(1), ordinal_pod(2)], ident.ordinal_range(spec))
    assert sorted(split.live) == [0, 2]
    assert [ident.pod_name_of(p) for p in split.condemned] == ["web-1"]


def test_new_pod_identity_and_storage():
    claim = {"metadata": {"name": "data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    template = {
        **TEMPLATE_V1,
        "spec": {
            **TEMPLATE_V1["spec"],
            "volumes": [{"name": "data", "emptyDir": {}}, {"name": "x", "emptyDir": {}}],
        },
    }
    set_ = sts(3, volumeClaimTemplates=[claim])
    new = stspods.new_pod(set_, template, 2, "web-v1")
    meta, spec = new["metadata"], new["spec"]
    assert meta["name"] == "web-2" and meta["namespace"] == "ns"
    assert meta["labels"] == {
        "app": "web",
        "statefulset.kubernetes.io/pod-name": "web-2",
        "apps.kubernetes.io/pod-index": "2",
        "controller-revision-hash": "web-v1",
    }
    assert meta["ownerReferences"][0]["kind"] == "StatefulSet" and meta["ownerReferences"][0]["controller"]
    assert spec["hostname"] == "web-2" and spec["subdomain"] == "web-svc"
    assert spec["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-2"}},
        {"name": "x", "emptyDir": {}},
    ]
    assert stspods.identity_matches(set_, new) and stspods.storage_matches(set_, new)
    # the template is not mutated
    assert template["spec"]["volumes"][0] == {"name": "data", "emptyDir": {}}
    no_index = stspods.new_pod(set_, template, 0, "r", pod_index_label=False)
    assert "apps.kubernetes.io/pod-index" not in no_index["metadata"]["labels"]


def test_claims_for_ordinal():
    claim = {"metadata": {"name": "data", "labels": {"k": "v"}}, "spec": {}, "status": {"phase": "Bound"}}
    (got,) = stspods.claims_for_ordinal(sts(volumeClaimTemplates=[claim]), 4)
    assert got["metadata"] == {"name": "data-web-4", "namespace": "ns", "labels": {"k": "v", "app": "web"}}
    assert "status" not in got and got["kind"] == "PersistentVolumeClaim"


def test_new_pod_rejects_negative_ordinal():
    with pytest.raises(ValueError, match="ordinal: must be >= 0"):
        stspods.new_pod(sts(), TEMPLATE_V1, -1, "r")


@pytest.mark.parametrize(
    ("mutate", "matches"),
    [
        (lambda p: None, True),
        (lambda p: p["metadata"]["labels"].pop("statefulset.kubernetes.io/pod-name"), False),
        (lambda p: p["metadata"]["labels"].update({"statefulset.kubernetes.io/pod-name": "web-9"}), False),
        (lambda p: p["metadata"].update({"namespace": "other"}), False),
        (lambda p: p["metadata"].update({"name": "db-1"}), False),
        (lambda p: p["metadata"]["labels"].pop("apps.kubernetes.io/pod-index"), True),
    ],
)
def test_identity_matches(mutate, matches):
    p = ordinal_pod(1)
    mutate(p)
    assert stspods.identity_matches(sts(), p) is matches


def test_identity_patch():
    assert stspods.identity_patch(sts(), ordinal_pod(1)) == {
        "metadata": {
            "labels": {"statefulset.kubernetes.io/pod-name": "web-1", "apps.kubernetes.io/pod-index": "1"}
        }
    }
    with pytest.raises(ValueError, match="no ordinal suffix"):
        stspods.identity_patch(sts(), ordinal_pod(0, name="web"))


def test_storage_mismatch():
    set_ = sts(volumeClaimTemplates=[{"metadata": {"name": "data"}}])
    assert not stspods.storage_matches(set_, ordinal_pod(1))
    ok = ordinal_pod(1)
    ok["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}]
    assert stspods.storage_matches(set_, ok)


@pytest.mark.parametrize(
    ("partition", "reserve", "ordinal", "current"),
    [
        (0, None, 0, False),
        (2, None, 1, True),
        (2, None, 2, False),
        (2, [1], 2, True),  # ordinals 0,2 are the first two live ones
        (2, [1], 3, False),
    ],
)
def test_needs_current_revision_ordered(partition, reserve, ordinal, current):
    set_ = sts(5, partition=partition, reserve=reserve)
    rng = ident.ordinal_range(set_["spec"])
    assert stspods.needs_current_revision(set_, rng, ordinal, {}, "web-v2") is current


def test_needs_current_revision_unordered_and_on_delete():
    set_ = sts(3, policy="Parallel", partition=2)
    set_["spec"]["updateStrategy"]["rollingUpdate"]["unorderedUpdate"] = {}
    rng = ident.ordinal_range(set_["spec"])
    live = {0: ordinal_pod(0, "web-v1"), 1: ordinal_pod(1, "web-v2")}
    assert stspods.needs_current_revision(set_, rng, 2, live, "web-v2")  # 1 not updated < 2
    live[1] = ordinal_pod(1, "web-v1")
    assert not stspods.needs_current_revision(set_, rng, 2, live, "web-v2")
    assert not stspods.needs_current_revision(sts(3, strategy_type="OnDelete"), rng, 0, {}, "web-v2")


@pytest.mark.parametrize(("gate", "current"), [(False, False), (True, True)])
def test_needs_current_revision_counts_preparing_update_as_updated_with_the_gate(gate, current):
    """Unordered update, partition 2: web-1 is at the current revision but PreparingUpdate; with
    gate PreparingUpdateAsUpdate it counts as updated, so only one pod is not updated and the new
    web-2 must take the current revision."""
    set_ = sts(3, policy="Parallel", partition=2)
    set_["spec"]["updateStrategy"]["rollingUpdate"]["unorderedUpdate"] = {}
    rng = ident.ordinal_range(set_["spec"])
    live = {
        0: ordinal_pod(0, "web-v1"),
        1: ordinal_pod(1, "web-v1", labels={"lifecycle.apps.kruise.io/state": "PreparingUpdate"}),
    }
    assert (
        stspods.needs_current_revision(set_, rng, 2, live, "web-v2", preparing_update_as_update=gate)
        is current
    )
