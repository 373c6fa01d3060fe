"""What a WorkloadSpread subset injects into a pod, the deletion costs for scale-in order, and
which WorkloadSpread governs a pod (owner chain, filter)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kruise.control.workloadspread.deletioncost import cost_patch, deletion_costs
from kruise.control.workloadspread.injection import PatchError, inject
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED
from kruise.control.workloadspread.targets import OwnerNotFound, matching_spread, references

ZONE_A = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}


def ws_with(subset: dict[str, Any], target: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "ws", "namespace": "ns"},
        "spec": {
            "targetRef": target
            or {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "app"},
            "subsets": [subset],
        },
    }


def bare_pod() -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns"},
        "spec": {"containers": [{"name": "main", "image": "x"}]},
    }


def test_required_term_becomes_the_only_term() -> None:
    pod = inject(bare_pod(), ws_with({"name": "a", "requiredNodeSelectorTerm": ZONE_A}), "a")
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [ZONE_A]
    assert json.loads(pod["metadata"]["annotations"][ANNOTATION_MATCHED]) == {"name": "ws", "subset": "a"}


def test_required_term_is_anded_into_every_existing_term() -> None:
    pod = bare_pod()
    existing = [
        {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["amd64"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
    ]
    pod["spec"]["affinity"] = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": existing}}
    }
    subset = {
        "name": "a",
        "requiredNodeSelectorTerm": {
            **ZONE_A,
            "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}],
        },
    }
    out = inject(pod, ws_with(subset), "a")
    terms = out["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms[0]["matchExpressions"][-1] == ZONE_A["matchExpressions"][0]
    assert terms[0]["matchFields"] == subset["requiredNodeSelectorTerm"]["matchFields"]
    assert terms[1]["matchExpressions"] == ZONE_A["matchExpressions"]
    assert len(terms[1]["matchFields"]) == 2


def test_preferred_terms_and_tolerations_append() -> None:
    pod = bare_pod()
    pod["spec"]["tolerations"] = [{"key": "x", "operator": "Exists"}]
    preferred = [{"weight": 10, "preference": ZONE_A}]
    tolerations = [{"key": "zone", "operator": "Equal", "value": "a", "effect": "NoSchedule"}]
    out = inject(
        pod, ws_with({"name": "a", "preferredNodeSelectorTerms": preferred, "tolerations": tolerations}), "a"
    )
    assert out["spec"]["tolerations"] == [{"key": "x", "operator": "Exists"}, *tolerations]
    assert (
        out["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        == preferred
    )
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in out["spec"]["affinity"]["nodeAffinity"]


def test_patch_merges_labels_and_container_resources() -> None:
    patch = {
        "metadata": {"labels": {"subset": "a"}, "annotations": {"note": "x"}},
        "spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "2"}}}]},
    }
    out = inject(bare_pod(), ws_with({"name": "a", "patch": patch}), "a", uid="u-1")
    assert out["metadata"]["labels"] == {"subset": "a"}
    assert out["metadata"]["annotations"]["note"] == "x"
    assert out["spec"]["containers"] == [
        {"name": "main", "image": "x", "resources": {"limits": {"cpu": "2"}}}
    ]
    assert json.loads(out["metadata"]["annotations"][ANNOTATION_MATCHED]) == {
        "name": "ws",
        "subset": "a",
        "uid": "u-1",
    }


def test_patch_changing_priority_class_drops_resolved_priority() -> None:
    pod = bare_pod()
    pod["spec"].update(priorityClassName="low", priority=10)
    out = inject(pod, ws_with({"name": "a", "patch": {"spec": {"priorityClassName": "high"}}}), "a")
    assert out["spec"]["priorityClassName"] == "high" and "priority" not in out["spec"]
    same = bare_pod()
    same["spec"].update(priorityClassName="low", priority=10)
    kept = inject(same, ws_with({"name": "a", "patch": {"metadata": {"labels": {"k": "v"}}}}), "a")
    assert kept["spec"]["priority"] == 10


def test_bad_patch_is_an_error() -> None:
    with pytest.raises(PatchError):
        inject(
            bare_pod(), ws_with({"name": "a", "patch": {"spec": {"containers": [{"image": "no-name"}]}}}), "a"
        )


def test_unknown_subset_leaves_pod_alone() -> None:
    pod = bare_pod()
    assert inject(pod, ws_with({"name": "a"}), "zzz") == bare_pod()


# --- deletion cost ---


def running(name: str, ready: bool = True, node: str = "n1") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": f"2024-01-01T00:00:{name[-1]}0Z"},
        "spec": {"nodeName": node},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def costs_by_name(pairs: list[tuple[dict[str, Any], int]]) -> dict[str, int]:
    return {p["metadata"]["name"]: c for p, c in pairs}


def test_costs_rank_subsets_and_surplus() -> None:
    ws = {"spec": {"subsets": [{"name": "a", "maxReplicas": 2}, {"name": "b", "maxReplicas": None}]}}
    pods = {
        "a": [running("a1"), running("a2"), running("a3", ready=False)],
        "b": [running("b1")],
        "": [running("x1")],
    }
    got = costs_by_name(deletion_costs(ws, pods, 0))
    assert got == {"a1": 200, "a2": 200, "a3": -100, "b1": 100, "x1": -300}


def test_old_version_reverses_subset_order() -> None:
    ws = {"spec": {"subsets": [{"name": "a", "maxReplicas": 5}, {"name": "b", "maxReplicas": 5}]}}
    got = costs_by_name(deletion_costs(ws, {"a": [running("a1")], "b": [running("b1")]}, 0, old_version=True))
    assert got == {"a1": 100, "b1": 200}


def test_percent_quota_and_inactive_pods() -> None:
    ws = {"spec": {"subsets": [{"name": "a", "maxReplicas": "50%"}, {"name": "b", "maxReplicas": "50%"}]}}
    done = running("a9")
    done["status"]["phase"] = "Succeeded"
    got = costs_by_name(deletion_costs(ws, {"a": [running("a1"), running("a2"), done]}, 2))
    assert got == {"a1": 200, "a2": -100} or got == {"a1": -100, "a2": 200}
    assert "a9" not in got


def test_cost_patch_skips_unchanged_and_zero() -> None:
    pod = running("p1")
    assert cost_patch(pod, 0) is None
    assert cost_patch(pod, 100) == {
        "metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "100"}}
    }
    pod["metadata"]["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": "100"}
    assert cost_patch(pod, 100) is None
    assert cost_patch(pod, 0) is not None


# --- targets ---

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
RS_REF = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "controller": True}


def rs_lookup(objects: dict[str, dict[str, Any]]) -> Any:
    return lambda ref, ns: objects.get(ref["name"])


def owned_pod(owner: dict[str, Any], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "ns", "labels": labels or {}, "ownerReferences": [owner]},
        "spec": {},
    }


def test_deployment_found_through_its_replicaset() -> None:
    rs = {"metadata": {"name": "web-abc", "ownerReferences": [{**DEPLOY, "controller": True}]}}
    assert references(DEPLOY, RS_REF, "ns", rs_lookup({"web-abc": rs}))
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"}
    deployment = {"metadata": {"name": "web"}}
    assert not references(other, RS_REF, "ns", rs_lookup({"web-abc": rs, "web": deployment}))


def test_missing_owner_in_chain_is_an_error() -> None:
    with pytest.raises(OwnerNotFound, match="ReplicaSet ns/web-abc not found"):
        references(DEPLOY, RS_REF, "ns", rs_lookup({}))


def test_group_matters_not_version() -> None:
    target = {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "db"}
    owner = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet", "name": "db", "controller": True}
    assert references(target, owner, "ns", rs_lookup({}))
    apps = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "controller": True}
    assert not references(target, apps, "ns", rs_lookup({"db": {"metadata": {"name": "db"}}}))


def test_matching_spread_filters() -> None:
    cs_owner = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "name": "app",
        "controller": True,
    }
    ws = ws_with({"name": "a"})
    filtered = ws_with({"name": "a"})
    filtered["spec"]["targetFilter"] = {"selector": {"matchLabels": {"role": "web"}}}
    deleting = ws_with({"name": "a"})
    deleting["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    lookup = rs_lookup({})
    assert matching_spread(owned_pod(cs_owner), [deleting, ws], lookup) is ws
    assert matching_spread(owned_pod(cs_owner), [filtered], lookup) is None
    assert matching_spread(owned_pod(cs_owner, {"role": "web"}), [filtered], lookup) is filtered
    no_selector = ws_with({"name": "a"})
    no_selector["spec"]["targetFilter"] = {}
    assert matching_spread(owned_pod(cs_owner), [no_selector], lookup) is None
    finished = owned_pod(cs_owner)
    finished["status"] = {"phase": "Succeeded"}
    assert matching_spread(finished, [ws], lookup) is None
    pod_of_daemonset = owned_pod(
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "app", "controller": True}
    )
    assert matching_spread(pod_of_daemonset, [ws], lookup) is None
    orphan = owned_pod({**cs_owner, "controller": False})
    assert matching_spread(orphan, [ws], lookup) is None


def test_workload_replicas() -> None:
    from kruise.control.workloadspread.targets import workload_replicas

    ws = ws_with({"name": "a"})
    assert workload_replicas(ws, None) == 0
    assert workload_replicas(ws, {"kind": "CloneSet", "spec": {"replicas": 6}}) == 6
    assert workload_replicas(ws, {"kind": "Job", "spec": {"replicas": 9, "parallelism": 3}}) == 3
    ws["spec"]["targetFilter"] = {"replicasPathList": ["spec.replicas", "spec.extra.0.n", "spec.missing"]}
    assert workload_replicas(ws, {"kind": "CloneSet", "spec": {"replicas": 4, "extra": [{"n": 2}]}}) == 6
