"""The DaemonSet controller's rules: eligibility, pinning, what to create/delete, rolling budget."""

from __future__ import annotations

from typing import Any

import pytest

from kruise.sandbox.simulator.daemonset import (
    HASH_LABEL,
    daemon_tolerations,
    max_unavailable,
    node_of,
    pin_to_node,
    plan_nodes,
    rolling_deletions,
    should_run,
)


def ds(**template_spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"name": "a"}], **template_spec}}},
    }


def node(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None):
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


def pod(name: str, node_name: str, *, ready: bool = True, phase: str = "Running", hash_: str = "h1", **meta):
    return {
        "metadata": {
            "name": name,
            "labels": {HASH_LABEL: hash_},
            "creationTimestamp": meta.get("created", ""),
            **meta,
        },
        "spec": {"nodeName": node_name},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_controller_tolerations_are_added_once_and_network_only_for_host_network():
    own = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    added = daemon_tolerations({"tolerations": own})
    assert sum(t["key"] == "node.kubernetes.io/unschedulable" for t in added) == 1
    assert {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"} in added
    assert not any(t["key"] == "node.kubernetes.io/network-unavailable" for t in added)
    assert any(
        t["key"] == "node.kubernetes.io/network-unavailable"
        for t in daemon_tolerations({"hostNetwork": True})
    )


def test_eligibility_follows_selector_affinity_and_taints():
    tainted = node("n", taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}])
    assert not should_run(ds(), tainted)
    assert should_run(ds(tolerations=[{"operator": "Exists"}]), tainted)
    assert should_run(ds(), node("n", taints=[{"key": "soft", "effect": "PreferNoSchedule"}]))
    assert should_run(
        ds(), node("n", taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}])
    )
    assert not should_run(ds(nodeSelector={"role": "edge"}), node("n"))
    assert should_run(ds(nodeSelector={"role": "edge"}), node("n", {"role": "edge"}))


def test_pinning_replaces_required_terms_and_names_the_node():
    spec: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]
                }
            }
        }
    }
    pin_to_node(spec, "node-7")
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-7"]}]}]
    assert node_of({"spec": spec}) == "node-7"
    assert node_of({"spec": {**spec, "nodeName": "node-8"}}) == "node-8"


def test_plan_creates_missing_and_deletes_failed_extra_misplaced_and_orphaned():
    nodes = [node("a"), node("b"), node("c", {"skip": "1"}), node("d")]
    daemon = ds(nodeSelector={})
    daemon["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}]
            }
        }
    }
    pods = [
        pod("a-old", "a", created="2026-01-01T00:00:00Z"),
        pod("a-new", "a", created="2026-01-02T00:00:00Z"),
        pod("b-failed", "b", phase="Failed"),
        pod("c-1", "c"),
        pod("gone-1", "gone"),
        pod("d-going", "d", deletionTimestamp="2026-01-03T00:00:00Z"),
    ]
    create, delete = plan_nodes(daemon, nodes, pods)
    assert create == ["b", "d"]
    assert sorted(p["metadata"]["name"] for p in delete) == ["a-new", "b-failed", "c-1", "gone-1"]


@pytest.mark.parametrize(
    ("raw", "desired", "expected"), [(1, 10, 1), (3, 10, 3), ("25%", 10, 3), ("10%", 3, 1)]
)
def test_max_unavailable_int_or_percent_rounded_up(raw, desired, expected):
    daemon = ds()
    daemon["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": raw}}
    assert max_unavailable(daemon, desired) == expected


def test_rolling_update_takes_unready_old_pods_first_then_ready_ones_within_budget():
    pods = [
        pod("a", "a", hash_="old"),
        pod("b", "b", hash_="old"),
        pod("c", "c", hash_="old", ready=False),
        pod("d", "d", hash_="new"),
    ]
    chosen = rolling_deletions(ds(), "new", pods, desired=4)
    # c is unavailable already (budget 1 used): only c goes now
    assert [p["metadata"]["name"] for p in chosen] == ["c"]
    healthy = [p for p in pods if p["metadata"]["name"] != "c"] + [pod("c", "c", hash_="new")]
    assert [p["metadata"]["name"] for p in rolling_deletions(ds(), "new", healthy, desired=4)] == ["a"]
    on_delete = ds()
    on_delete["spec"]["updateStrategy"] = {"type": "OnDelete"}
    assert rolling_deletions(on_delete, "new", pods, desired=4) == []
