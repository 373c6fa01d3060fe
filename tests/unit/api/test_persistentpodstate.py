"""PersistentPodState: the validating webhook's rules and the CRD."""

import copy

import pytest

from kruise.api import persistentpodstate as pps
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "PersistentPodState",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
        "requiredPersistentTopology": {"nodeTopologyKeys": ["kubernetes.io/hostname"]},
        "preferredPersistentTopology": [
            {"weight": 100, "preference": {"nodeTopologyKeys": ["topology.kubernetes.io/zone"]}}
        ],
        "persistentPodStateRetentionPolicy": "WhenScaled",
    },
}


def _parse(obj: dict) -> pps.PersistentPodState:
    return pps.PersistentPodState.model_validate(obj)


def _obj(**spec_changes) -> dict:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes)
    return {k: v for k, v in obj.items()}


def _errors(obj: dict, **kwargs) -> list[str]:
    return [str(e) for e in pps.validate(_parse(obj), **kwargs)]


def test_valid_and_schema_accepted():
    assert _errors(BASE) == []
    schema = build_crd(pps.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(BASE, schema).ok
    assert _parse(BASE).to_dict() == BASE


@pytest.mark.parametrize(
    ("ref", "whitelist", "ok"),
    [
        ({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "w"}, (), True),
        ({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet", "name": "w"}, (), True),
        ({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "w"}, (), False),
        (
            {"apiVersion": "example.com/v1", "kind": "GameServerSet", "name": "w"},
            (("example.com", "GameServerSet"),),
            True,
        ),
        ({"apiVersion": "a/b/c", "kind": "StatefulSet", "name": "w"}, (), False),
    ],
)
def test_target_kinds(ref, whitelist, ok):
    errors = _errors(_obj(targetRef=ref), whitelist=whitelist)
    if ok:
        assert errors == []
    else:
        assert errors == [
            f"spec.TargetReference: Invalid value: {_render(ref)}: "
            "TargetReference.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList"
        ]


def _render(ref: dict) -> str:
    import json

    return json.dumps(ref, sort_keys=True, separators=(",", ":"))


def test_incomplete_target_ref():
    errors = _errors(_obj(targetRef={"apiVersion": "apps/v1", "kind": "StatefulSet"}))
    assert errors == [
        'spec.TargetReference: Invalid value: {"apiVersion":"apps/v1","kind":"StatefulSet"}: '
        "empty TargetReference is not valid for PersistentPodState."
    ]


def test_topology_is_required():
    obj = copy.deepcopy(BASE)
    del obj["spec"]["requiredPersistentTopology"]
    del obj["spec"]["preferredPersistentTopology"]
    errors = _errors(obj)
    assert len(errors) == 1
    assert errors[0].startswith("spec: Invalid value: ")
    assert errors[0].endswith("TopologyConstraint and TopologyPreference cannot be empty at the same time")


def test_target_ref_is_immutable():
    old = _parse(BASE)
    changed = _obj(targetRef={"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "other"})
    assert _errors(changed, old=old) == ["spec.targetRef: Required value: targetRef cannot be modified"]
    assert _errors(_obj(persistentPodStateRetentionPolicy="WhenDeleted"), old=old) == []


def test_one_pps_per_workload_regardless_of_version():
    other = copy.deepcopy(BASE)
    other["metadata"]["name"] = "web-dup"
    other["spec"]["targetRef"]["apiVersion"] = "apps.kruise.io/v1alpha1"
    errors = _errors(BASE, others=[_parse(BASE), _parse(other)])
    assert errors == [
        'spec.targetReference: Invalid value: {"apiVersion":"apps.kruise.io/v1beta1","kind":"StatefulSet",'
        '"name":"web"}: targetReference is in conflict with other PersistentPodState web-dup'
    ]
    native = copy.deepcopy(other)
    native["spec"]["targetRef"]["apiVersion"] = "apps/v1"
    assert _errors(BASE, others=[_parse(native)]) == []


def test_crd_has_no_printer_columns():
    crd = build_crd(pps.CRD)
    assert crd["metadata"]["name"] == "persistentpodstates.apps.kruise.io"
    version, beta = crd["spec"]["versions"]  # v1alpha1; v1beta1 is covered by test_crd_versions
    assert beta.get("additionalPrinterColumns") == version.get("additionalPrinterColumns")
    assert beta.get("subresources") == version.get("subresources")
    assert "additionalPrinterColumns" not in version
    assert version["subresources"] == {"status": {}}
