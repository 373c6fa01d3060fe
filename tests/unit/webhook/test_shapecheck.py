"""Objects the webhook reads as plain dicts (pods, evictions, the old objects of protected deletions)
are refused with a 400 naming the field when a field has the wrong JSON type — upstream decodes them
into Go structs and answers the decoder's 400 — never with an internal error from a handler walking a
string as if it were a map."""

from __future__ import annotations

import pytest
from webhook_testkit import post, review

PROTECTED = {"policy.kruise.io/delete-protection": "Cascading"}


@pytest.mark.parametrize(
    ("path", "group", "kind", "resource", "old", "message"),
    [
        ("/validate-apps-deployment", "apps", "Deployment", "deployments",
         {"metadata": {"name": "d", "labels": ["x"]}},
         'metadata.labels: Invalid value: ["x"]: must be an object'),
        ("/validate-apps-replicaset", "apps", "ReplicaSet", "replicasets",
         {"metadata": {"name": "r", "labels": PROTECTED}, "spec": "x"},
         'spec: Invalid value: "x": must be an object'),
        ("/validate-namespace", "", "Namespace", "namespaces",
         {"metadata": {"name": "n", "labels": PROTECTED, "finalizers": "x"}},
         'metadata.finalizers: Invalid value: "x": must be a list'),
        ("/validate-service", "", "Service", "services",
         {"metadata": {"name": "s", "labels": {"policy.kruise.io/delete-protection": 1}}},
         'metadata.labels: Invalid value: {"policy.kruise.io/delete-protection":1}: must be a string'),
        ("/validate-customresourcedefinition", "apiextensions.k8s.io", "CustomResourceDefinition",
         "customresourcedefinitions",
         {"metadata": {"name": "c", "labels": PROTECTED}, "spec": {"versions": [None]}},
         "spec.versions[0]: Invalid value: null: must not be null"),
        ("/validate-apps-kruise-io-v1alpha1-cloneset", "apps.kruise.io", "CloneSet", "clonesets",
         {"metadata": {"name": "c", "labels": PROTECTED}, "spec": {"replicas": "3"}},
         'spec.replicas: Invalid value: "3": must be an integer'),
    ],
)  # fmt: skip
async def test_a_malformed_old_object_of_a_deletion_is_a_400_naming_the_field(
    client, path, group, kind, resource, old, message
):
    version = "v1alpha1" if group == "apps.kruise.io" else "v1"
    body = review("DELETE", group=group, version=version, kind=kind, resource=resource, old=old)
    answer = await post(client, path, body)
    assert answer["allowed"] is False
    assert answer["status"] == {"code": 400, "message": message, "reason": "BadRequest"}


async def test_a_pod_with_a_wrong_typed_field_is_a_400_naming_it(client):
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a", "image": "x"}], "readinessGates": "x"},
    }
    body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=pod)
    answer = await post(client, "/mutate-pod", body)
    assert answer["status"]["code"] == 400
    assert answer["status"]["message"] == 'spec.readinessGates: Invalid value: "x": must be a list'


async def test_a_well_formed_deletion_still_reaches_the_protection_check(client):
    old = {"metadata": {"name": "d", "labels": {"policy.kruise.io/delete-protection": "Always"}}}
    body = review("DELETE", group="apps", version="v1", kind="Deployment", resource="deployments", old=old)
    answer = await post(client, "/validate-apps-deployment", body)
    assert answer["status"]["code"] == 403


async def test_a_kind_version_the_kind_does_not_serve_is_a_400_naming_it(client):
    cloneset = {"metadata": {"name": "c"}, "spec": {"replicas": 1}}
    body = review(
        "CREATE", group="apps.kruise.io", version="v9", kind="CloneSet", resource="clonesets", obj=cloneset
    )
    answer = await post(client, "/mutate-apps-kruise-io-cloneset", body)
    assert answer["status"]["code"] == 400
    assert answer["status"]["message"] == (
        'request.kind.version: Unsupported value: "v9": supported values: "v1alpha1", "v1beta1"'
    )
