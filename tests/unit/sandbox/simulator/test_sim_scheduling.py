"""Scheduling predicates and node choice on plain dicts."""

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.scheduling import (
    choose_node,
    filter_reasons,
    fit_error_message,
    match_node_selector_term,
    matches_node_affinity,
    pod_requests,
    tolerates,
)
from tests.kit.pods import pod


def node(name, labels=None, taints=None, pods="110", cpu="4", memory="8Gi", unschedulable=False):
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or [], **({"unschedulable": True} if unschedulable else {})},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}},
    }


def req(key, op, *values):
    r = {"key": key, "operator": op}
    if values:
        r["values"] = list(values)
    return r


@pytest.mark.parametrize(
    ("requirement", "labels", "expected"),
    [
        (req("zone", "In", "a", "b"), {"zone": "a"}, True),
        (req("zone", "In", "a"), {"zone": "c"}, False),
        (req("zone", "In", "a"), {}, False),
        (req("zone", "NotIn", "a"), {"zone": "b"}, True),
        (req("zone", "NotIn", "a"), {}, True),
        (req("zone", "NotIn", "a"), {"zone": "a"}, False),
        (req("zone", "Exists"), {"zone": ""}, True),
        (req("zone", "Exists"), {}, False),
        (req("zone", "DoesNotExist"), {}, True),
        (req("zone", "DoesNotExist"), {"zone": "a"}, False),
        (req("gpus", "Gt", "2"), {"gpus": "3"}, True),
        (req("gpus", "Gt", "3"), {"gpus": "3"}, False),
        (req("gpus", "Lt", "3"), {"gpus": "2"}, True),
        (req("gpus", "Lt", "3"), {"gpus": "x"}, False),
        (req("gpus", "Gt", "1"), {}, False),
    ],
)
def test_match_expressions(requirement, labels, expected):
    assert match_node_selector_term(node("n1", labels), {"matchExpressions": [requirement]}) is expected


def test_match_fields_metadata_name_and_empty_term():
    term = {"matchFields": [req("metadata.name", "In", "n2")]}
    assert match_node_selector_term(node("n2"), term)
    assert not match_node_selector_term(node("n1"), term)
    assert not match_node_selector_term(node("n1"), {})


def test_node_affinity_terms_are_ored_and_node_selector_anded():
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [req("zone", "In", "a")]},
                    {"matchExpressions": [req("zone", "In", "b")]},
                ]
            }
        }
    }
    p = pod(affinity=affinity, nodeSelector={"disk": "ssd"})
    assert matches_node_affinity(p, node("n", {"zone": "b", "disk": "ssd"}))
    assert not matches_node_affinity(p, node("n", {"zone": "b"}))
    assert not matches_node_affinity(p, node("n", {"zone": "c", "disk": "ssd"}))


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        (
            {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
            {"key": "k", "value": "v", "effect": "NoSchedule"},
            True,
        ),
        ({"key": "k", "value": "v"}, {"key": "k", "value": "v", "effect": "NoExecute"}, True),
        ({"key": "k", "value": "x"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, False),
        ({"key": "k", "operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoSchedule"}, True),
        ({"operator": "Exists"}, {"key": "any", "effect": "NoExecute"}, True),
        ({"operator": "Exists", "effect": "NoSchedule"}, {"key": "any", "effect": "NoExecute"}, False),
        ({"key": "other", "operator": "Exists"}, {"key": "k", "effect": "NoSchedule"}, False),
    ],
)
def test_tolerations(toleration, taint, expected):
    assert tolerates(toleration, taint) is expected


def test_filter_reasons_taint_message_and_prefer_no_schedule_ignored():
    tainted = node("n", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}])
    assert filter_reasons(pod(), tainted, []) == ["node(s) had untolerated taint {dedicated: gpu}"]
    soft = node("n", taints=[{"key": "dedicated", "value": "gpu", "effect": "PreferNoSchedule"}])
    assert filter_reasons(pod(), soft, []) == []


def test_cordoned_node_is_unschedulable_unless_tolerated():
    cordoned = node("n", unschedulable=True)
    assert filter_reasons(pod(), cordoned, []) == ["node(s) were unschedulable"]
    tolerant = pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists"}])
    assert filter_reasons(tolerant, cordoned, []) == []


def test_resources_and_pod_count():
    big = pod(containers=[{"name": "c", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}])
    assert filter_reasons(big, node("n", cpu="2"), []) == ["Insufficient cpu"]
    assert filter_reasons(big, node("n", memory="512Mi"), []) == ["Insufficient memory"]
    assert filter_reasons(pod(), node("n", pods="1"), [pod()]) == ["Too many pods"]


def test_pod_requests_counts_sidecars_and_init_peak():
    p = pod(
        initContainers=[
            {"name": "init", "resources": {"requests": {"cpu": "2"}}},
            {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
        ],
        containers=[{"name": "c", "resources": {"limits": {"cpu": "500m", "memory": "64Mi"}}}],
    )
    requests = pod_requests(p)
    assert requests.cpu == 2000
    assert requests.memory == 64 * 1024 * 1024
    p["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] = "100m"
    assert pod_requests(p).cpu == 600


def test_choose_least_loaded_node():
    nodes = [node("n1"), node("n2"), node("n3")]
    loaded = {"n1": [pod(), pod()], "n2": [pod()], "n3": [pod()]}
    assert choose_node(pod(), nodes, loaded).node == "n2"


def test_preferred_node_affinity_wins_over_load():
    """A PersistentPodState's preferred hostname brings a recreated pod back to its busier node."""
    nodes = [node("n1", {"host": "n1"}), node("n2", {"host": "n2"}), node("n3", {"host": "n3"})]
    loaded = {"n1": [pod()], "n2": [pod(), pod()], "n3": []}

    def preferring(*terms):
        preferred = {"preferredDuringSchedulingIgnoredDuringExecution": list(terms)}
        return pod(affinity={"nodeAffinity": preferred})

    to_n2 = {"weight": 100, "preference": {"matchExpressions": [req("host", "In", "n2")]}}
    to_n1 = {"weight": 10, "preference": {"matchExpressions": [req("host", "In", "n1")]}}
    assert choose_node(preferring(to_n2), nodes, loaded).node == "n2"
    assert choose_node(preferring(to_n1, to_n2), nodes, loaded).node == "n2"
    # no node matches: the least loaded one, as without a preference
    to_none = {"weight": 100, "preference": {"matchExpressions": [req("host", "In", "n9")]}}
    assert choose_node(preferring(to_none), nodes, loaded).node == "n3"


def test_unschedulable_message_counts_reasons_sorted():
    nodes = [
        node("n1", {"zone": "a"}),
        node("n2", taints=[{"key": "k", "value": "", "effect": "NoSchedule"}]),
        node("n3"),
    ]
    p = pod(nodeSelector={"zone": "a"}, containers=[{"name": "c", "resources": {"requests": {"cpu": "5"}}}])
    decision = choose_node(p, nodes, {})
    assert decision.node is None
    assert decision.message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_no_nodes_message():
    assert fit_error_message(0, Counter()) == "no nodes available to schedule pods"


@given(st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=6))
def test_choice_is_always_a_minimum_load_node(loads):
    nodes = [node(f"n{i}") for i in range(len(loads))]
    by_node = {f"n{i}": [pod() for _ in range(load)] for i, load in enumerate(loads)}
    chosen = choose_node(pod(), nodes, by_node).node
    assert len(by_node[chosen]) == min(loads)
