# ruff: noqa: E501  (exact apiserver messages read best unsplit in the tables below)
"""Advanced StatefulSet defaults, validation across both versions, and seed YAML acceptance."""

import copy

import pytest

from kruise.api import statefulset
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check
from kruise.api.statefulset import StatefulSet, StatefulSetV1alpha1


def make(version: str = "v1beta1", **spec_overrides) -> dict:
    spec = {
        "replicas": 3,
        "serviceName": "demo",
        "selector": {"matchLabels": {"app": "demo"}},
        "template": {
            "metadata": {"labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
        },
    }
    spec.update(spec_overrides)
    return {
        "apiVersion": f"apps.kruise.io/{version}",
        "kind": "StatefulSet",
        "metadata": {"name": "d"},
        "spec": spec,
    }


def defaulted(data: dict):
    model = StatefulSet if data["apiVersion"].endswith("v1beta1") else StatefulSetV1alpha1
    obj = model.model_validate(data)
    statefulset.set_defaults(obj)
    return obj


def test_defaults_equal_native_plus_kruise():
    spec = defaulted(make(replicas=None)).to_dict()["spec"]
    assert spec["replicas"] == 1
    assert spec["revisionHistoryLimit"] == 10
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {
            "partition": 0,
            "maxUnavailable": 1,
            "podUpdatePolicy": "ReCreate",
            "minReadySeconds": 0,
        },
    }
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_v1alpha1_defaults_leave_out_v1beta1_only_fields():
    spec = defaulted(make("v1alpha1")).to_dict()["spec"]
    assert "persistentVolumeClaimRetentionPolicy" not in spec
    assert spec["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"] == "ReCreate"


def test_on_delete_gets_no_rolling_update():
    spec = defaulted(make(updateStrategy={"type": "OnDelete"})).to_dict()["spec"]
    assert spec["updateStrategy"] == {"type": "OnDelete"}


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
def test_valid(version):
    assert statefulset.validate(defaulted(make(version))) == []


GATE = {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}

INVALID = [
    ({"replicas": -2}, ["spec.replicas: Invalid value: -2: must be greater than or equal to 0"]),
    ({"podManagementPolicy": "Random"}, ["spec.podManagementPolicy: Invalid value: \"Random\": must be 'OrderedReady' or 'Parallel'"]),
    (
        {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}},
        ["spec.template.spec.readinessGates: Invalid value: []: must contains InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible"],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}},
        ["spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 2: can only work with Parallel PodManagementPolicyType"],
    ),
    (
        {"podManagementPolicy": "Parallel", "updateStrategy": {"rollingUpdate": {"maxUnavailable": "0%"}}},
        ['spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "0%": should not be less than 1'],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"partition": -1}}},
        ["spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0"],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"minReadySeconds": 301}}},
        ["spec.updateStrategy.rollingUpdate.minReadySeconds: Invalid value: 301: must be no more than 300 seconds"],
    ),
    (
        {"updateStrategy": {"rollingUpdate": {"unorderedUpdate": {}}}},
        ["spec.updateStrategy.rollingUpdate.unorderedUpdate: Required value: unorderedUpdate can only work with Parallel PodManagementPolicyType"],
    ),
    (
        {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
        ['spec.updateStrategy.rollingUpdate: Invalid value: {"partition":1}: only allowed for updateStrategy \'RollingUpdate\''],
    ),
    ({"reserveOrdinals": [-1]}, ["spec: Invalid value: [-1]: 0 th reserve ordinal is negative: -1"]),
    ({"reserveOrdinals": ["a-b"]}, ['spec: Invalid value: ["a-b"]: 0 th reserve ordinal is not a valid range: a-b']),
    (
        {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep"}},
        ['spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"'],
    ),
    ({"selector": {"matchLabels": {"app": "x"}}}, ['spec.template.metadata.labels: Invalid value: {"app":"demo"}: `selector` does not match template `labels`']),
]  # fmt: skip


@pytest.mark.parametrize(("overrides", "messages"), INVALID)
def test_invalid(overrides, messages):
    assert [str(e) for e in statefulset.validate(defaulted(make(**overrides)))] == messages


def test_in_place_policy_with_readiness_gate_is_valid():
    data = make(updateStrategy={"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}})
    data["spec"]["template"]["spec"].update(GATE)
    assert statefulset.validate(defaulted(data)) == []


def test_update_rules():
    old = defaulted(make())
    assert statefulset.validate(defaulted(make(replicas=9, reserveOrdinals=[1])), old) == []
    errs = [str(e) for e in statefulset.validate(defaulted(make(serviceName="other")), old)]
    assert len(errs) == 1 and errs[0].startswith(
        "spec: Forbidden: updates to statefulset spec for fields other than"
    )


def test_in_place_only_allows_image_changes_only():
    old = make()["spec"]["template"]
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.26"
    assert statefulset.in_place_only_problem(old, new) is None
    new["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    problem = statefulset.in_place_only_problem(old, new)
    assert problem == (
        "invalid template modified with InPlaceOnly strategy: add /containers/0/env, "
        "currently only image update is allowed for InPlaceOnly"
    )


def _schema(version: str):
    crd = build_crd(statefulset.CRD)
    return next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"]


def test_seed_yaml_is_accepted(seeds_by_kind):
    seeds = seeds_by_kind("StatefulSet")
    assert seeds
    for data in seeds:
        version = data["apiVersion"].split("/")[1]
        report = check(data, _schema(version))
        assert report.ok, (data["metadata"]["name"], report)
        obj = defaulted(copy.deepcopy(data))
        assert statefulset.validate(obj) == [], data["metadata"]["name"]
        assert check(obj.to_dict(), _schema(version)).ok


def test_template_pod_spec_is_not_validated_only_labels():
    """Native StatefulSet validation skips the pod spec (claim templates would fail it) but checks labels."""
    data = make()
    data["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "www", "mountPath": "/www"}]
    assert statefulset.validate(defaulted(data)) == []
    data["spec"]["template"]["metadata"]["labels"]["bad key!"] = "x"
    data["spec"]["selector"] = {"matchLabels": {"app": "demo"}}
    errs = [str(e) for e in statefulset.validate(defaulted(data))]
    assert len(errs) == 1 and errs[0].startswith('spec.template.labels: Invalid value: "bad key!"')
