"""PodProbeMarker / NodePodProbe planning: matching pods, probes merged per pod with named ports
resolved, a marker's probes removed, gone pods pruned, results written into the pod."""

from __future__ import annotations

from kruise.control.podprobemarker.probes import (
    apply_results,
    holds_marker,
    matching_pods,
    merge_probes,
    prune_pods,
    remove_marker,
    result_patches,
    same_spec,
    set_marker,
)
from tests.kit.pods import pod


def probed_pod(name, uid=None, labels=None, node="node-1", initialized=True, phase="Running", ip="10.0.0.1"):
    """A web pod whose main container serves http on 8080."""
    return pod(
        name,
        namespace="ns",
        uid=uid or f"uid-{name}",
        labels=labels or {"app": "web"},
        node=node,
        containers=[{"name": "main", "ports": [{"name": "http", "containerPort": 8080}]}],
        phase=phase,
        ip=ip,
        conditions=[{"type": "Initialized", "status": "True" if initialized else "False"}],
    )


def marker(name="ppm", probes=None):
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "probes": probes
            if probes is not None
            else [
                {
                    "name": "healthy",
                    "containerName": "main",
                    "probe": {"exec": {"command": ["cat", "/healthy"]}, "periodSeconds": 5},
                    "podConditionType": "game.io/healthy",
                    "markerPolicy": [
                        {"state": "Succeeded", "labels": {"healthy": "true"}, "annotations": {"ok": "1"}},
                        {"state": "Failed", "labels": {"unhealthy": "true"}},
                    ],
                }
            ],
        },
    }


def test_matching_pods_are_active_initialized_bound_and_selected():
    pods = [
        probed_pod("a"),
        probed_pod("b", initialized=False),
        probed_pod("c", node=""),
        probed_pod("d", phase="Succeeded"),
        probed_pod("e", labels={"app": "db"}),
    ]
    assert [p["metadata"]["name"] for p in matching_pods(marker(), pods)] == ["a"]


def test_probes_merged_per_pod_and_replaced_not_duplicated():
    spec = merge_probes({}, marker(), [probed_pod("a"), probed_pod("b", ip="")])
    assert [e["name"] for e in spec["podProbes"]] == ["a", "b"]
    assert spec["podProbes"][0]["IP"] == "10.0.0.1"
    assert spec["podProbes"][0]["probes"] == [
        {
            "name": "ppm#healthy",
            "containerName": "main",
            "probe": {"exec": {"command": ["cat", "/healthy"]}, "periodSeconds": 5},
        }
    ]
    again = merge_probes(spec, marker(), [probed_pod("a"), probed_pod("b", ip="10.0.0.2")])
    assert [len(e["probes"]) for e in again["podProbes"]] == [1, 1]
    assert again["podProbes"][1]["IP"] == "10.0.0.2"
    other = merge_probes(again, marker("other"), [probed_pod("a")])
    assert [p["name"] for p in other["podProbes"][0]["probes"]] == ["ppm#healthy", "other#healthy"]


def test_named_ports_resolved_and_unknown_names_skipped():
    probes = [
        {"name": "tcp", "containerName": "main", "probe": {"tcpSocket": {"port": "http"}}},
        {"name": "web", "containerName": "main", "probe": {"httpGet": {"port": "nope", "path": "/"}}},
    ]
    spec = merge_probes({}, marker(probes=probes), [probed_pod("a")])
    assert spec["podProbes"][0]["probes"] == [
        {"name": "ppm#tcp", "containerName": "main", "probe": {"tcpSocket": {"port": 8080}}}
    ]


def test_remove_marker_keeps_other_markers_and_namespaces():
    spec = merge_probes(merge_probes({}, marker(), [probed_pod("a")]), marker("other"), [probed_pod("a")])
    spec["podProbes"].append(
        {
            "name": "x",
            "namespace": "ns2",
            "uid": "u",
            "IP": "",
            "probes": [{"name": "ppm#healthy", "containerName": "c", "probe": {}}],
        }
    )
    left = remove_marker(spec, "ns", "ppm")
    assert [[p["name"] for p in e["probes"]] for e in left["podProbes"]] == [
        ["other#healthy"],
        ["ppm#healthy"],
    ]
    assert remove_marker(merge_probes({}, marker(), [probed_pod("a")]), "ns", "ppm") == {}


def test_prune_drops_gone_or_replaced_pods():
    spec = merge_probes({}, marker(), [probed_pod("a"), probed_pod("b")])
    left = prune_pods(spec, lambda ns, name, uid: uid == "uid-a")
    assert [e["name"] for e in left["podProbes"]] == ["a"]


def result(state, name="ppm#healthy", message=""):
    return {
        "name": name,
        "state": state,
        "lastProbeTime": "2026-01-01T00:00:00Z",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "message": message,
    }


def test_success_sets_condition_and_labels_then_failure_flips_them():
    markers = {"ppm": marker()}
    ok = apply_results(probed_pod("a"), [result("Succeeded")], markers.get)
    assert ok["metadata"]["labels"] == {"app": "web", "healthy": "true"}
    assert ok["metadata"]["annotations"] == {"ok": "1"}
    condition = next(c for c in ok["status"]["conditions"] if c["type"] == "game.io/healthy")
    assert condition["status"] == "True"
    assert apply_results(ok, [result("Succeeded")], markers.get) is None
    bad = apply_results(ok, [result("Failed", message="exit 1")], markers.get)
    assert bad["metadata"]["labels"] == {"app": "web", "unhealthy": "true"}
    assert bad["metadata"]["annotations"] == {}
    condition = next(c for c in bad["status"]["conditions"] if c["type"] == "game.io/healthy")
    assert (condition["status"], condition["message"]) == ("False", "exit 1")


def test_results_of_deleted_markers_unknown_probes_and_empty_states_are_ignored():
    assert apply_results(probed_pod("a"), [result("Succeeded")], {}.get) is None
    assert (
        apply_results(probed_pod("a"), [result("Succeeded", name="ppm#other")], {"ppm": marker()}.get) is None
    )
    assert apply_results(probed_pod("a"), [result("")], {"ppm": marker()}.get) is None
    assert apply_results(probed_pod("a"), [result("Succeeded", name="bad")], {"ppm": marker()}.get) is None


def test_set_marker_drops_unmatched_pods_and_removed_probes_and_keeps_others():
    spec = merge_probes({}, marker(), [probed_pod("a"), probed_pod("b")])
    spec = merge_probes(spec, marker("other"), [probed_pod("b")])
    narrowed = marker(probes=[{**marker()["spec"]["probes"][0], "name": "ready"}])
    result = set_marker(spec, narrowed, [probed_pod("a")])
    by_pod = {e["name"]: [p["name"] for p in e["probes"]] for e in result["podProbes"]}
    assert by_pod == {"a": ["ppm#ready"], "b": ["other#healthy"]}
    assert set_marker(spec, marker(), []) == remove_marker(spec, "ns", "ppm")


def test_same_spec_ignores_order_and_set_marker_is_stable():
    spec = merge_probes({}, marker(), [probed_pod("a"), probed_pod("b")])
    spec = merge_probes(spec, marker("other"), [probed_pod("a")])
    again = set_marker(spec, marker(), [probed_pod("a"), probed_pod("b")])
    assert again != spec  # entries re-appended in another order
    assert same_spec(again, spec)
    assert not same_spec(again, set_marker(spec, marker(), [probed_pod("a")]))


def test_holds_marker_is_per_namespace_and_name():
    spec = merge_probes({}, marker(), [probed_pod("a")])
    assert holds_marker(spec, "ns", "ppm")
    assert not holds_marker(spec, "other-ns", "ppm")
    assert not holds_marker(spec, "ns", "pp")
    assert not holds_marker({}, "ns", "ppm")


def test_result_patches_set_and_remove_keys_and_list_changed_conditions():
    before = probed_pod("a", labels={"app": "web", "unhealthy": "true"})
    states = [{"name": "ppm#healthy", "state": "Succeeded", "message": "ok"}]
    after = apply_results(before, states, lambda name: marker() if name == "ppm" else None)
    meta_patch, conditions = result_patches(before, after)
    assert meta_patch == {
        "metadata": {"labels": {"healthy": "true", "unhealthy": None}, "annotations": {"ok": "1"}}
    }
    assert [(c["type"], c["status"], c["message"]) for c in conditions] == [("game.io/healthy", "True", "ok")]
    assert result_patches(after, after) == (None, [])


def test_policies_sharing_a_key_leave_the_matched_value():
    shared = marker(
        probes=[
            {
                "name": "idle",
                "containerName": "main",
                "probe": {"exec": {"command": ["idle"]}},
                "markerPolicy": [
                    {"state": "Succeeded", "labels": {"idle": "true"}, "annotations": {"cost": "-10"}},
                    {"state": "Failed", "labels": {"idle": "false"}, "annotations": {"cost": "10"}},
                ],
            }
        ]
    )
    for state, label, cost in (("Succeeded", "true", "-10"), ("Failed", "false", "10")):
        states = [{"name": "ppm#idle", "state": state}]
        result = apply_results(probed_pod("a"), states, lambda name, m=shared: m)
        assert result["metadata"]["labels"]["idle"] == label
        assert result["metadata"]["annotations"]["cost"] == cost
