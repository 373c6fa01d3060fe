"""Kinds served at v1alpha1 and v1beta1: CRD versions, storage, the conversion webhook stanza, and
that converted objects fit the other version's schema (a field the schema lacks would be pruned)."""

from __future__ import annotations

import pytest

from kruise.api.conversion import convert, convertible
from kruise.api.crdgen import build_crd, root_schema
from kruise.api.registry import KINDS
from kruise.api.schemacheck import check
from tests.unit.api.conftest import load_seed_objects

TWO_VERSIONS = {
    "CloneSet",
    "StatefulSet",
    "DaemonSet",
    "SidecarSet",
    "BroadcastJob",
    "AdvancedCronJob",
    "ImagePullJob",
    "ImageListPullJob",
    "NodeImage",
    "ContainerRecreateRequest",
    "PodUnavailableBudget",
    "UnitedDeployment",
    "PersistentPodState",
    "ResourceDistribution",
    "WorkloadSpread",
}
MULTI = [info for info in KINDS if info.kind in TWO_VERSIONS]


def test_the_covered_kinds_are_the_multi_version_ones() -> None:
    assert {info.kind for info in KINDS if len(info.versions) > 1} == TWO_VERSIONS


@pytest.mark.parametrize("info", MULTI, ids=lambda i: i.kind)
def test_versions_storage_and_conversion_webhook(info) -> None:
    crd = build_crd(info)
    versions = [(v["name"], v["served"], v["storage"]) for v in crd["spec"]["versions"]]
    if info.kind == "StatefulSet":  # schema-compatible versions, both served since before /convert existed
        assert versions == [("v1alpha1", True, False), ("v1beta1", True, True)]
    else:  # both served; v1alpha1 stores so kruise's own reads never need /convert (docs/api.md)
        assert versions == [("v1alpha1", True, True), ("v1beta1", True, False)]
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": "kruise-webhook-service",
                    "namespace": "kruise-system",
                    "path": "/convert",
                }
            },
            "conversionReviewVersions": ["v1", "v1beta1"],
        },
    }
    assert convertible(info.group, info.kind)


def test_single_version_kinds_declare_no_conversion() -> None:
    for info in KINDS:
        if info.kind not in TWO_VERSIONS:
            assert "conversion" not in build_crd(info)["spec"], info.kind


SEEDS = [
    obj
    for obj in load_seed_objects()
    if obj["kind"] in TWO_VERSIONS
    and obj["apiVersion"].split("/")[0] in ("apps.kruise.io", "policy.kruise.io")
]


@pytest.mark.parametrize("obj", SEEDS, ids=lambda o: f"{o['kind']}-{o['metadata'].get('name')}")
def test_seed_objects_fit_the_other_version_schema(obj) -> None:
    group, version = obj["apiVersion"].split("/")
    info = next(i for i in MULTI if i.group == group and i.kind == obj["kind"])
    other = "v1beta1" if version == "v1alpha1" else "v1alpha1"
    converted = convert(obj, other)
    report = check(converted, root_schema(info.version(other).model))
    assert report.errors == [] and report.pruned == [], report
    assert convert(converted, version) == obj


WORKLOAD = {"selector": {"matchLabels": {"app": "a"}}, "template": {}}
BETA_ONLY = {
    "DaemonSet": {
        "spec": {**WORKLOAD, "scaleStrategy": {"partitionedScaling": True}},
        "status": {"updateRevision": "r"},
    },
    "SidecarSet": {"spec": {"customVersion": "v2"}},
    "CloneSet": {
        "spec": {
            **WORKLOAD,
            "scaleStrategy": {"enablePVCReuse": True, "excludePreparingDelete": True},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "podUpdatePolicy": "InPlaceIfPossible",
                    "partition": "10%",
                    "inPlaceUpdateStrategy": {"imagePreDownloadParallelism": 2},
                },
            },
        }
    },
    "NodeImage": {"spec": {"images": {"a": {"pullSecrets": [{"name": "s", "mode": "batch"}], "tags": []}}}},
    "ContainerRecreateRequest": {
        "spec": {"podName": "p", "containers": [{"name": "c"}]},
        "status": {
            "phase": "Recreating",
            "containerStatusSnapshot": [{"name": "c", "ready": True, "restartCount": 1}],
            "conditions": [
                {
                    "type": "PreRecreateGrace",
                    "status": "True",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                    "reason": "PreRecreateGrace",
                    "message": "m",
                }
            ],
        },
    },
    "PodUnavailableBudget": {
        "spec": {
            "protectOperations": ["DELETE"],
            "protectTotalReplicas": 3,
            "ignoredPodSelector": {"matchLabels": {"a": "b"}},
        }
    },
    "UnitedDeployment": {
        "spec": {"selector": {"matchLabels": {"app": "a"}}},
        "status": {"updatedRevision": "r2", "subsetStatuses": [{"name": "a", "replicas": 2, "partition": 1}]},
    },
    "PersistentPodState": {
        "spec": {
            "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "s"},
            "requiredPersistentTopology": {"keys": ["topology.kubernetes.io/zone"]},
        }
    },
    "ResourceDistribution": {
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
            "targets": {"namespaceSelector": {"matchLabels": {"a": "b"}}},
        },
        "status": {"conditions": [{"type": "ConflictOccurred", "status": "True", "failedNamespaces": ["n"]}]},
    },
    "WorkloadSpread": {
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "subsets": [{"name": "a", "requiredNodeSelector": {"matchExpressions": []}}],
        },
        "status": {
            "subsetStatuses": [
                {
                    "name": "a",
                    "replicas": 1,
                    "missingReplicas": 0,
                    "conditions": [
                        {
                            "type": "Schedulable",
                            "status": "True",
                            "observedGeneration": 3,
                            "lastTransitionTime": "2024-01-01T00:00:00Z",
                            "reason": "Unknown",
                            "message": "",
                        }
                    ],
                }
            ]
        },
    },
}


@pytest.mark.parametrize("kind", sorted(BETA_ONLY))
def test_v1beta1_only_fields_are_in_the_v1beta1_schema_only(kind: str) -> None:
    info = next(i for i in MULTI if i.kind == kind)
    obj = {"apiVersion": f"{info.group}/v1beta1", "kind": kind, "metadata": {"name": "x"}, **BETA_ONLY[kind]}
    beta_report = check(obj, root_schema(info.version("v1beta1").model))
    assert beta_report.errors == [] and beta_report.pruned == [], beta_report
    alpha_report = check(
        {**obj, "apiVersion": f"{info.group}/v1alpha1"}, root_schema(info.version("v1alpha1").model)
    )
    assert alpha_report.pruned, f"{kind}: v1alpha1 should have no place for {BETA_ONLY[kind]}"
    info.version("v1beta1").model.model_validate(obj)


@pytest.mark.parametrize("info", MULTI, ids=lambda i: i.kind)
def test_both_versions_print_the_same_columns_except_imagepulljob_message(info) -> None:
    """Upstream's v1beta1 printer columns are its v1alpha1 ones, except that ImagePullJob's v1beta1
    drops MESSAGE; kubectl, whose preferred version is v1beta1, prints the v1beta1 set."""
    columns = {v.name: [c.name for c in v.printer_columns] for v in info.versions}
    if info.kind == "ImagePullJob":
        assert columns["v1alpha1"] == [*columns["v1beta1"], "MESSAGE"]
        assert columns["v1beta1"] == ["TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE"]
    else:
        assert columns["v1alpha1"] == columns["v1beta1"]
    subresources = {v.name: (v.status_subresource, v.scale) for v in info.versions}
    assert subresources["v1alpha1"] == subresources["v1beta1"]
