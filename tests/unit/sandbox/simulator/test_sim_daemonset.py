"""The DaemonSet controller's rules: eligibility, pinning, what to create/delete, rolling budget."""

from __future__ import annotations

from functools import partial
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
from tests.kit.pods import pod


def revision(hash_: str) -> dict[str, str]:
    return {HASH_LABEL: hash_}


# a running, Ready daemon pod of revision h1, with no namespace and an empty creation time
ds_pod = partial(pod, namespace=None, labels=revision("h1"), created="", phase="Running", ready=True)


def ds(**template_spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"name": "a"}], **template_spec}}},
    }


def node(name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None):
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"taints": taints or []}}


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
        ds_pod("a-old", node="a", created="2026-01-01T00:00:00Z"),
        ds_pod("a-new", node="a", created="2026-01-02T00:00:00Z"),
        ds_pod("b-failed", node="b", phase="Failed"),
        ds_pod("c-1", node="c"),
        ds_pod("gone-1", node="gone"),
        ds_pod("d-going", node="d", deleting=True),
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
        ds_pod("a", node="a", labels=revision("old")),
        ds_pod("b", node="b", labels=revision("old")),
        ds_pod("c", node="c", labels=revision("old"), ready=False),
        ds_pod("d", node="d", labels=revision("new")),
    ]
    chosen = rolling_deletions(ds(), "new", pods, desired=4)
    # c is unavailable already (budget 1 used): only c goes now
    assert [p["metadata"]["name"] for p in chosen] == ["c"]
    healthy = [p for p in pods if p["metadata"]["name"] != "c"] + [
        ds_pod("c", node="c", labels=revision("new"))
    ]
    assert [p["metadata"]["name"] for p in rolling_deletions(ds(), "new", healthy, desired=4)] == ["a"]
    on_delete = ds()
    on_delete["spec"]["updateStrategy"] = {"type": "OnDelete"}
    assert rolling_deletions(on_delete, "new", pods, desired=4) == []
