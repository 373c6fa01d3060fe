from kruise.sandbox.apiserver.applyset import (
    changed_paths,
    owned_paths,
    record_manager,
    server_side_apply,
    to_fields_v1,
)


def test_apply_takes_fields_from_other_managers_and_drops_emptied_entries():
    entries = [
        {"manager": "a", "operation": "Update", "fieldsV1": to_fields_v1({("data", "x"), ("data", "y")})},
        {"manager": "b", "operation": "Update", "fieldsV1": to_fields_v1({("data", "z")})},
    ]
    out = record_manager(
        entries, {"manager": "k", "operation": "Apply"}, {("data", "x"), ("data", "z")}, True
    )
    assert [(e["manager"], e["fieldsV1"]) for e in out] == [
        ("a", {"f:data": {"f:y": {}}}),
        ("k", {"f:data": {"f:x": {}, "f:z": {}}}),
    ]


def test_update_owns_only_what_it_changed_and_accumulates():
    old = {"metadata": {"name": "c", "uid": "u"}, "data": {"x": "1", "y": "1"}}
    new = {"metadata": {"name": "c", "uid": "u", "labels": {"l": "v"}}, "data": {"x": "2", "y": "1"}}
    assert changed_paths(old, new) == {("data", "x"), ("metadata", "labels", "l")}
    assert owned_paths({"metadata": {"name": "n"}, "status": {"a": 1}, "spec": {"b": 1}}) == {("spec", "b")}
    first = record_manager([], {"manager": "m", "operation": "Update"}, {("data", "x")}, False)
    second = record_manager(first, {"manager": "m", "operation": "Update"}, {("data", "y")}, False)
    assert second[0]["fieldsV1"] == {"f:data": {"f:x": {}, "f:y": {}}}


def test_reapply_without_a_field_removes_it_unless_another_manager_owns_it():
    live = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "c",
            "managedFields": [
                {
                    "manager": "k",
                    "operation": "Apply",
                    "fieldsV1": to_fields_v1({("data", "a"), ("data", "b")}),
                },
                {"manager": "o", "operation": "Update", "fieldsV1": to_fields_v1({("data", "c")})},
            ],
        },
        "data": {"a": "1", "b": "2", "c": "3"},
    }
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "9"}}
    assert server_side_apply(live, applied, "k", strategic=True)["data"] == {"a": "9", "c": "3"}


def test_reapplying_a_webhook_configuration_keeps_another_managers_ca_bundle():
    """`helm upgrade` applies the chart's webhooks without caBundle; kruise-webhook's must survive."""
    chart = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "kruise-mutating-webhook-configuration"},
        "webhooks": [
            {"name": "mpod.kb.io", "clientConfig": {"service": {"name": "svc", "namespace": "ns"}}},
            {"name": "mcloneset.kb.io", "clientConfig": {"service": {"name": "svc", "namespace": "ns"}}},
        ],
    }
    live = server_side_apply({"metadata": {"name": chart["metadata"]["name"]}}, chart, "helm", True)
    for webhook in live["webhooks"]:
        webhook["clientConfig"]["caBundle"] = "Q0E="  # kruise-webhook's patch
    again = server_side_apply(live, chart, "helm", True)
    assert [w["name"] for w in again["webhooks"]] == ["mpod.kb.io", "mcloneset.kb.io"]
    assert [w["clientConfig"].get("caBundle") for w in again["webhooks"]] == ["Q0E=", "Q0E="]
