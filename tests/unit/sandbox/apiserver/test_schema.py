import pytest

from kruise.sandbox.apiserver.schema import apply_defaults, prune, validate

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["selector"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 0, "maximum": 100, "default": 1},
                "selector": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "mode": {"type": "string", "enum": ["A", "B"], "default": "A"},
                "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
                "partition": {"x-kubernetes-int-or-string": True},
                "maybe": {"type": "string", "nullable": True},
                "items": {
                    "type": "array",
                    "maxItems": 2,
                    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        },
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
    },
}


def messages(obj):
    return [f"{c['field']}: {c['message']}" for c in validate(obj, SCHEMA)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"selector": {}, "replicas": -1},
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
        ),
        (
            {"selector": {}, "replicas": 101},
            "spec.replicas: Invalid value: 101: spec.replicas in body should be less than or equal to 100",
        ),
        (
            {"selector": {}, "replicas": "x"},
            'spec.replicas: Invalid value: "x": spec.replicas in body must be of type integer: "string"',
        ),
        ({"selector": {}, "mode": "C"}, 'spec.mode: Unsupported value: "C": supported values: "A", "B"'),
        (
            {"selector": {}, "name": "a"},
            'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long',
        ),
        ({"selector": {}, "name": "abcde"}, "spec.name: Too long: may not be more than 4 bytes"),
        (
            {"selector": {}, "name": "A1"},
            "spec.name: Invalid value: \"A1\": spec.name in body should match '^[a-z]+$'",
        ),
        ({}, "spec.selector: Required value"),
        (
            {"selector": {}, "partition": True},
            "spec.partition: Invalid value: true: "
            'spec.partition in body must be of type integer,string: "boolean"',
        ),
        ({"selector": {}, "items": [{}, {}, {}]}, "spec.items: Too many: 3: must have at most 2 items"),
        (
            {"selector": {}, "labels": {"a": 1}},
            'spec.labels.a: Invalid value: 1: spec.labels.a in body must be of type string: "integer"',
        ),
    ],
)
def test_validation_messages_like_the_apiserver(spec, expected):
    assert messages({"spec": spec}) == [expected]


def test_valid_values_pass():
    assert messages({"spec": {"selector": {"x": 1}, "partition": "50%", "maybe": None, "name": "ab"}}) == []
    assert messages({"spec": {"selector": {}, "partition": 3}}) == []


def test_prune_reports_unknown_and_keeps_preserved_and_embedded():
    obj = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "n"},
        "spec": {
            "selector": {"free": {"form": 1}},
            "bogus": 1,
            "items": [{"k": "v", "z": 2}],
            "template": {"metadata": {"name": "t", "junk": 1}, "anything": 1},
        },
        "extra": 1,
    }
    result = prune(obj, SCHEMA)
    assert sorted(result.unknown) == ["extra", "spec.bogus", "spec.items[0].z"]
    assert obj["spec"]["selector"] == {"free": {"form": 1}}
    assert obj["spec"]["items"] == [{"k": "v"}]
    assert obj["spec"]["template"] == {"metadata": {"name": "t"}, "anything": 1}
    assert "extra" not in obj and obj["metadata"] == {"name": "n"}


def test_defaults_fill_absent_fields_only():
    obj = {"spec": {"selector": {}, "replicas": 5}}
    apply_defaults(obj, SCHEMA)
    assert obj["spec"]["replicas"] == 5 and obj["spec"]["mode"] == "A"
    absent = {}
    apply_defaults(absent, SCHEMA)
    assert absent == {}
