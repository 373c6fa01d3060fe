"""The schema walker emits structural schemas, and the structural checker catches what is not."""

from typing import Any, Literal

from kruise.api.common import Int64, IntOrString, KruiseModel, KruiseObject, Schemaless, Time
from kruise.api.crdgen import (
    CRDInfo,
    CRDVersion,
    PrinterColumn,
    ScaleSubresource,
    age_column,
    build_crd,
    model_schema,
    structural_errors,
)
from kruise.api.schemacheck import check


class _Spec(KruiseModel):
    replicas: int | None = None
    big: Int64 | None = None
    partition: IntOrString | None = None
    template: Schemaless
    names: list[str] | None = None
    labels: dict[str, str] | None = None
    anything: dict[str, Any] | None = None
    when: Time | None = None


class _Thing(KruiseObject):
    spec: _Spec | None = None


INFO = CRDInfo(
    group="example.kruise.io",
    kind="Thing",
    plural="things",
    short_names=("th",),
    versions=(
        CRDVersion(
            "v1alpha1",
            _Thing,
            printer_columns=(PrinterColumn("DESIRED", "integer", ".spec.replicas"), age_column()),
            scale=ScaleSubresource(),
        ),
    ),
)


def test_schema_shapes():
    crd = build_crd(INFO)
    assert crd["metadata"]["name"] == "things.example.kruise.io"
    version = crd["spec"]["versions"][0]
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    props = spec["properties"]
    assert props["replicas"] == {"type": "integer", "format": "int32"}
    assert props["big"] == {"type": "integer", "format": "int64"}
    assert props["partition"]["x-kubernetes-int-or-string"] is True
    assert props["template"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert props["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert props["when"] == {"type": "string", "format": "date-time"}
    assert spec["required"] == ["template"]
    assert version["subresources"] == {
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.labelSelector",
        },
        "status": {},
    }
    assert version["additionalPrinterColumns"][1] == {
        "jsonPath": ".metadata.creationTimestamp",
        "name": "AGE",
        "type": "date",
    }
    assert crd["spec"]["names"] == {
        "kind": "Thing",
        "listKind": "ThingList",
        "plural": "things",
        "singular": "thing",
        "shortNames": ["th"],
    }
    assert structural_errors(version["schema"]["openAPIV3Schema"]) == []


def test_structural_checker_rejects_bad_schemas():
    assert structural_errors({"type": "object", "properties": {"a": {}}})
    assert structural_errors({"anyOf": [{"type": "integer"}, {"type": "string"}]})
    assert structural_errors({"type": "array"})
    assert structural_errors({"$ref": "#/x"})
    assert structural_errors({"type": "object", "required": ["x"]})


def test_schema_check_reports_type_errors_and_pruning():
    schema = build_crd(INFO)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    good = {
        "apiVersion": "example.kruise.io/v1alpha1",
        "kind": "Thing",
        "metadata": {"name": "a"},
        "spec": {"replicas": 1, "partition": "10%", "template": {"x": {"y": 1}}},
    }
    assert check(good, schema).ok
    bad = {"spec": {"replicas": "one", "template": {}, "extra": 1}}
    report = check(bad, schema)
    assert report.errors == ["spec.replicas: Invalid value: must be of type integer"]
    assert report.pruned == ["spec.extra"]
    assert check({"spec": {}}, schema).errors == ["spec.template: Required value"]


class _Described(KruiseModel):
    mode: str | None = None
    """How it runs."""


class _Narrowed(_Described):
    mode: Literal["Fast"] | None = None


def test_a_field_narrowed_without_a_docstring_keeps_the_base_description():
    assert model_schema(_Narrowed)["properties"]["mode"]["description"] == "How it runs."
