"""Field mappings of the kinds upstream master moved to v1beta1 last: UnitedDeployment (status per
subset), PersistentPodState, ResourceDistribution and WorkloadSpread (renames, metav1.Condition)."""

from __future__ import annotations

import json

import pytest

from kruise.api.conversion import STASH_ANNOTATION, ConversionError, convert

G = "apps.kruise.io"


def obj(kind: str, version: str, spec: dict | None = None, status: dict | None = None) -> dict:
    out: dict = {"apiVersion": f"{G}/{version}", "kind": kind, "metadata": {"name": "x"}}
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


def stash(o: dict) -> dict | None:
    raw = (o["metadata"].get("annotations") or {}).get(STASH_ANNOTATION)
    return json.loads(raw) if raw else None


# --- UnitedDeployment ---

UD_SPEC = {
    "replicas": 5,
    "selector": {"matchLabels": {"app": "a"}},
    "template": {"cloneSetTemplate": {"metadata": {"labels": {"app": "a"}}, "spec": {"replicas": 1}}},
    "topology": {"subsets": [{"name": "a", "replicas": 2}, {"name": "b"}]},
    "updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"a": 1}}},
}


def test_uniteddeployment_spec_is_the_same_in_both_versions() -> None:
    alpha = obj("UnitedDeployment", "v1alpha1", UD_SPEC)
    assert convert(alpha, "v1beta1") == {**alpha, "apiVersion": f"{G}/v1beta1"}


def test_uniteddeployment_status_maps_move_into_subset_statuses() -> None:
    alpha = obj(
        "UnitedDeployment",
        "v1alpha1",
        UD_SPEC,
        {
            "replicas": 5,
            "currentRevision": "r1",
            "subsetReplicas": {"a": 2, "b": 3},
            "updateStatus": {"updatedRevision": "r2", "currentPartitions": {"a": 1, "b": 0}},
            "subsetStatuses": [{"name": "b", "readyReplicas": 3, "replicas": 3}],
        },
    )
    beta = convert(alpha, "v1beta1")
    assert beta["status"] == {
        "replicas": 5,
        "currentRevision": "r1",
        "updatedRevision": "r2",
        "subsetStatuses": [
            {"name": "b", "readyReplicas": 3, "replicas": 3},
            {"name": "a", "replicas": 2, "partition": 1},
        ],
    }
    assert stash(beta) is not None  # v1alpha1 had no entry for subset a: kept to come back exactly
    assert convert(beta, "v1alpha1") == alpha


def test_uniteddeployment_subset_statuses_rebuild_the_v1alpha1_maps() -> None:
    beta = obj(
        "UnitedDeployment",
        "v1beta1",
        UD_SPEC,
        {
            "replicas": 5,
            "updatedRevision": "r2",
            "subsetStatuses": [
                {"name": "a", "replicas": 2, "partition": 1, "readyReplicas": 2},
                {"name": "b", "replicas": 3},
                {"replicas": 9},  # unnamed: in no map
            ],
        },
    )
    alpha = convert(beta, "v1alpha1")
    assert alpha["status"] == {
        "replicas": 5,
        "subsetStatuses": beta["status"]["subsetStatuses"],
        "subsetReplicas": {"a": 2, "b": 3},
        "updateStatus": {"updatedRevision": "r2", "currentPartitions": {"a": 1, "b": 0}},
    }
    assert stash(alpha) is None  # everything v1beta1 holds has a place in v1alpha1
    assert convert(alpha, "v1beta1") == beta


def test_uniteddeployment_without_revision_or_subsets_has_no_update_status() -> None:
    beta = obj("UnitedDeployment", "v1beta1", UD_SPEC, {"replicas": 0, "currentRevision": "r1"})
    alpha = convert(beta, "v1alpha1")
    assert alpha["status"] == {"replicas": 0, "currentRevision": "r1"}
    only_unnamed = obj("UnitedDeployment", "v1beta1", UD_SPEC, {"subsetStatuses": [{"readyReplicas": 1}]})
    assert convert(only_unnamed, "v1alpha1")["status"]["updateStatus"] == {}


def test_uniteddeployment_v1beta1_edit_of_a_subset_replicas_reaches_v1alpha1() -> None:
    alpha = obj(
        "UnitedDeployment",
        "v1alpha1",
        UD_SPEC,
        {
            "subsetReplicas": {"a": 2},
            "updateStatus": {"updatedRevision": "r1"},
            "subsetStatuses": [{"name": "a"}],
        },
    )
    beta = convert(alpha, "v1beta1")
    beta["status"]["subsetStatuses"][0]["replicas"] = 4
    back = convert(beta, "v1alpha1")
    assert back["status"]["subsetReplicas"] == {"a": 4}


def test_uniteddeployment_bad_status_maps_fail_naming_the_field() -> None:
    alpha = obj("UnitedDeployment", "v1alpha1", UD_SPEC, {"subsetReplicas": {"a": "two"}})
    with pytest.raises(ConversionError) as err:
        convert(alpha, "v1beta1")
    assert err.value.field == "status.subsetReplicas[a]"
    beta = obj("UnitedDeployment", "v1beta1", UD_SPEC, {"subsetStatuses": [{"name": "a", "partition": "1"}]})
    with pytest.raises(ConversionError) as err:
        convert(beta, "v1alpha1")
    assert err.value.field == "status.subsetStatuses[0].partition"


# --- PersistentPodState ---


def pps_spec(key: str) -> dict:
    return {
        "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
        "requiredPersistentTopology": {key: ["topology.kubernetes.io/zone"]},
        "preferredPersistentTopology": [
            {"weight": 100, "preference": {key: ["kubernetes.io/hostname"]}},
            {"weight": 10, "preference": {key: []}},
        ],
        "persistentPodAnnotations": [{"key": "cni.projectcalico.org/podIP"}],
        "persistentPodStateRetentionPolicy": "WhenDeleted",
    }


def test_persistentpodstate_node_topology_keys_become_keys() -> None:
    status = {"observedGeneration": 2, "podStates": {"web-0": {"nodeName": "n1"}}}
    alpha = obj("PersistentPodState", "v1alpha1", pps_spec("nodeTopologyKeys"), status)
    beta = obj("PersistentPodState", "v1beta1", pps_spec("keys"), status)
    assert convert(alpha, "v1beta1") == beta
    assert convert(beta, "v1alpha1") == alpha


def test_persistentpodstate_stray_target_key_is_dropped_and_restored() -> None:
    """`keys` is unknown in v1alpha1: a typed conversion never sees it, so v1beta1 holds only what
    `nodeTopologyKeys` said; the stash brings the stray key back."""
    alpha = obj(
        "PersistentPodState",
        "v1alpha1",
        {"requiredPersistentTopology": {"nodeTopologyKeys": ["a"], "keys": ["b"]}},
    )
    beta = convert(alpha, "v1beta1")
    assert beta["spec"]["requiredPersistentTopology"] == {"keys": ["a"]}
    assert convert(beta, "v1alpha1") == alpha


def test_persistentpodstate_bad_preference_fails_naming_the_field() -> None:
    alpha = obj("PersistentPodState", "v1alpha1", {"preferredPersistentTopology": [{"preference": "zone"}]})
    with pytest.raises(ConversionError) as err:
        convert(alpha, "v1beta1")
    assert err.value.field == "spec.preferredPersistentTopology[0].preference"


# --- ResourceDistribution ---

RESOURCE = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}


def test_resourcedistribution_namespace_label_selector_and_failed_namespace_are_renamed() -> None:
    alpha = obj(
        "ResourceDistribution",
        "v1alpha1",
        {
            "resource": RESOURCE,
            "targets": {
                "includedNamespaces": {"list": [{"name": "a"}]},
                "excludedNamespaces": {"list": [{"name": "b"}]},
                "namespaceLabelSelector": {"matchLabels": {"env": "prod"}},
            },
        },
        {
            "desired": 2,
            "conditions": [
                {"type": "NamespaceNotExists", "status": "True", "failedNamespace": ["a"]},
                {"type": "ConflictOccurred", "status": "False"},
            ],
        },
    )
    beta = convert(alpha, "v1beta1")
    assert beta["spec"]["targets"] == {
        "includedNamespaces": {"list": [{"name": "a"}]},
        "excludedNamespaces": {"list": [{"name": "b"}]},
        "namespaceSelector": {"matchLabels": {"env": "prod"}},
    }
    assert beta["status"]["conditions"][0] == {
        "type": "NamespaceNotExists",
        "status": "True",
        "failedNamespaces": ["a"],
    }
    assert beta["spec"]["resource"] == RESOURCE
    assert stash(beta) is None
    assert convert(beta, "v1alpha1") == alpha


def test_resourcedistribution_empty_failed_namespaces_are_dropped_as_upstream() -> None:
    beta = obj(
        "ResourceDistribution",
        "v1beta1",
        {"resource": RESOURCE, "targets": {"allNamespaces": True}},
        {"conditions": [{"type": "ConflictOccurred", "status": "False", "failedNamespaces": []}]},
    )
    alpha = convert(beta, "v1alpha1")
    assert alpha["status"]["conditions"] == [{"type": "ConflictOccurred", "status": "False"}]
    assert convert(alpha, "v1beta1") == beta  # the empty list comes back from the stash


# --- WorkloadSpread ---


def ws_spec(required: str, preferred: str) -> dict:
    return {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
        "subsets": [
            {
                "name": "zone-a",
                required: {
                    "matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}
                    ]
                },
                preferred: [
                    {"weight": 10, "preference": {"matchExpressions": [{"key": "t", "operator": "Exists"}]}}
                ],
                "maxReplicas": 3,
                "tolerations": [{"key": "t", "operator": "Exists"}],
            },
            {"name": "rest"},
        ],
        "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}},
    }


def test_workloadspread_node_selector_fields_are_renamed() -> None:
    alpha = obj(
        "WorkloadSpread", "v1alpha1", ws_spec("requiredNodeSelectorTerm", "preferredNodeSelectorTerms")
    )
    beta = obj("WorkloadSpread", "v1beta1", ws_spec("requiredNodeSelector", "preferredNodeSelector"))
    assert convert(alpha, "v1beta1") == beta
    assert convert(beta, "v1alpha1") == alpha


CONDITION = {"type": "Schedulable", "status": "False", "lastTransitionTime": "2024-05-01T10:00:00Z"}


def test_workloadspread_conditions_become_metav1_conditions() -> None:
    alpha_status = {
        "observedGeneration": 1,
        "subsetStatuses": [
            {"name": "zone-a", "replicas": 3, "missingReplicas": 1, "conditions": [CONDITION]},
        ],
        "versionedSubsetStatuses": {
            "rev1": [{"name": "zone-a", "replicas": 3, "missingReplicas": 0, "conditions": [CONDITION]}]
        },
    }
    alpha = obj("WorkloadSpread", "v1alpha1", None, alpha_status)
    beta = convert(alpha, "v1beta1")
    meta = {**CONDITION, "reason": "Unknown", "message": ""}
    assert beta["status"]["subsetStatuses"][0]["conditions"] == [meta]
    assert beta["status"]["versionedSubsetStatuses"]["rev1"][0]["conditions"] == [meta]
    assert convert(beta, "v1alpha1") == alpha


def test_workloadspread_condition_observed_generation_is_v1beta1_only() -> None:
    condition = {**CONDITION, "reason": "Full", "message": "no room", "observedGeneration": 4}
    beta = obj(
        "WorkloadSpread",
        "v1beta1",
        None,
        {"subsetStatuses": [{"name": "a", "replicas": 1, "missingReplicas": 0, "conditions": [condition]}]},
    )
    alpha = convert(beta, "v1alpha1")
    assert alpha["status"]["subsetStatuses"][0]["conditions"] == [
        {**CONDITION, "reason": "Full", "message": "no room"}
    ]
    assert stash(alpha) is not None
    assert convert(alpha, "v1beta1") == beta


def test_workloadspread_condition_with_reason_and_message_converts_without_stash() -> None:
    condition = {**CONDITION, "reason": "Full", "message": "no room"}
    alpha = obj(
        "WorkloadSpread",
        "v1alpha1",
        None,
        {"subsetStatuses": [{"name": "a", "replicas": 1, "missingReplicas": 0, "conditions": [condition]}]},
    )
    beta = convert(alpha, "v1beta1")
    assert beta["status"] == alpha["status"]
    assert stash(beta) is None


def test_workloadspread_bad_condition_fails_naming_the_field() -> None:
    alpha = obj(
        "WorkloadSpread",
        "v1alpha1",
        None,
        {"versionedSubsetStatuses": {"r": [{"name": "a", "conditions": [{"type": "S", "reason": 3}]}]}},
    )
    with pytest.raises(ConversionError) as err:
        convert(alpha, "v1beta1")
    assert err.value.field == "status.versionedSubsetStatuses.r[0].conditions[0].reason"
