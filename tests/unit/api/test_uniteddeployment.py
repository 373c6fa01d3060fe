"""UnitedDeployment: upstream's defaults, the webhook's rules for its own fields, and the CRD."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api import uniteddeployment as ud
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

POD = {
    "metadata": {"labels": {"app": "demo"}},
    "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
}
BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "UnitedDeployment",
    "metadata": {"name": "demo", "namespace": "default"},
    "spec": {
        "replicas": 6,
        "selector": {"matchLabels": {"app": "demo"}},
        "template": {
            "advancedStatefulSetTemplate": {
                "metadata": {"labels": {"app": "demo"}},
                "spec": {"selector": {"matchLabels": {"app": "demo"}}, "template": POD},
            }
        },
        "topology": {
            "subsets": [
                {
                    "name": "subset-a",
                    "nodeSelectorTerm": {
                        "matchExpressions": [{"key": "node", "operator": "In", "values": ["zone-a"]}]
                    },
                    "replicas": 1,
                },
                {"name": "subset-b", "replicas": "50%"},
                {"name": "subset-c"},
            ]
        },
        "revisionHistoryLimit": 10,
    },
}


def _parse(obj: dict) -> ud.UnitedDeployment:
    return ud.UnitedDeployment.model_validate(obj)


def _errors(spec_changes: dict | None = None) -> list[str]:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes or {})
    return [str(e) for e in ud.validate(_parse(obj))]


def _subsets(*replicas, field="replicas") -> dict:
    subsets = []
    for i, value in enumerate(replicas):
        subset = {"name": f"s{i}"}
        if value is not None:
            subset[field] = value
        subsets.append(subset)
    return {"subsets": subsets}


def test_defaults_match_upstream():
    obj = copy.deepcopy(BASE)
    del obj["spec"]["revisionHistoryLimit"]
    parsed = _parse(obj)
    ud.set_defaults(parsed)
    spec = parsed.to_dict()["spec"]
    assert spec["revisionHistoryLimit"] == 10
    assert spec["updateStrategy"] == {"type": "Manual", "manualUpdate": {}}
    # only statefulSetTemplate gets pod-template defaults upstream
    assert "dnsPolicy" not in spec["template"]["advancedStatefulSetTemplate"]["spec"]["template"]["spec"]


def test_statefulset_template_gets_pod_and_pvc_defaults():
    obj = copy.deepcopy(BASE)
    template = obj["spec"]["template"].pop("advancedStatefulSetTemplate")
    template["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {}}]
    obj["spec"]["template"]["statefulSetTemplate"] = template
    parsed = _parse(obj)
    ud.set_defaults(parsed)
    sts_spec = parsed.spec.template.stateful_set_template.spec
    assert sts_spec["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert sts_spec["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"


def test_capacity_only_subsets_get_min_replicas_zero():
    obj = copy.deepcopy(BASE)
    obj["spec"]["topology"] = {"subsets": [{"name": "a", "maxReplicas": 2}, {"name": "b"}]}
    parsed = _parse(obj)
    ud.set_defaults(parsed)
    assert [s.min_replicas for s in parsed.spec.topology.subsets] == [0, 0]
    assert ud.validate(parsed) == []


def test_valid_object_round_trips_and_fits_the_schema():
    assert _errors() == []
    assert _parse(BASE).to_dict() == BASE
    crd = build_crd(ud.CRD)
    version, beta = crd["spec"]["versions"]  # v1alpha1; v1beta1 is covered by test_crd_versions
    assert beta.get("additionalPrinterColumns") == version.get("additionalPrinterColumns")
    assert beta.get("subresources") == version.get("subresources")
    assert check(BASE, version["schema"]["openAPIV3Schema"]).ok
    assert version["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.labelSelector",
    }
    assert crd["spec"]["names"]["shortNames"] == ["ud"]
    columns = [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("DESIRED", ".spec.replicas"),
        ("CURRENT", ".status.replicas"),
        ("UPDATED", ".status.updatedReplicas"),
        ("READY", ".status.readyReplicas"),
        ("AGE", ".metadata.creationTimestamp"),
    ]


@pytest.mark.parametrize(
    ("ud_replicas", "value", "expected"),
    [(10, 3, 3), (10, "25%", 3), (10, "35%", 4), (3, "50%", 2), (10, "0%", 0), (10, "100%", 10)],
)
def test_parse_subset_replicas(ud_replicas, value, expected):
    assert ud.parse_subset_replicas(ud_replicas, value) == expected


@pytest.mark.parametrize(
    ("ud_replicas", "value", "message"),
    [
        (10, -1, "subset replicas (-1) should not be less than 0"),
        (-1, "50%", "subsetReplicas (50%) should not be string when unitedDeployment replicas is empty"),
        (10, "5", "subset replicas (5) only support integer value or percentage value with a suffix '%'"),
        (
            10,
            "x%",
            "subset replicas (x%) should be correct percentage integer: "
            'strconv.ParseInt: parsing "x": invalid syntax',
        ),
        (10, "101%", "subset replicas (101%) should be in range [0, 100]"),
    ],
)
def test_parse_subset_replicas_errors(ud_replicas, value, message):
    with pytest.raises(ValueError) as err:
        ud.parse_subset_replicas(ud_replicas, value)
    assert str(err.value) == message


@given(st.integers(0, 1000), st.integers(0, 100))
def test_percent_replicas_round_half_up_and_stay_within_total(total, percent):
    value = ud.parse_subset_replicas(total, f"{percent}%")
    assert 0 <= value <= total
    assert abs(value - total * percent / 100) <= 0.5


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"replicas": -1}, None),
        (
            # upstream: a nil selector converts to "nothing", so the templates' labels mismatch too
            {"selector": None},
            [
                "spec.selector: Required value",
                'spec.template.statefulSetTemplate.metadata.labels: Invalid value: {"app":"demo"}: '
                "`selector` does not match template `labels`",
                "spec.template.advancedStatefulSetTemplate.spec.template.metadata.labels: Invalid value: "
                '{"app":"demo"}: `selector` does not match template `labels`',
            ],
        ),
        (
            {"selector": {}},
            ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"],
        ),
        (
            {"template": {}},
            [
                "spec.template: Required value: should provide one of statefulSetTemplate, "
                "advancedStatefulSetTemplate, cloneSetTemplate, or deploymentTemplate"
            ],
        ),
        (
            {"topology": _subsets(1, 2, 3)},
            [],
        ),
        (
            {"topology": _subsets(4, 3)},
            [
                "spec.topology.subsets: Invalid value: 7: sum of indicated subset replicas 7 should not be "
                "greater than UnitedDeployment replicas 6",
                "spec.topology.subsets: Invalid value: 7: if replicas of all subsets are provided, "
                "the sum of indicated subset replicas 7 should equal UnitedDeployment replicas 6",
            ],
        ),
        (
            {"topology": {"subsets": [{"name": "a", "replicas": 1, "maxReplicas": 3}, {"name": "b"}]}},
            None,
        ),
        (
            {"topology": _subsets(2, 3, field="maxReplicas")},
            ["spec.topology.subsets: Invalid value: 2: at least one subset.maxReplicas must be empty"],
        ),
        (
            {"topology": {"subsets": [{"name": "a", "minReplicas": 4, "maxReplicas": 2}, {"name": "b"}]}},
            [
                "spec.topology.subsets[0].minReplicas: Invalid value: 2: "
                "subset[0].minReplicas must be more than or equal to maxReplicas"
            ],
        ),
        (
            {"topology": {"subsets": [{"name": "a"}, {"name": "a"}]}},
            ['spec.topology.subsets[1].name: Invalid value: "a": duplicated subset name a'],
        ),
        ({"topology": {"subsets": [{"name": "Zone_A"}]}}, None),
        (
            {"updateStrategy": {"type": "Manual", "manualUpdate": {"partitions": {"subset-x": 1}}}},
            ['spec.updateStrategy.partitions: Invalid value: {"subset-x":1}: subset subset-x does not exist'],
        ),
    ],
)
def test_rules(changes, expected):
    errors = _errors(changes)
    if expected is None:
        assert len(errors) >= 1
    else:
        assert errors == expected


def test_replicas_unset_needs_every_subset_replicas():
    obj = copy.deepcopy(BASE)
    del obj["spec"]["replicas"]
    obj["spec"]["topology"] = _subsets(1, None)
    assert [str(e) for e in ud.validate(_parse(obj))] == [
        "spec.topology.subsets: Invalid value: 1: "
        "if UnitedDeployment replicas is not provided, replicas of all subsets should be provided"
    ]


def test_template_labels_must_match_selector():
    obj = copy.deepcopy(BASE)
    obj["spec"]["template"]["advancedStatefulSetTemplate"]["spec"]["template"]["metadata"]["labels"] = {
        "app": "x"
    }
    obj["spec"]["template"]["advancedStatefulSetTemplate"]["metadata"]["labels"] = {"app": "x"}
    assert [str(e) for e in ud.validate(_parse(obj))] == [
        'spec.template.statefulSetTemplate.metadata.labels: Invalid value: {"app":"x"}: '
        "`selector` does not match template `labels`",
        "spec.template.advancedStatefulSetTemplate.spec.template.metadata.labels: "
        'Invalid value: {"app":"x"}: '
        "`selector` does not match template `labels`",
    ]


def test_deployment_template_must_restart_always():
    obj = copy.deepcopy(BASE)
    template = obj["spec"]["template"].pop("advancedStatefulSetTemplate")
    template["spec"]["template"]["spec"]["restartPolicy"] = "OnFailure"
    obj["spec"]["template"]["deploymentTemplate"] = template
    errors = [str(e) for e in ud.validate(_parse(obj))]
    assert errors[-1] == (
        'spec.template.deploymentTemplate.spec.template.spec.restartPolicy: Unsupported value: "OnFailure": '
        'supported values: "Always"'
    )


def test_update_keeps_subset_placement():
    old = _parse(BASE)
    moved = copy.deepcopy(BASE)
    moved["spec"]["topology"]["subsets"][0]["nodeSelectorTerm"] = {"matchExpressions": []}
    moved["spec"]["topology"]["subsets"][1]["tolerations"] = [{"key": "spot", "operator": "Exists"}]
    moved["spec"]["replicas"] = 8
    assert [str(e) for e in ud.validate_update(_parse(moved), old)] == [
        "spec.topology.subsets[0].nodeSelectorTerm: Forbidden: may not be changed in an update",
        "spec.topology.subsets[1].tolerations: Forbidden: may not be changed in an update",
        "spec.topology.subsets[1].tolerations: Forbidden: may not be changed in an update",
    ]


def test_subset_tolerations_and_terms_get_core_validation():
    topology = {
        "subsets": [
            {"name": "a", "replicas": 6, "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
            {
                "name": "b",
                "replicas": 0,
                "nodeSelectorTerm": {"matchExpressions": [{"key": "z", "operator": "Near"}]},
            },
        ]
    }
    errors = _errors({"topology": topology})
    assert errors[0].startswith("spec.topology.subsets[0].tolerations[0].operator: Invalid value: {")
    assert errors[0].endswith("value must be empty when `operator` is 'Exists'")
    assert errors[1:] == [
        'spec.topology.subsets[1].nodeSelectorTerm.matchExpressions[0].operator: Invalid value: "Near": '
        "not a valid selector operator"
    ]


def test_deployment_template_without_restart_policy_is_valid():
    """The pod defaults (restartPolicy: Always) apply to the validated copy, as upstream's
    ConvertPodTemplateSpec; the stored template is left as written."""
    obj = copy.deepcopy(BASE)
    template = obj["spec"]["template"].pop("advancedStatefulSetTemplate")
    template["spec"]["template"]["spec"].pop("restartPolicy", None)
    obj["spec"]["template"]["deploymentTemplate"] = template
    parsed = _parse(obj)
    assert ud.validate(parsed) == []
    pod_spec = parsed.spec.template.deployment_template.spec["template"]["spec"]
    assert "restartPolicy" not in pod_spec
