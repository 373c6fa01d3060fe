"""A `Cascading` CRD deletion (gate DeletionProtectionForCRDCascadingGate) counts the CRD's live objects
at its storage version, in all namespaces, as upstream's ValidateCRDDeletion does."""

from __future__ import annotations

from kruise.kube.errors import Forbidden
from kruise.kube.resources import ResourceRef
from kruise.webhook.handlers.deletion import crd_storage_resource, validate_crd_deletion

LABEL = "policy.kruise.io/delete-protection"


def crd(label: str | None = "Cascading", scope: str = "Namespaced", storage: str = "v2") -> dict:
    labels = {LABEL: label} if label else {}
    return {
        "metadata": {"name": "gadgets.example.com", "labels": labels},
        "spec": {
            "group": "example.com",
            "scope": scope,
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [
                {"name": "v1", "storage": storage == "v1"},
                {"name": "v2", "storage": storage == "v2"},
            ],
        },
    }


def lister(items: list[dict], seen: list[ResourceRef]):  # type: ignore[no-untyped-def]
    async def list_instances(ref: ResourceRef) -> list[dict]:
        seen.append(ref)
        return items

    return list_instances


def test_the_storage_version_and_scope_name_the_resource():
    assert crd_storage_resource(crd()) == ResourceRef("example.com", "v2", "gadgets", True)
    assert crd_storage_resource(crd(storage="v1", scope="Cluster")) == ResourceRef(
        "example.com", "v1", "gadgets", False
    )
    assert crd_storage_resource({"spec": {"names": {"plural": "x"}, "versions": [{"name": "v1"}]}}) is None


async def test_active_objects_keep_the_crd_and_terminating_ones_do_not_count():
    seen: list[ResourceRef] = []
    items = [
        {"metadata": {"name": "a"}},
        {"metadata": {"name": "b", "deletionTimestamp": "2026-01-01T00:00:00Z"}},
    ]
    message = await validate_crd_deletion(crd(), True, lister(items, seen))
    assert message == f"forbidden by ResourcesProtectionDeletion for {LABEL}=Cascading and active CRs 1>0"
    assert seen == [ResourceRef("example.com", "v2", "gadgets", True)]
    assert await validate_crd_deletion(crd(), True, lister(items[1:], [])) is None


async def test_without_the_gate_cascading_is_refused_and_nothing_is_listed():
    seen: list[ResourceRef] = []
    message = await validate_crd_deletion(crd(), False, lister([{"metadata": {}}], seen))
    assert message == "feature-gate DeletionProtectionForCRDCascadingGate is not enabled"
    assert seen == []


async def test_always_refuses_and_no_label_allows_without_listing():
    seen: list[ResourceRef] = []
    assert await validate_crd_deletion(crd("Always"), True, lister([], seen)) == (
        f"forbidden by ResourcesProtectionDeletion for {LABEL}=Always"
    )
    assert await validate_crd_deletion(crd(None), True, lister([{"metadata": {}}], seen)) is None
    terminating = crd()
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert await validate_crd_deletion(terminating, True, lister([{"metadata": {}}], seen)) is None
    assert seen == []


async def test_a_failed_list_refuses_with_the_reason():
    async def failing(ref: ResourceRef) -> list[dict]:
        raise Forbidden("gadgets.example.com is forbidden: cannot list")

    message = await validate_crd_deletion(crd(), True, failing)
    assert message is not None and message.startswith("failed to list CRs of gadgets.v2.example.com: ")
    assert "cannot list" in message
