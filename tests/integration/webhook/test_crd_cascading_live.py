"""`policy.kruise.io/delete-protection=Cascading` on a CRD (gate DeletionProtectionForCRDCascadingGate):
kubectl's deletion of the CRD is refused while any of its objects exists, through the live webhook,
and goes through once they are gone."""

from __future__ import annotations

import json

import pytest

PROTECTED = {"policy.kruise.io/delete-protection": "Cascading"}
SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.example.com", "labels": PROTECTED},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": SCHEMA,
            }
        ],
    },
}


def gadget(name: str, namespace: str) -> str:
    return json.dumps(
        {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": name, "namespace": namespace}}
    )


@pytest.fixture
def live_webhook_feature_gates() -> str:
    return "ResourcesDeletionProtection=true,DeletionProtectionForCRDCascadingGate=true"


async def test_a_cascading_crd_is_kept_while_it_has_objects(live_webhook):
    kubectl = live_webhook.kubectl
    await kubectl("apply", "-f", "-", stdin=json.dumps(CRD))
    await kubectl("wait", "--for=condition=Established", "crd/gadgets.example.com", "--timeout=30s")
    await kubectl.namespace("team-a")
    await kubectl.namespace("team-b")
    await kubectl("apply", "-f", "-", stdin=gadget("one", "team-a"))
    await kubectl("apply", "-f", "-", stdin=gadget("two", "team-b"))

    code, _, err = await kubectl("delete", "crd", "gadgets.example.com", check=False)
    assert code != 0
    assert (
        'admission webhook "vcustomresourcedefinition.kb.io" denied the request: forbidden by '
        "ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and active CRs 2>0"
    ) in err

    await kubectl("delete", "gadget", "one", "-n", "team-a")
    code, _, err = await kubectl("delete", "crd", "gadgets.example.com", check=False)
    assert "active CRs 1>0" in err

    await kubectl("delete", "gadget", "two", "-n", "team-b")
    await kubectl("delete", "crd", "gadgets.example.com")
    code, _, _ = await kubectl("get", "crd", "gadgets.example.com", check=False)
    assert code != 0
