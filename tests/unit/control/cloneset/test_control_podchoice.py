"""Scale-in ordering, instance ids, new pods/PVCs and status counters."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.cloneset import podchoice, podsort
from kruise.control.cloneset.pods import new_pod, pvc_name, pvcs_for_instance
from kruise.control.cloneset.status import availability_wait, compute_status
from kruise.control.common.podstatus import AVAILABILITY_TICK
from tests.kit.control_builders import NOW, build_cloneset, build_pod, iso


def names(pods: list) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def always(_: object) -> bool:
    return True


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"node": None}, {}),
        ({"phase": "Pending"}, {}),
        ({"phase": "Unknown"}, {"phase": "Running"}),
        ({"ready": False}, {}),
        ({"ready_since": timedelta(minutes=1)}, {"ready_since": timedelta(hours=2)}),
        ({"restarts": 3}, {"restarts": 1}),
        ({"created": NOW - timedelta(hours=1)}, {"created": NOW - timedelta(days=3)}),
    ],
)
def test_active_pods_order(first: dict, second: dict) -> None:
    a, b = build_pod("a", **first), build_pod("b", **second)
    assert names(podsort.sort_active_pods([b, a])) == ["a", "b"]
    assert names(podsort.sort_for_deletion([b, a], always, ranks={})) == ["a", "b"]


def test_deletion_prefers_unavailable_then_low_cost_then_crowded_nodes() -> None:
    a, b = build_pod("a"), build_pod("b")
    assert names(podsort.sort_for_deletion([a, b], lambda p: p is a, ranks={})) == ["b", "a"]
    b["metadata"]["annotations"] = {podsort.POD_DELETION_COST: "-5"}
    assert names(podsort.sort_for_deletion([a, b], always, ranks={})) == ["b", "a"]
    crowded = [build_pod(f"n{i}", node="busy") for i in range(3)]
    alone = build_pod("alone", node="quiet")
    # All but the best pod of a crowded node rank above zero; the survivor ties with "alone".
    order = names(podsort.sort_for_deletion([alone, *crowded], always))
    assert all(name.startswith("n") for name in order[:2])
    assert sorted(podsort.same_node_ranks([alone, *crowded]).values()) == [1.0, 2.0]


@pytest.mark.parametrize(("value", "cost"), [("10", 10), ("-3", -3), ("0", 0), ("007", 0), ("x", 0), ("", 0)])
def test_deletion_cost_parsing(value: str, cost: int) -> None:
    pod = build_pod()
    pod["metadata"]["annotations"] = {podsort.POD_DELETION_COST: value}
    assert podsort.deletion_cost(pod) == cost


def test_spread_ranks_prefer_crowded_zones() -> None:
    pods = [build_pod("z1a", node="n1"), build_pod("z1b", node="n2"), build_pod("z2", node="n3")]
    nodes = {"n1": {"zone": "z1"}, "n2": {"zone": "z1"}, "n3": {"zone": "z2"}}
    ranks = podsort.spread_constraint_ranks(pods, ["zone"], nodes)
    assert names(podsort.sort_for_deletion(pods, always, ranks))[-1] == "z2"


def test_choose_pods_to_delete_takes_old_revision_first() -> None:
    old = [build_pod(f"o{i}", "cs-old") for i in range(3)]
    new = [build_pod(f"n{i}", "cs-new") for i in range(3)]
    assert len(podchoice.choose_pods_to_delete(2, 5, old, new, always)) == 2
    picked = podchoice.choose_pods_to_delete(4, 1, old, new, always)
    assert sum(n.startswith("o") for n in names(picked)) == 1 and len(picked) == 4
    assert names(podchoice.choose_pods_to_delete(3, 0, old, new, always)) == names(new)


def test_ready_deletions_are_limited() -> None:
    pods = [build_pod("r1"), build_pod("u", ready=False), build_pod("r2")]
    allowed = podchoice.limit_ready_deletions(pods, lambda p: p["metadata"]["name"] != "u", 1)
    assert names(allowed) == ["r1", "u"]


def test_marked_for_deletion_counts_distinct() -> None:
    cs = build_cloneset(3)
    cs["spec"]["scaleStrategy"]["podsToDelete"] = ["a"]
    a = build_pod("a", labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})
    specified, preparing, count = podchoice.marked_for_deletion(cs, [a, build_pod("b")])
    assert (names(specified), names(preparing), count) == (["a"], ["a"], 1)


def test_instance_ids_reuse_orphan_pvcs_then_random() -> None:
    pods = [build_pod("cs-aaaaa", labels={"apps.kruise.io/cloneset-instance-id": "aaaaa"})]
    pvcs = [
        {"metadata": {"labels": {"apps.kruise.io/cloneset-instance-id": "aaaaa"}}},
        {"metadata": {"labels": {"apps.kruise.io/cloneset-instance-id": "bbbbb"}}},
    ]
    ids = podchoice.available_instance_ids(3, pods, pvcs, random.Random(1))
    assert ids[0] == "bbbbb"
    assert len(set(ids)) == 3 and "aaaaa" not in ids


@given(st.integers(0, 2**32))
def test_random_ids_use_the_safe_alphabet(seed: int) -> None:
    value = podchoice.random_instance_id(random.Random(seed))
    assert len(value) == 5 and set(value) <= set(podchoice.INSTANCE_ID_ALPHABET)


def test_split_creations() -> None:
    assert podchoice.split_creations(3, 5) == (3, 0)
    assert podchoice.split_creations(5, 2) == (2, 3)


def test_scale_up_limited_message() -> None:
    assert (
        podchoice.scale_up_limited_message(2)
        == "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: 2"
    )


def test_new_pod_has_labels_gate_owner_and_pvc_volumes() -> None:
    cs = build_cloneset(2)
    cs["spec"]["volumeClaimTemplates"] = [
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    ]
    cs["spec"]["template"]["spec"]["volumes"] = [
        {"name": "data", "emptyDir": {}},
        {"name": "cfg", "emptyDir": {}},
    ]
    pod = new_pod(cs, cs["spec"]["template"], "cs-abcde", "xyz12", NOW)
    labels = pod["metadata"]["labels"]
    assert pod["metadata"]["name"] == "cs-xyz12"
    assert labels["controller-revision-hash"] == "cs-abcde"
    assert labels["pod-template-hash"] == "abcde"
    assert labels["apps.kruise.io/cloneset-instance-id"] == "xyz12"
    assert labels["lifecycle.apps.kruise.io/state"] == "PreparingNormal"
    assert pod["spec"]["readinessGates"] == [{"conditionType": "InPlaceUpdateReady"}]
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "uid-1"
    assert pod["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-cs-xyz12"}},
        {"name": "cfg", "emptyDir": {}},
    ]
    claim = pvcs_for_instance(cs, "xyz12")["data"]
    assert claim["metadata"]["name"] == pvc_name("data", "cs", "xyz12") == "data-cs-xyz12"
    assert claim["metadata"]["labels"] == {"app": "demo", "apps.kruise.io/cloneset-instance-id": "xyz12"}


def test_status_counts_and_revision_promotion() -> None:
    cs = build_cloneset(3, partition=1)
    cs["spec"]["minReadySeconds"] = 60
    pods = [
        build_pod("a", "cs-new"),
        build_pod("b", "cs-new", ready_since=timedelta(seconds=10)),
        build_pod("c", "cs-old", ready=False),
    ]
    status = compute_status(cs, pods, "cs-new", "cs-old", 0, NOW)
    assert status["replicas"] == 3
    assert (status["readyReplicas"], status["availableReplicas"]) == (2, 1)
    assert (
        status["updatedReplicas"],
        status["updatedReadyReplicas"],
        status["updatedAvailableReplicas"],
    ) == (2, 2, 1)
    assert status["expectedUpdatedReplicas"] == 2
    assert status["currentRevision"] == "cs-old"
    assert status["labelSelector"] == "app=demo"
    assert status["observedGeneration"] == 3
    # b has been Ready 10 s of 60: the next look is due in exactly the 50 s left (not another 60)
    assert availability_wait(cs, pods, status, NOW) == pytest.approx(50 + AVAILABILITY_TICK)
    done = compute_status(cs, [build_pod(n, "cs-new") for n in "abc"], "cs-new", "cs-old", 0, NOW)
    assert done["currentRevision"] == "cs-new"


def test_availability_wait_none_without_a_time_gated_pod_and_full_fallback_for_a_hooked_one() -> None:
    cs = build_cloneset(2)
    cs["spec"]["minReadySeconds"] = 30
    settled = [build_pod("a", "cs-new"), build_pod("b", "cs-new", ready=False)]
    assert availability_wait(cs, settled, compute_status(cs, settled, "cs-new", "", 0, NOW), NOW) is None
    # Ready but PreparingNormal: time alone never makes it available; upstream looks again after minReady
    hooked = [build_pod("a", "cs-new", ready_since=timedelta(seconds=1))]
    hooked[0]["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = "PreparingNormal"
    status = compute_status(cs, hooked, "cs-new", "", 0, NOW)
    assert (status["readyReplicas"], status["availableReplicas"]) == (1, 0)
    assert availability_wait(cs, hooked, status, NOW) == 30.0


def test_inplace_update_ready_false_makes_pod_unready_in_status() -> None:
    pod = build_pod(
        conditions=[{"type": "InPlaceUpdateReady", "status": "False", "lastTransitionTime": iso(NOW)}]
    )
    assert compute_status(build_cloneset(1), [pod], "cs-new", "cs-new", 0, NOW)["readyReplicas"] == 0


def test_preparing_delete_pods_come_back_when_replicas_grow() -> None:
    cs = build_cloneset(3)
    pods = [build_pod("a"), build_pod("b", labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"})]
    pods.append(build_pod("c", labels={"lifecycle.apps.kruise.io/state": "PreparingDelete"}))
    _, preparing, count = podchoice.marked_for_deletion(cs, pods)
    assert names(podchoice.pods_to_undelete(cs, pods, preparing, count)) == ["b", "c"]
    cs["spec"]["replicas"] = 2
    assert names(podchoice.pods_to_undelete(cs, pods, preparing, count)) == ["b"]
    cs["spec"]["lifecycle"] = {"preDelete": {"markPodNotReady": True}}
    assert podchoice.pods_to_undelete(cs, pods, preparing, count) == []


def test_pods_to_delete_truncation() -> None:
    cs = build_cloneset(3)
    cs["spec"]["scaleStrategy"]["podsToDelete"] = ["a", "gone"]
    assert podchoice.truncated_pods_to_delete(cs, [build_pod("a")]) == ["a"]
    cs["spec"]["scaleStrategy"]["podsToDelete"] = ["a"]
    assert podchoice.truncated_pods_to_delete(cs, [build_pod("a")]) is None
