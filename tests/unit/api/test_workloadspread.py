"""WorkloadSpread: the validating webhook's rules for its own fields, and the CRD."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api import workloadspread as ws
from kruise.api.crdgen import build_crd
from kruise.api.schemacheck import check

BASE = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "WorkloadSpread",
    "metadata": {"name": "ws-demo", "namespace": "default"},
    "spec": {
        "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
        "subsets": [
            {
                "name": "subset-a",
                "requiredNodeSelectorTerm": {
                    "matchExpressions": [
                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}
                    ]
                },
                "maxReplicas": 3,
                "patch": {"metadata": {"labels": {"zone": "a"}}},
            },
            {
                "name": "subset-b",
                "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
            },
        ],
        "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 30}},
    },
}


def _parse(obj: dict) -> ws.WorkloadSpread:
    return ws.WorkloadSpread.model_validate(obj)


def _errors(spec_changes: dict | None = None, **kwargs) -> list[str]:
    obj = copy.deepcopy(BASE)
    obj["spec"].update(spec_changes or {})
    return [str(e) for e in ws.validate(_parse(obj), **kwargs)]


def _subsets(*max_replicas) -> list[dict]:
    subsets = []
    for i, value in enumerate(max_replicas):
        subset = {"name": f"s{i}"}
        if value is not None:
            subset["maxReplicas"] = value
        subsets.append(subset)
    return subsets


def test_valid_object_round_trips_and_fits_the_schema():
    assert _errors() == []
    assert _parse(BASE).to_dict() == BASE
    schema = build_crd(ws.CRD)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert check(BASE, schema).ok
    assert schema["properties"]["spec"]["required"] == ["subsets", "targetRef"]


@pytest.mark.parametrize(
    ("ref", "whitelist", "expected"),
    [
        ({"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, (), None),
        ({"apiVersion": "batch/v1", "kind": "Job", "name": "j"}, (), None),
        ({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "s"}, (), None),
        (
            {"apiVersion": "apps/v1", "kind": "CloneSet", "name": "c"},
            (),
            "TargetReference is not valid for CloneSet.",
        ),
        (
            {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "t"},
            (),
            "TargetReference's GroupKind is not permitted.",
        ),
        ({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "t"}, (("kubeflow.org", "TFJob"),), None),
        (
            {"apiVersion": "apps/v1", "kind": "Deployment"},
            (),
            "empty TargetReference is not valid for WorkloadSpread.",
        ),
    ],
)
def test_target_ref(ref, whitelist, expected):
    errors = _errors({"targetRef": ref, "subsets": _subsets(None)}, whitelist=whitelist)
    if expected is None:
        assert errors == []
    else:
        assert len(errors) == 1
        assert errors[0].startswith("spec.targetRef: Invalid value: {")
        assert errors[0].endswith(expected)


def test_missing_target_ref():
    assert _errors({"targetRef": None, "subsets": _subsets(None)}) == [
        "spec.targetRef: Required value: no targetRef defined in WorkloadSpread"
    ]


@pytest.mark.parametrize(
    ("subsets", "expected"),
    [
        ([], ["spec.subsets: Required value: subsets number must >= 1 in WorkloadSpread"]),
        ([{"name": ""}], ['spec.subsets[0].name: Invalid value: ""']),
        (
            [{"name": "a"}, {"name": "a"}],
            ['spec.subsets[1].name: Invalid value: "a": duplicated subset name a'],
        ),
        (_subsets("30%", "70%"), []),
        (_subsets("30%", None), []),
        (_subsets(1, 2, None), []),
        (
            _subsets(1, "50%"),
            [
                'spec.subsets[1].maxReplicas: Invalid value: "50%": '
                "the maxReplicas type of all subsets must be the same"
            ],
        ),
        (
            _subsets(-1),
            ["spec.subsets[0].maxReplicas: Invalid value: -1: maxReplicas is not valid for subset"],
        ),
        (
            _subsets("abc"),
            ['spec.subsets[0].maxReplicas: Invalid value: "abc": maxReplicas is not valid for subset'],
        ),
        (
            _subsets("60%", "50%"),
            [
                'spec.subsets[1].maxReplicas: Invalid value: "50%": '
                "the sum of all subset's maxReplicas exceeds 100% is no permitted"
            ],
        ),
        (
            _subsets("30%", "60%"),
            [
                'spec.subsets[0].maxReplicas: Invalid value: "30%": '
                "maxReplicas sum of all subsets must equal 100% when type is specified as percent"
            ],
        ),
    ],
)
def test_subset_rules(subsets, expected):
    assert _errors({"subsets": subsets, "scheduleStrategy": None}) == expected


def test_statefulset_needs_integer_quotas():
    ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "s"}
    assert _errors({"targetRef": ref, "subsets": _subsets("100%"), "scheduleStrategy": None}) == [
        'spec.subsets[0].maxReplicas: Invalid value: "100%": the maxReplicas type must be Int for StatefulSet'
    ]


@given(st.lists(st.integers(0, 100), min_size=1, max_size=5))
def test_percent_quotas_must_cover_exactly_100(percents):
    errors = _errors({"subsets": _subsets(*[f"{p}%" for p in percents]), "scheduleStrategy": None})
    running = 0
    expected_ok = True
    for p in percents:
        running += p
        if running > 100:
            expected_ok = False
    if running < 100:
        expected_ok = False
    assert (errors == []) == expected_ok


@pytest.mark.parametrize(
    ("strategy", "subsets", "expected"),
    [
        ({"type": "Fixed"}, _subsets(1, None), []),
        (
            {"type": "Random"},
            _subsets(1, None),
            ['spec.scheduleStrategy.type: Invalid value: "Random": ScheduleStrategy\'s type is not valid'],
        ),
        (
            {"type": "Fixed", "adaptive": {"rescheduleCriticalSeconds": 10}},
            _subsets(1, None),
            [
                "spec.scheduleStrategy.type: Invalid value: 10: "
                "the scheduleStrategy's type must be adaptive when using adaptive scheduleStrategy"
            ],
        ),
        (
            {"type": "Adaptive", "adaptive": {}},
            _subsets(1, 2),
            [
                "spec.scheduleStrategy.adaptive: Invalid value: null: "
                "the last subset's maxReplicas must be not specified when using adaptive scheduleStrategy"
            ],
        ),
        ({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 147}}, _subsets(1, 1, None), []),
        (
            {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 148}},
            _subsets(1, 1, None),
            [
                "spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds: Invalid value: 148: "
                "rescheduleCriticalSeconds < 0 or rescheduleCriticalSeconds > 147 is not permitted"
            ],
        ),
    ],
)
def test_schedule_strategy(strategy, subsets, expected):
    assert _errors({"scheduleStrategy": strategy, "subsets": subsets}) == expected


def test_target_filter_selector_is_checked():
    errors = _errors({"targetFilter": {"selector": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}}})
    assert len(errors) == 1
    assert errors[0].startswith("spec.targetFilter: Invalid value: ")


def test_one_workloadspread_per_workload_and_immutable_target():
    other = copy.deepcopy(BASE)
    other["metadata"]["name"] = "ws-other"
    assert _errors(others=[_parse(BASE), _parse(other)]) == [
        "spec.targetRef: Invalid value: "
        '{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"web"}: '
        "ws.spec.targetRef is in conflict with other WorkloadSpread ws-other"
    ]
    renamed = copy.deepcopy(BASE)
    renamed["spec"]["targetRef"]["name"] = "api"
    assert [str(e) for e in ws.validate_update(_parse(renamed), _parse(BASE))] == [
        "spec.targetRef: Invalid value: "
        '{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","name":"api"}: '
        "change TargetReference is not permitted for WorkloadSpread"
    ]
    new_version = copy.deepcopy(BASE)
    new_version["spec"]["targetRef"]["apiVersion"] = "apps.kruise.io/v1beta1"
    assert ws.validate_update(_parse(new_version), _parse(BASE)) == []


def test_crd_columns():
    crd = build_crd(ws.CRD)
    assert crd["spec"]["names"]["shortNames"] == ["ws"]
    version, beta = crd["spec"]["versions"]  # v1alpha1; v1beta1 is covered by test_crd_versions
    assert beta.get("additionalPrinterColumns") == version.get("additionalPrinterColumns")
    assert beta.get("subresources") == version.get("subresources")
    columns = [(c["name"], c["type"], c["jsonPath"]) for c in version["additionalPrinterColumns"]]
    assert columns == [
        ("WorkloadName", "string", ".spec.targetRef.name"),
        ("WorkloadKind", "string", ".spec.targetRef.kind"),
        ("Adaptive", "boolean", '.spec.scheduleStrategy.type[?(@ == "Adaptive")]'),
        ("Age", "date", ".metadata.creationTimestamp"),
    ]


@pytest.mark.parametrize(
    ("subset", "expected"),
    [
        (
            {
                "name": "a",
                "requiredNodeSelectorTerm": {"matchExpressions": [{"key": "zone", "operator": "In"}]},
            },
            [
                "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Required value: "
                "must be specified when `operator` is 'In' or 'NotIn'"
            ],
        ),
        (
            {
                "name": "a",
                "requiredNodeSelectorTerm": {
                    "matchExpressions": [{"key": "cpu", "operator": "Gt", "values": ["1", "2"]}]
                },
            },
            [
                "spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values: Required value: "
                "must be specified single value when `operator` is 'Lt' or 'Gt'"
            ],
        ),
        (
            {
                "name": "a",
                "requiredNodeSelectorTerm": {
                    "matchFields": [{"key": "spec.nodeName", "operator": "In", "values": ["n1"]}]
                },
            },
            [
                "spec.subsets[0].requiredNodeSelectorTerm.matchFields[0].key: "
                'Invalid value: "spec.nodeName": not a valid field selector key'
            ],
        ),
        (
            {"name": "a", "preferredNodeSelectorTerms": [{"weight": 0, "preference": {}}]},
            [
                "spec.subsets[0].preferredSchedulingTerms[0].weight: Invalid value: 0: "
                "must be in the range 1-100"
            ],
        ),
        ({"name": "a", "tolerations": [{"operator": "Exists"}]}, []),
        (
            {"name": "a", "tolerations": [{"operator": "Equal", "value": "x"}]},
            [
                'spec.subsets[0].tolerations[0].operator: Invalid value: "Equal": '
                "operator must be Exists when "
                '`key` is empty, which means "match all values and all keys"'
            ],
        ),
        (
            {
                "name": "a",
                "tolerations": [
                    {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}
                ],
            },
            [
                'spec.subsets[0].tolerations[0].effect: Invalid value: "NoSchedule": '
                "effect must be 'NoExecute' when `tolerationSeconds` is set"
            ],
        ),
        (
            {"name": "a", "tolerations": [{"key": "k", "operator": "Like", "effect": "Never"}]},
            [
                'spec.subsets[0].tolerations[0].operator: Unsupported value: "Like": '
                'supported values: "Equal", "Exists"',
                'spec.subsets[0].tolerations[0].effect: Unsupported value: "Never": '
                'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
            ],
        ),
    ],
)
def test_subset_scheduling_terms_get_core_validation(subset, expected):
    assert _errors({"subsets": [subset], "scheduleStrategy": None}) == expected
