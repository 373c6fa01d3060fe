"""PodProbeMarker on serverless pods: which markers a pod carries, which probes it gets (first wins per
condition type and per container/probe, containers present incl. restartable init ones, marker policy
dropped), the annotation's JSON, marker policies applied from conditions, condition diffs, and the
normal/serverless split by node."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kruise.control.podprobemarker import serverless as sl
from tests.kit.pods import pod

PROBE = "kruise.io/podprobe"
LIST = "kruise.io/podprobemarker-list"


def serverless_pod(
    labels=None, annotations=None, containers=("main", "envoy"), init=(), conditions=(), node="vk-1"
):
    """A web pod on a virtual node. `init`: (name, restartPolicy Always?); `conditions`: (type, status)."""
    return pod(
        namespace="ns",
        labels=dict(labels or {"app": "web"}),
        annotations=dict(annotations or {}),
        node=node,
        containers=[{"name": c} for c in containers],
        initContainers=[
            {"name": name, **({"restartPolicy": "Always"} if always else {})} for name, always in init
        ],
        conditions=[{"type": t, "status": s} for t, s in conditions],
    )


def probe(name, container, condition=None, policies=None, body=None):
    out = {"name": name, "containerName": container, "probe": body or {"exec": {"command": ["/x"]}}}
    if condition:
        out["podConditionType"] = condition
    if policies:
        out["markerPolicy"] = policies
    return out


def marker(name, probes, selector=None):
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}} if selector is None else selector,
            "probes": probes,
        },
    }


IDLE_POLICIES = [
    {"state": "Succeeded", "labels": {"idle": "true"}, "annotations": {"cost": "-10"}},
    {"state": "Failed", "labels": {"idle": "false"}},
]


def test_serverless_node_is_the_virtual_kubelet_label():
    assert sl.is_serverless_node({"metadata": {"labels": {"type": "virtual-kubelet"}}})
    assert not sl.is_serverless_node({"metadata": {"labels": {"type": "real"}}})
    assert not sl.is_serverless_node({"metadata": {}})
    assert not sl.is_serverless_node(None)


def test_markers_by_selector_skip_empty_invalid_and_other_labels_in_name_order():
    markers = [
        marker("b", []),
        marker("a", []),
        marker("empty", [], selector={}),
        marker("other", [], selector={"matchLabels": {"app": "db"}}),
        marker("bad", [], selector={"matchExpressions": [{"key": "app", "operator": "Near"}]}),
        {"metadata": {"name": "none"}, "spec": {"probes": []}},
    ]
    assert [m["metadata"]["name"] for m in sl.markers_for_pod(serverless_pod(), markers)] == ["a", "b"]


def test_markers_listed_on_the_pod_win_over_selectors_and_missing_ones_are_skipped():
    markers = [marker("a", []), marker("x", [], selector={"matchLabels": {"app": "db"}})]
    chosen = sl.markers_for_pod(serverless_pod(annotations={LIST: "x,gone"}), markers)
    assert [m["metadata"]["name"] for m in chosen] == ["x"]


def test_probes_need_a_condition_type_and_a_present_container():
    m = marker("healthy", [probe("healthy", "main"), probe("healthy", "invalid", "game/healthy")])
    assert sl.select_probes(serverless_pod(), [m]) == ([], [])


def test_first_probe_wins_per_condition_type_and_restartable_init_containers_count():
    markers = [
        marker(
            "healthy", [probe("healthy", "main", "game/healthy"), probe("healthy", "envoy", "game/healthy")]
        ),
        marker("init", [probe("init", "init-1", "game/init"), probe("init", "init-2", "game/init")]),
    ]
    probes, names = sl.select_probes(serverless_pod(init=(("init-1", False), ("init-2", True))), markers)
    assert [(p["containerName"], p["podConditionType"]) for p in probes] == [
        ("main", "game/healthy"),
        ("init-2", "game/init"),
    ]
    assert names == ["healthy", "init"]


def test_first_probe_wins_per_container_and_probe_name():
    markers = [
        marker("a", [probe("check", "main", "game/a")]),
        marker("b", [probe("check", "main", "game/b"), probe("other", "main", "game/c")]),
    ]
    probes, names = sl.select_probes(serverless_pod(), markers)
    assert [p["podConditionType"] for p in probes] == ["game/a", "game/c"]
    assert names == ["a", "b"]


def test_annotations_hold_go_ordered_probes_without_marker_policy():
    body = {"periodSeconds": 5, "initialDelaySeconds": 0, "tcpSocket": {"port": 80}}
    m = marker("game", [probe("idle", "main", "game/idle", IDLE_POLICIES, body)])
    new = serverless_pod(annotations={"version": "test"})
    assert sl.annotate_new_pod(new, [m])
    annotations = new["metadata"]["annotations"]
    assert annotations[PROBE] == (
        '[{"name":"idle","containerName":"main","probe":{"tcpSocket":{"port":80},"periodSeconds":5},'
        '"podConditionType":"game/idle"}]'
    )
    assert annotations[LIST] == "game"
    assert annotations["version"] == "test"
    # idempotent: the apiserver may call the webhook again
    assert not sl.annotate_new_pod(new, [m])


def test_no_matching_probe_leaves_the_pod_untouched():
    new = serverless_pod(labels={"app": "db"})
    assert not sl.annotate_new_pod(new, [marker("game", [probe("idle", "main", "game/idle")])])
    assert new["metadata"]["annotations"] == {}


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["p1", "p2", "p3"]),
            st.sampled_from(["main", "envoy", "init-1", "init-2", "ghost"]),
            st.sampled_from(["", "c/a", "c/b", "c/c"]),
        ),
        max_size=8,
    )
)
def test_selected_probes_are_unique_and_target_probed_containers(specs):
    markers = [
        marker(f"m{i}", [probe(name, container, condition)])
        for i, (name, container, condition) in enumerate(specs)
    ]
    target = serverless_pod(init=(("init-1", False), ("init-2", True)))
    probes, names = sl.select_probes(target, markers)
    conditions = [p["podConditionType"] for p in probes]
    keys = [(p["containerName"], p["name"]) for p in probes]
    assert len(set(conditions)) == len(conditions) and "" not in conditions
    assert len(set(keys)) == len(keys)
    assert {p["containerName"] for p in probes} <= {"main", "envoy", "init-2"}
    assert names == sorted(names)
    if probes:
        assert json.loads(sl.probe_json(probes))[0]["name"] == probes[0]["name"]


def test_marks_follow_the_condition_status():
    m = marker("game", [probe("idle", "main", "game/idle", IDLE_POLICIES)])
    assert sl.marks_from_conditions(serverless_pod(conditions=[("game/idle", "True")]), m) == {
        "metadata": {"labels": {"idle": "true"}, "annotations": {"cost": "-10"}}
    }
    assert sl.marks_from_conditions(serverless_pod(conditions=[("game/idle", "False")]), m) == {
        "metadata": {"labels": {"idle": "false"}}
    }


def test_no_condition_unknown_status_or_already_marked_means_no_patch():
    m = marker("game", [probe("idle", "main", "game/idle", IDLE_POLICIES)])
    assert sl.marks_from_conditions(serverless_pod(), m) is None
    assert sl.marks_from_conditions(serverless_pod(conditions=[("game/idle", "Unknown")]), m) is None
    marked = serverless_pod(
        labels={"app": "web", "idle": "true"}, annotations={"cost": "-10"}, conditions=[("game/idle", "True")]
    )
    assert sl.marks_from_conditions(marked, m) is None


def test_marks_only_add_and_overwrite_never_remove():
    policies = [
        {"state": "Succeeded", "labels": {"ok": "yes"}},
        {"state": "Failed", "labels": {"bad": "yes"}},
    ]
    m = marker("game", [probe("idle", "main", "game/idle", policies)])
    was_ok = serverless_pod(labels={"app": "web", "ok": "yes"}, conditions=[("game/idle", "False")])
    assert sl.marks_from_conditions(was_ok, m) == {"metadata": {"labels": {"bad": "yes"}}}


def test_probes_without_condition_type_or_policy_mark_nothing():
    m = marker("game", [probe("idle", "main", None, IDLE_POLICIES), probe("busy", "main", "game/busy")])
    assert sl.marks_from_conditions(serverless_pod(conditions=[("game/busy", "True")]), m) is None


def test_changed_condition_types_are_new_or_changed_status_only():
    old = serverless_pod(conditions=[("Ready", "True"), ("game/idle", "True"), ("gone", "True")])
    new = serverless_pod(conditions=[("Ready", "True"), ("game/idle", "False"), ("game/new", "True")])
    assert sl.changed_condition_types(old, new) == {"game/idle", "game/new"}
    assert sl.changed_condition_types(new, new) == set()


def test_markers_probing_a_changed_condition():
    markers = [marker("a", [probe("x", "main", "game/a")]), marker("b", [probe("y", "main", "game/b")])]
    assert [m["metadata"]["name"] for m in sl.markers_probing(markers, {"game/b"})] == ["b"]


def test_split_by_node_skips_unknown_nodes():
    nodes = {"vk-1": {"metadata": {"labels": {"type": "virtual-kubelet"}}}, "node-1": {"metadata": {}}}
    pods = [serverless_pod(node="vk-1"), serverless_pod(node="node-1"), serverless_pod(node="missing")]
    normal, serverless = sl.split_by_node(pods, nodes.get)
    assert [p["spec"]["nodeName"] for p in normal] == ["node-1"]
    assert [p["spec"]["nodeName"] for p in serverless] == ["vk-1"]
