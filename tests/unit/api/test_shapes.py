"""Schemaless embedded objects (pod templates, claim templates, node selector terms, probes ...) have
their JSON types checked when a model parses them: a wrong type is refused naming the inner field, as
upstream's decoder refuses it, instead of reaching defaulting or validation code that walks the dict."""

from __future__ import annotations

import copy

import pytest
from pydantic import ValidationError

from kruise.api import shapes
from kruise.api.cloneset import CloneSet
from kruise.api.uniteddeployment import UnitedDeployment
from kruise.api.validation import aggregate_message, pydantic_errors

CLONESET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "c"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "c"}},
        "template": {
            "metadata": {"labels": {"app": "c"}},
            "spec": {"containers": [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80}]}]},
        },
    },
}


T = "spec.template.spec."


def refusal(model: type, obj: dict) -> str:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(obj)
    return aggregate_message(pydantic_errors(caught.value))


@pytest.mark.parametrize(
    ("where", "wrong", "message"),
    [
        (("containers",), "x", T + 'containers: Invalid value: "x": must be a list'),
        (("containers", 0), "x", T + 'containers[0]: Invalid value: "x": must be an object'),
        (("containers", 0, "image"), 5, T + "containers[0].image: Invalid value: 5: must be a string"),
        (("containers", 0, "ports", 0, "containerPort"), "http",
         T + 'containers[0].ports[0].containerPort: Invalid value: "http": must be an integer'),
        (("containers", 0, "ports", 0, "containerPort"), 2**70,
         T + f"containers[0].ports[0].containerPort: Invalid value: {2**70}: "
         "must be an integer that fits in 64 bits"),
        (("containers",), [None], T + "containers[0]: Invalid value: null: must not be null"),
        (("nodeSelector",), {"zone": 1}, T + 'nodeSelector: Invalid value: {"zone":1}: must be a string'),
    ],
)  # fmt: skip
def test_a_wrong_type_in_a_pod_template_is_refused_naming_the_field(where, wrong, message):
    obj = copy.deepcopy(CLONESET)
    parent = obj["spec"]["template"]["spec"]
    for part in where[:-1]:
        parent = parent[part]
    parent[where[-1]] = wrong
    assert refusal(CloneSet, obj) == message


def test_a_null_object_or_list_reads_as_absent_and_is_dropped():
    """As the apiserver's decoder: `volumes: null` (common in rendered Helm templates) is no volumes."""
    obj = copy.deepcopy(CLONESET)
    obj["spec"]["template"]["spec"]["volumes"] = None
    obj["spec"]["template"]["spec"]["containers"][0]["env"] = None
    template = CloneSet.model_validate(obj).spec.template
    assert "volumes" not in template["spec"] and "env" not in template["spec"]["containers"][0]
    assert obj["spec"]["template"]["spec"]["volumes"] is None  # the request's dict is not changed


def test_a_null_scalar_field_reads_as_absent_as_gos_zero_value():
    """Go decodes `imagePullPolicy: null` to "" (then defaulted) and `name: null` to "" (then refused by
    template validation as Required): a null field is absent, never a type error."""
    obj = copy.deepcopy(CLONESET)
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["imagePullPolicy"] = None
    container["ports"][0]["containerPort"] = None
    parsed = CloneSet.model_validate(obj).spec.template["spec"]["containers"][0]
    assert "imagePullPolicy" not in parsed and "containerPort" not in parsed["ports"][0]


def test_fields_the_shapes_do_not_know_pass_through():
    obj = copy.deepcopy(CLONESET)
    obj["spec"]["template"]["spec"]["someFutureField"] = {"any": ["thing", 1]}
    assert CloneSet.model_validate(obj).spec.template["spec"]["someFutureField"] == {"any": ["thing", 1]}


def test_a_uniteddeployment_subsets_workload_template_and_node_selector_term_are_checked():
    ud = {
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "UnitedDeployment", "metadata": {"name": "u"},
        "spec": {
            "selector": {"matchLabels": {"app": "u"}},
            "template": {
                "deploymentTemplate": {"spec": {"template": {"spec": {"containers": [{"image": 3}]}}}}
            },
            "topology": {"subsets": [{"name": "a", "nodeSelectorTerm": {"matchExpressions": "zone"}}]},
        },
    }  # fmt: skip
    assert refusal(UnitedDeployment, ud) == (
        "[spec.template.deploymentTemplate.spec.template.spec.containers[0].image: Invalid value: 3: "
        "must be a string, spec.topology.subsets[0].nodeSelectorTerm.matchExpressions: "
        'Invalid value: "zone": must be a list]'
    )


def test_mismatches_are_reported_outermost_first_and_maps_at_the_map():
    found = list(shapes.mismatches({"metadata": {"labels": {"a": []}}, "spec": 1}, shapes.POD))
    assert found == [
        ("metadata.labels", {"a": []}, "must be a string"),
        ("spec", 1, "must be an object"),
    ]
