"""Adoption of pods the WorkloadSpread webhook never placed (created before the WorkloadSpread, or
annotation lost): node taints against pod + subset tolerations, the pod's required terms joined with
the subset's term (matchFields included), the score (preferred ×100, already patched ×10, room +1),
quotas counted from annotated pods first and per version, and the patch written onto the pod."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.workloadspread.adoption import (
    IGNORE_PATCH_EXISTING_PODS,
    adoption_patch,
    already_patched,
    annotated_subset,
    favorite_subset,
    fits_required,
    group_and_adopt,
    joined_required_terms,
    preferred_node_score,
    subset_score,
    tolerates_node,
)
from kruise.control.workloadspread.deletioncost import NO_SUBSET
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, VERSION_IGNORED, MatchedSpread
from tests.kit.pods import pod

ZONE = "topology.kubernetes.io/zone"


def node(name: str = "n1", labels: dict[str, str] | None = None, taints: list[dict] | None = None) -> dict:
    body: dict[str, Any] = {"metadata": {"name": name, "labels": labels or {}}, "spec": {}}
    if taints is not None:
        body["spec"]["taints"] = taints
    return body


def zone_term(*zones: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": ZONE, "operator": "In", "values": list(zones)}]}


def spread_pod(
    name: str = "p",
    node_name: str = "n1",
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    tolerations: list[dict] | None = None,
    required: list[dict] | None = None,
    created: str = "2024-05-01T00:00:00Z",
    owner_kind: str = "CloneSet",
) -> dict[str, Any]:
    """A running pod of a workload of `owner_kind`; `required` are its own required node-affinity terms."""
    affinity = None
    if required is not None:
        terms = {"nodeSelectorTerms": required}
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}
    return pod(
        name,
        namespace="ns",
        created=created,
        labels=labels or {},
        annotations=annotations or {},
        owner={"apiVersion": "apps/v1", "kind": owner_kind, "name": "o", "controller": True},
        containers=[{"name": "c", "image": "nginx"}],
        nodeName=node_name or None,
        tolerations=tolerations,
        affinity=affinity,
        phase="Running",
    )


def spread(*subsets: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "ws", "namespace": "ns", "annotations": annotations or {}},
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "app"},
            "subsets": list(subsets),
        },
    }


def matched(subset: str, name: str = "ws") -> dict[str, str]:
    return {ANNOTATION_MATCHED: MatchedSpread(name, subset).to_json()}


# --- taints and tolerations ------------------------------------------------------------


@pytest.mark.parametrize(
    ("taints", "pod_tols", "subset_tols", "fits"),
    [
        (None, None, None, True),
        ([{"key": "spot", "effect": "NoSchedule"}], None, None, False),
        ([{"key": "spot", "effect": "NoSchedule"}], None, [{"key": "spot", "operator": "Exists"}], True),
        ([{"key": "spot", "effect": "NoSchedule"}], [{"key": "spot", "operator": "Exists"}], None, True),
        # every effect counts, PreferNoSchedule too (upstream passes no effect filter)
        ([{"key": "spot", "effect": "PreferNoSchedule"}], None, None, False),
        ([{"key": "spot", "effect": "NoExecute"}], None, None, False),
        # Equal needs the value; a wrong effect does not tolerate
        ([{"key": "k", "value": "v", "effect": "NoSchedule"}], None, [{"key": "k", "value": "v"}], True),
        ([{"key": "k", "value": "v", "effect": "NoSchedule"}], None, [{"key": "k", "value": "w"}], False),
        (
            [{"key": "k", "effect": "NoSchedule"}],
            None,
            [{"key": "k", "operator": "Exists", "effect": "NoExecute"}],
            False,
        ),
        # an empty-key Exists toleration tolerates everything
        (
            [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoExecute"}],
            [{"operator": "Exists"}],
            None,
            True,
        ),
        # two taints, only one tolerated
        (
            [{"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "NoSchedule"}],
            [{"key": "a", "operator": "Exists"}],
            None,
            False,
        ),
    ],
)
def test_taints_tolerated_by_pod_and_subset_tolerations(taints, pod_tols, subset_tols, fits):
    subset: dict[str, Any] = {"name": "s"}
    if subset_tols is not None:
        subset["tolerations"] = subset_tols
    assert tolerates_node(spread_pod(tolerations=pod_tols), node(taints=taints), subset) is fits
    assert fits_required(spread_pod(tolerations=pod_tols), node(taints=taints), subset) is fits


# --- required terms --------------------------------------------------------------------


def test_subset_term_alone_when_pod_has_no_required_terms():
    assert joined_required_terms(spread_pod(), zone_term("a")) == [zone_term("a")]


def test_subset_term_anded_into_every_pod_term_including_match_fields():
    pod_terms = [
        {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]},
    ]
    subset_term = {
        **zone_term("a"),
        "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["x"]}],
    }
    original = json.dumps(pod_terms)
    joined = joined_required_terms(spread_pod(required=pod_terms), subset_term)
    assert joined == [
        {
            "matchExpressions": [
                {"key": "disk", "operator": "In", "values": ["ssd"]},
                *zone_term("a")["matchExpressions"],
            ],
            "matchFields": subset_term["matchFields"],
        },
        {
            "matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n9"]},
                *subset_term["matchFields"],
            ],
            "matchExpressions": zone_term("a")["matchExpressions"],
        },
    ]
    assert json.dumps(pod_terms) == original  # the pod is not changed


@pytest.mark.parametrize(
    ("node_labels", "node_name", "pod_terms", "subset_term", "fits"),
    [
        ({ZONE: "a"}, "n1", None, zone_term("a"), True),
        ({ZONE: "b"}, "n1", None, zone_term("a"), False),
        ({}, "n1", None, zone_term("a"), False),
        # no subset term: only taints matter
        ({ZONE: "b"}, "n1", None, None, True),
        # pod term and subset term both needed
        (
            {ZONE: "a", "disk": "ssd"},
            "n1",
            [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}],
            zone_term("a"),
            True,
        ),
        (
            {ZONE: "a", "disk": "hdd"},
            "n1",
            [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}],
            zone_term("a"),
            False,
        ),
        # pod terms are ORed: one joined term suffices
        (
            {ZONE: "a", "disk": "hdd"},
            "n1",
            [
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]},
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["hdd"]}]},
            ],
            zone_term("a"),
            True,
        ),
        # matchFields against the node name
        (
            {},
            "n1",
            None,
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
            True,
        ),
        (
            {},
            "n2",
            None,
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
            False,
        ),
        (
            {},
            "n2",
            None,
            {"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]},
            True,
        ),
        # operators
        (
            {"gpu": "4"},
            "n1",
            None,
            {"matchExpressions": [{"key": "gpu", "operator": "Gt", "values": ["2"]}]},
            True,
        ),
        (
            {"gpu": "1"},
            "n1",
            None,
            {"matchExpressions": [{"key": "gpu", "operator": "Gt", "values": ["2"]}]},
            False,
        ),
        (
            {"gpu": "x"},
            "n1",
            None,
            {"matchExpressions": [{"key": "gpu", "operator": "Lt", "values": ["2"]}]},
            False,
        ),
        ({"spot": ""}, "n1", None, {"matchExpressions": [{"key": "spot", "operator": "Exists"}]}, True),
        (
            {"spot": ""},
            "n1",
            None,
            {"matchExpressions": [{"key": "spot", "operator": "DoesNotExist"}]},
            False,
        ),
        ({}, "n1", None, {"matchExpressions": [{"key": ZONE, "operator": "NotIn", "values": ["a"]}]}, True),
        # an empty subset term selects nothing; an unparsable one never matches
        ({ZONE: "a"}, "n1", None, {}, False),
        (
            {ZONE: "a"},
            "n1",
            None,
            {"matchExpressions": [{"key": ZONE, "operator": "In", "values": []}]},
            False,
        ),
        ({ZONE: "a"}, "n1", None, {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}, False),
    ],
)
def test_required_terms_joined_with_subset_term(node_labels, node_name, pod_terms, subset_term, fits):
    subset: dict[str, Any] = {"name": "s"}
    if subset_term is not None:
        subset["requiredNodeSelectorTerm"] = subset_term
    assert fits_required(spread_pod(required=pod_terms), node(node_name, node_labels), subset) is fits


def test_untolerated_taint_fails_even_when_terms_match():
    subset = {"name": "s", "requiredNodeSelectorTerm": zone_term("a")}
    tainted = node(labels={ZONE: "a"}, taints=[{"key": "spot", "effect": "NoSchedule"}])
    assert fits_required(spread_pod(), tainted, subset) is False
    assert subset_score(spread_pod(), tainted, subset, 5) is None


# --- score -----------------------------------------------------------------------------


def preferred(weight: int, *zones: str) -> dict[str, Any]:
    return {"weight": weight, "preference": zone_term(*zones)}


@pytest.mark.parametrize(
    ("terms", "labels", "score"),
    [
        ([], {ZONE: "a"}, 0),
        ([preferred(10, "a")], {ZONE: "a"}, 10),
        ([preferred(10, "a")], {ZONE: "b"}, 0),
        ([preferred(10, "a"), preferred(5, "a", "b")], {ZONE: "a"}, 15),
        ([preferred(10, "a"), preferred(5, "a", "b")], {ZONE: "b"}, 5),
        ([preferred(0, "a")], {ZONE: "a"}, 0),  # weight 0 counts for nothing
        ([{"weight": 7, "preference": {}}], {ZONE: "a"}, 0),  # an empty term matches nothing
    ],
)
def test_preferred_node_score_sums_matching_weights(terms, labels, score):
    assert (
        preferred_node_score({"name": "s", "preferredNodeSelectorTerms": terms}, node(labels=labels)) == score
    )


@pytest.mark.parametrize(
    ("patch", "labels", "expected"),
    [
        (None, {}, False),
        ({"metadata": {"labels": {"pool": "spot"}}}, {"pool": "spot"}, True),
        ({"metadata": {"labels": {"pool": "spot"}}}, {"pool": "od"}, False),
        ({"metadata": {"labels": {"pool": "spot"}}}, {}, False),
        # annotations are left out of the comparison
        ({"metadata": {"annotations": {"a": "1"}}}, {}, True),
        ({"metadata": {"labels": {"pool": "spot"}, "annotations": {"a": "1"}}}, {"pool": "spot"}, True),
        # a spec patch the pod already carries
        ({"spec": {"containers": [{"name": "c", "image": "nginx"}]}}, {}, True),
        ({"spec": {"containers": [{"name": "c", "image": "redis"}]}}, {}, False),
        ({}, {}, True),
        # a patch that does not apply scores nothing
        (["not", "an", "object"], {}, False),
    ],
)
def test_already_patched_ignores_annotations(patch, labels, expected):
    subset: dict[str, Any] = {"name": "s"}
    if patch is not None:
        subset["patch"] = patch
    assert already_patched(spread_pod(labels=labels), subset) is expected


def test_score_weights_preferred_patched_and_room():
    subset = {
        "name": "s",
        "requiredNodeSelectorTerm": zone_term("a"),
        "preferredNodeSelectorTerms": [preferred(3, "a")],
        "patch": {"metadata": {"labels": {"pool": "spot"}}},
    }
    on_a = node(labels={ZONE: "a"})
    assert subset_score(spread_pod(labels={"pool": "spot"}), on_a, subset, 1) == 300 + 10 + 1
    assert subset_score(spread_pod(labels={"pool": "spot"}), on_a, subset, 0) == 310
    assert subset_score(spread_pod(), on_a, subset, -2) == 300
    assert subset_score(spread_pod(), node(labels={ZONE: "b"}), subset, 1) is None


def test_favorite_is_highest_score_then_first_in_order():
    a = {"name": "a"}
    b = {"name": "b", "preferredNodeSelectorTerms": [preferred(1, "z")]}
    c = {"name": "c"}
    n = node(labels={ZONE: "z"})
    assert favorite_subset(spread(a, b, c), spread_pod(), n, {"a": 1, "b": 0, "c": 1})["name"] == "b"
    # equal scores: the first wins
    assert favorite_subset(spread(a, c), spread_pod(), n, {"a": 1, "c": 1})["name"] == "a"
    # room breaks the tie
    assert favorite_subset(spread(a, c), spread_pod(), n, {"a": 0, "c": 1})["name"] == "c"
    # full everywhere: still the first matching subset
    assert favorite_subset(spread(a, c), spread_pod(), n, {"a": 0, "c": -1})["name"] == "a"
    # nothing matches
    only_x = {"name": "x", "requiredNodeSelectorTerm": zone_term("x")}
    assert favorite_subset(spread(only_x), spread_pod(), n, {"x": 5}) is None


@given(
    weights=st.lists(st.integers(min_value=0, max_value=100), min_size=1, max_size=5),
    patched=st.lists(st.booleans(), min_size=5, max_size=5),
    room=st.lists(st.integers(min_value=-3, max_value=3), min_size=5, max_size=5),
)
def test_preferred_weight_dominates_patch_and_room(weights, patched, room):
    """Any preferred weight outranks the patch and room bonuses together, and the favorite's score
    is the maximum (first index on ties)."""
    subsets = []
    for i, w in enumerate(weights):
        s: dict[str, Any] = {"name": f"s{i}", "preferredNodeSelectorTerms": [preferred(w, "z")] if w else []}
        if patched[i]:
            s["patch"] = {"metadata": {"labels": {"pool": "spot"}}}
        else:
            s["patch"] = {"metadata": {"labels": {"pool": f"other-{i}"}}}
        subsets.append(s)
    ws = spread(*subsets)
    the_pod = spread_pod(labels={"pool": "spot"})
    n = node(labels={ZONE: "z"})
    missing = {f"s{i}": room[i] for i in range(len(weights))}
    scores = [subset_score(the_pod, n, s, missing[s["name"]]) for s in subsets]
    best = max(scores)
    assert favorite_subset(ws, the_pod, n, missing)["name"] == f"s{scores.index(best)}"
    for i, score in enumerate(scores):
        assert score // 100 == weights[i]
        assert score % 100 == 10 * patched[i] + (room[i] > 0)


# --- the patch -------------------------------------------------------------------------


def test_adoption_patch_carries_subset_metadata_and_annotation():
    subset = {
        "name": "b",
        "patch": {
            "metadata": {"labels": {"pool": "spot"}, "annotations": {"x": "1"}},
            "spec": {"priority": 5},
        },
    }
    assert adoption_patch(spread(subset), subset) == {
        "metadata": {
            "labels": {"pool": "spot"},
            "annotations": {"x": "1", ANNOTATION_MATCHED: '{"name":"ws","subset":"b"}'},
        }
    }
    assert subset["patch"]["metadata"]["annotations"] == {"x": "1"}  # not changed


@pytest.mark.parametrize("value", ["true", "TRUE", "True"])
def test_ignore_patch_annotation_writes_only_the_matched_annotation(value):
    subset = {"name": "b", "patch": {"metadata": {"labels": {"pool": "spot"}}}}
    ws = spread(subset, annotations={IGNORE_PATCH_EXISTING_PODS: value})
    assert adoption_patch(ws, subset) == {
        "metadata": {"annotations": {ANNOTATION_MATCHED: '{"name":"ws","subset":"b"}'}}
    }


@pytest.mark.parametrize("patch", [None, {}, {"spec": {"priority": 1}}, {"metadata": {"labels": {"a": "b"}}}])
def test_adoption_patch_without_patch_annotations(patch):
    subset: dict[str, Any] = {"name": "b"}
    if patch is not None:
        subset["patch"] = patch
    body = adoption_patch(spread(subset, annotations={IGNORE_PATCH_EXISTING_PODS: "false"}), subset)
    assert body["metadata"]["annotations"] == {ANNOTATION_MATCHED: '{"name":"ws","subset":"b"}'}
    assert body["metadata"].get("labels") == ((patch or {}).get("metadata") or {}).get("labels")


# --- grouping with adoption ------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({}, None),
        ({ANNOTATION_MATCHED: "not json"}, None),
        (matched("a", name="other"), None),
        (matched(""), None),
        (matched("a"), "a"),
        (matched("gone"), "gone"),
    ],
)
def test_annotated_subset(annotations, expected):
    assert annotated_subset(spread({"name": "a"}), spread_pod(annotations=annotations)) == expected


def nodes(**zones: str):
    table = {name: node(name, {ZONE: zone}) for name, zone in zones.items()}
    return table.get


def zoned_spread(a_max: Any = 2, b_max: Any = None, **extra: Any) -> dict[str, Any]:
    a = {"name": "a", "requiredNodeSelectorTerm": zone_term("za"), "maxReplicas": a_max}
    b = {"name": "b", "requiredNodeSelectorTerm": zone_term("zb")}
    if b_max is not None:
        b["maxReplicas"] = b_max
    return spread(a, b, **extra)


def test_unannotated_pods_adopted_by_node_zone():
    pods = [spread_pod("p1", "na"), spread_pod("p2", "nb"), spread_pod("p3", "nc")]
    grouping = group_and_adopt(zoned_spread(), pods, 3, nodes(na="za", nb="zb", nc="zc"))
    assert [(a.pod["metadata"]["name"], a.subset) for a in grouping.adoptions] == [("p1", "a"), ("p2", "b")]
    assert {k: [p["metadata"]["name"] for p in v] for k, v in grouping.by_subset.items()} == {
        NO_SUBSET: ["p3"],
        "a": ["p1"],
        "b": ["p2"],
    }
    assert list(grouping.versioned) == [VERSION_IGNORED]


def test_unbound_pods_and_missing_nodes_are_not_adopted():
    pods = [spread_pod("p1", ""), spread_pod("p2", "ghost")]
    grouping = group_and_adopt(zoned_spread(), pods, 2, nodes(na="za"))
    assert grouping.adoptions == []
    assert len(grouping.by_subset[NO_SUBSET]) == 2


def test_annotated_pods_count_against_quota_before_adoption():
    """Two zone-a subsets: a full one first and one with room; the annotated pods fill the first
    so the old pod lands in the second by the room point, whatever the pods' order."""
    first = {"name": "a1", "requiredNodeSelectorTerm": zone_term("za"), "maxReplicas": 2}
    second = {"name": "a2", "requiredNodeSelectorTerm": zone_term("za"), "maxReplicas": 2}
    ws = spread(first, second)
    old = spread_pod("old", "na", created="2024-01-01T00:00:00Z")
    annotated = [
        spread_pod(f"new{i}", "na", annotations=matched("a1"), created="2024-06-01T00:00:00Z")
        for i in range(2)
    ]
    grouping = group_and_adopt(ws, [old, *annotated], 4, nodes(na="za"))
    assert [(a.pod["metadata"]["name"], a.subset) for a in grouping.adoptions] == [("old", "a2")]
    assert sorted(p["metadata"]["name"] for p in grouping.by_subset["a1"]) == ["new0", "new1"]


def test_adoptions_take_quota_oldest_first():
    first = {"name": "a1", "requiredNodeSelectorTerm": zone_term("za"), "maxReplicas": 1}
    second = {"name": "a2", "requiredNodeSelectorTerm": zone_term("za")}
    ws = spread(first, second)
    pods = [
        spread_pod("young", "na", created="2024-03-01T00:00:00Z"),
        spread_pod("old", "na", created="2024-01-01T00:00:00Z"),
        spread_pod("mid", "na", created="2024-02-01T00:00:00Z"),
    ]
    grouping = group_and_adopt(ws, pods, 3, nodes(na="za"))
    assert [(a.pod["metadata"]["name"], a.subset) for a in grouping.adoptions] == [
        ("old", "a1"),
        ("mid", "a2"),
        ("young", "a2"),
    ]


def test_quota_is_counted_per_version():
    """Upstream groups pods by version before counting: another version's annotated pods leave
    this version's quota untouched."""
    first = {"name": "a1", "requiredNodeSelectorTerm": zone_term("za"), "maxReplicas": 1}
    second = {"name": "a2", "requiredNodeSelectorTerm": zone_term("za")}
    ws = spread(first, second)
    other = spread_pod(
        "v1-pod", "na", labels={"pod-template-hash": "v1"}, annotations=matched("a1"), owner_kind="ReplicaSet"
    )
    old = spread_pod("v2-old", "na", labels={"pod-template-hash": "v2"}, owner_kind="ReplicaSet")
    grouping = group_and_adopt(ws, [other, old], 2, nodes(na="za"))
    assert [(a.pod["metadata"]["name"], a.subset) for a in grouping.adoptions] == [("v2-old", "a1")]
    assert sorted(grouping.versioned) == ["v1", "v2"]
    assert [p["metadata"]["name"] for p in grouping.versioned["v2"]["a1"]] == ["v2-old"]


def test_percent_quota_scaled_by_workload_replicas():
    first = {"name": "a1", "requiredNodeSelectorTerm": zone_term("za"), "maxReplicas": "50%"}
    second = {"name": "a2", "requiredNodeSelectorTerm": zone_term("za")}
    pods = [spread_pod(f"p{i}", "na", created=f"2024-01-0{i + 1}T00:00:00Z") for i in range(3)]
    grouping = group_and_adopt(spread(first, second), pods, 4, nodes(na="za"))
    assert [a.subset for a in grouping.adoptions] == ["a1", "a1", "a2"]


def test_pod_of_removed_subset_is_in_no_subset_and_not_readopted():
    grouping = group_and_adopt(
        zoned_spread(), [spread_pod("p", "na", annotations=matched("gone"))], 2, nodes(na="za")
    )
    assert grouping.adoptions == []
    assert [p["metadata"]["name"] for p in grouping.by_subset[NO_SUBSET]] == ["p"]


def test_pod_of_another_spread_is_adopted():
    grouping = group_and_adopt(
        zoned_spread(), [spread_pod("p", "nb", annotations=matched("a", "other"))], 2, nodes(nb="zb")
    )
    assert [(a.subset, a.patch) for a in grouping.adoptions] == [
        ("b", {"metadata": {"annotations": {ANNOTATION_MATCHED: '{"name":"ws","subset":"b"}'}}})
    ]


def test_replace_swaps_in_patched_pods():
    grouping = group_and_adopt(zoned_spread(), [spread_pod("p", "na")], 1, nodes(na="za"))
    patched = spread_pod("p", "na", annotations=matched("a"))
    grouping.replace({"p": patched})
    assert grouping.by_subset["a"] == [patched]
    assert grouping.versioned[VERSION_IGNORED]["a"] == [patched]


@given(
    zones=st.lists(st.sampled_from(["za", "zb", "zc"]), max_size=12),
    annotated=st.lists(st.booleans(), min_size=12, max_size=12),
    a_max=st.integers(min_value=0, max_value=6),
)
def test_every_pod_grouped_once_and_adoptions_match_node_zone(zones, annotated, a_max):
    """Every pod lands in exactly one group; an adopted pod's subset requires its node's zone; room
    only breaks ties, so when one subset alone matches a node its pods go there even past the quota;
    pods on a node no subset matches stay in no subset."""
    table = {"na": "za", "nb": "zb", "nc": "zc"}
    by_zone = {v: k for k, v in table.items()}
    pods = []
    for i, zone in enumerate(zones):
        ann = matched("a" if zone == "za" else "b") if annotated[i] and zone != "zc" else {}
        pods.append(
            spread_pod(f"p{i:02d}", by_zone[zone], annotations=ann, created=f"2024-01-01T00:00:{i:02d}Z")
        )
    grouping = group_and_adopt(zoned_spread(a_max=a_max), pods, len(pods), nodes(**table))
    names = sorted(p["metadata"]["name"] for group in grouping.by_subset.values() for p in group)
    assert names == sorted(p["metadata"]["name"] for p in pods)
    for adopted in grouping.adoptions:
        zone = table[adopted.pod["spec"]["nodeName"]]
        assert {"a": "za", "b": "zb"}[adopted.subset] == zone
    annotated_a = sum(1 for p in pods if annotated_subset(zoned_spread(), p) == "a")
    adopted_a = sum(1 for a in grouping.adoptions if a.subset == "a")
    zone_a_unannotated = sum(1 for i, z in enumerate(zones) if z == "za" and not annotated[i])
    # only one subset matches zone a: its pods are adopted there even without room
    assert adopted_a == zone_a_unannotated
    assert annotated_a + adopted_a == len(grouping.by_subset["a"])
    assert len(grouping.by_subset[NO_SUBSET]) == sum(1 for z in zones if z == "zc")
