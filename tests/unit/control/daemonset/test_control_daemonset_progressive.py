"""Progressive pod creation (``partitionedScaling``): how many of the nodes needing a pod the manage
step creates on, given the partition (pure)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.keys import ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD
from kruise.control.daemonset.manage import group_by_node
from kruise.control.daemonset.progressive import (
    count_updated_nodes,
    creation_partition,
    is_creation_progressive,
    limit_creation,
    nodes_needing_pods,
)
from tests.kit.control_builders import build_pod

NEW, OLD = "hash-new", "hash-old"


def names(*numbers: int) -> list[str]:
    return [f"node-{n}" for n in numbers]


# upstream TestGetNodesNeedingPods: (case, newPods, total, partition, progressive, needing, expected)
UPSTREAM_CASES = [
    ("no changes, all pods new", 10, 10, 0, False, [], []),
    ("create step1: partition=10", 0, 10, 10, True, names(*range(10)), []),
    ("create step2: partition=9", 0, 10, 9, True, names(*range(10)), names(0)),
    ("create step3: partition=5", 1, 10, 5, True, names(*range(1, 10)), names(1, 2, 3, 4)),
    ("create step4: 2 new nodes", 5, 12, 5, True, names(*range(5, 12)), names(10, 11)),
    ("create step5: 3 nodes offline", 4, 9, 5, True, names(5, 6, 7, 9, 10), []),
    ("create step6: partition=0", 4, 9, 0, True, names(5, 6, 7, 9, 10), names(10, 5, 6, 7, 9)),
    ("create step7: 3 new nodes", 9, 12, 0, True, names(12, 13, 14), names(12, 13, 14)),
    ("update step1: partition=10", 0, 10, 10, False, [], []),
    ("update step2: pod not deleted yet", 0, 10, 9, False, [], []),
    ("update step3: pod deleted by rolling update", 0, 10, 9, False, names(1), names(1)),
    ("update step4: pod not deleted yet", 1, 10, 5, False, [], []),
    ("update step5: pods deleted", 1, 10, 5, False, names(2, 3, 4, 5), names(2, 3, 4, 5)),
    ("update step6: 2 new nodes", 5, 12, 5, False, names(11, 12), names(11, 12)),
    ("update step7: pods not deleted yet", 7, 12, 0, False, [], []),
    ("update step7: pods deleted", 7, 12, 0, False, names(6, 7, 8, 9, 10), names(10, 6, 7, 8, 9)),
    ("selector step1: desired changed", 0, 20, 20, False, [], []),
    ("selector step2: partition=15", 0, 20, 15, True, names(*range(11, 21)), names(11, 12, 13, 14, 15)),
    ("selector step3: partition=10", 5, 20, 10, True, names(*range(16, 21)), names(16, 17, 18, 19, 20)),
    ("bad 1: partition too large", 10, 10, 100, False, [], []),
    ("bad 2: partition too large on create", 5, 10, 100, True, names(*range(5, 11)), []),
    ("bad 3: old pod deleted by hand", 5, 10, 5, False, names(6), names(6)),
    ("bad 4: old pod deleted, new created", 6, 10, 5, False, [], []),
]


@pytest.mark.parametrize(
    ("new_pods", "total", "partition", "progressive", "needing", "expected"),
    [case[1:] for case in UPSTREAM_CASES],
    ids=[case[0] for case in UPSTREAM_CASES],
)
def test_upstream_get_nodes_needing_pods(new_pods, total, partition, progressive, needing, expected):
    assert nodes_needing_pods(new_pods, total, partition, progressive, needing) == tuple(expected)


@given(
    needing=st.lists(st.sampled_from(names(*range(30))), unique=True),
    new_pods=st.integers(0, 30),
    desired=st.integers(0, 30),
    partition=st.integers(-5, 40),
)
def test_progressive_never_creates_past_the_partition(needing, new_pods, desired, partition):
    chosen = nodes_needing_pods(new_pods, desired, partition, True, needing)
    # every chosen pod becomes a new pod: together they never exceed desired − partition
    assert new_pods + len(chosen) <= max(desired - max(min(partition, desired), 0), new_pods)
    assert len(chosen) <= max(desired - new_pods - max(partition, 0), 0)
    assert list(chosen) == sorted(needing)[: len(chosen)]


@given(
    needing=st.lists(st.sampled_from(names(*range(30))), unique=True),
    new_pods=st.integers(0, 30),
    desired=st.integers(0, 30),
    partition=st.integers(0, 40),
)
def test_without_progressive_every_node_needing_a_pod_gets_one(needing, new_pods, desired, partition):
    assert nodes_needing_pods(new_pods, desired, partition, False, needing) == tuple(sorted(needing))


def daemonset(
    partition: Any = None, progressive: str | None = "true", desired: int = 0, kind: str = "RollingUpdate"
):
    rolling = {} if partition is None else {"partition": partition}
    annotations = {} if progressive is None else {ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD: progressive}
    return {
        "metadata": {"name": "ds", "namespace": "default", "annotations": annotations},
        "spec": {"updateStrategy": {"type": kind, "rollingUpdate": rolling}},
        "status": {"desiredNumberScheduled": desired},
    }


@pytest.mark.parametrize(
    ("value", "expected"), [("true", True), ("false", False), ("True", False), (None, False)]
)
def test_progressive_only_for_the_exact_annotation_value(value, expected):
    assert is_creation_progressive(daemonset(2, value)) is expected


@pytest.mark.parametrize(
    ("ds", "expected"),
    [
        (daemonset(3), 3),
        (daemonset(None), 0),
        (daemonset("50%", desired=5), 2),  # rounded down, scaled on the last written desired count
        (daemonset("50%", desired=0), 0),
        (daemonset("bad"), 0),
        (daemonset(3, kind="OnDelete"), 0),
    ],
)
def test_creation_partition(ds, expected):
    assert creation_partition(ds) == expected


def node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {}}


def test_count_updated_nodes_skips_unsplittable_and_old_only_nodes():
    pods = [
        build_pod("a-new", NEW, node="a"),
        build_pod("b-old", OLD, node="b"),
        build_pod("c-new", NEW, node="c"),
        build_pod("c-new2", NEW, node="c"),  # two new pods: not counted until pruned
        build_pod("d-new", NEW, node="d"),
        build_pod("d-old", OLD, node="d"),
    ]
    nodes = [node(n) for n in "abcde"]
    assert count_updated_nodes(nodes, group_by_node(pods), NEW, None) == 2


def test_limit_creation_holds_back_all_but_desired_minus_partition():
    nodes = [node(f"n{i}") for i in range(4)]
    running = group_by_node([build_pod("p0", NEW, node="n0")])
    needing = ["n3", "n2", "n1"]
    args = (nodes, lambda n: True, running, NEW, None)
    assert limit_creation(daemonset(2), needing, *args) == ("n1",)
    assert limit_creation(daemonset(0), needing, *args) == ("n1", "n2", "n3")
    assert limit_creation(daemonset(2, progressive=None), needing, *args) == ("n1", "n2", "n3")
    assert limit_creation(daemonset(9), needing, *args) == ()
