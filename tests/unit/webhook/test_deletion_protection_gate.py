"""Deletion protection obeys the ResourcesDeletionProtection gate (upstream: off by default since 1.8).

Off, the ``policy.kruise.io/delete-protection`` label means nothing: every webhook that guards
deletions allows them. On, ``Always`` (and ``Cascading`` with live contents) is refused with 403.
"""

from __future__ import annotations

import pytest

from kruise.api.features import RESOURCES_DELETION_PROTECTION, FeatureGates
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionRequest
from tests.kit.webhook import context

LABEL = "policy.kruise.io/delete-protection"
FORBIDDEN = f"forbidden by ResourcesProtectionDeletion for {LABEL}="

# path, group, version, kind, resource, object spec
TARGETS = [
    ("/validate-namespace", "", "v1", "Namespace", "namespaces", {}),
    ("/validate-service", "", "v1", "Service", "services", {}),
    ("/validate-ingress", "networking.k8s.io", "v1", "Ingress", "ingresses", {}),
    ("/validate-apps-deployment", "apps", "v1", "Deployment", "deployments", {"replicas": 2}),
    ("/validate-apps-replicaset", "apps", "v1", "ReplicaSet", "replicasets", {"replicas": 2}),
    ("/validate-apps-statefulset", "apps", "v1", "StatefulSet", "statefulsets", {"replicas": 2}),
    (
        "/validate-customresourcedefinition",
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        {},
    ),
    (
        "/validate-apps-kruise-io-v1alpha1-cloneset",
        "apps.kruise.io",
        "v1alpha1",
        "CloneSet",
        "clonesets",
        {"replicas": 2},
    ),
]


def _delete(group: str, version: str, kind: str, resource: str, spec: dict) -> AdmissionRequest:
    old = {"metadata": {"name": "x", "labels": {LABEL: "Always"}}, "spec": spec}
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "name": "x",
            "operation": "DELETE",
            "oldObject": old,
        }
    )


def test_gate_is_off_by_default() -> None:
    assert not FeatureGates(env={}).enabled(RESOURCES_DELETION_PROTECTION)


@pytest.mark.parametrize(("path", "group", "version", "kind", "resource", "spec"), TARGETS)
@pytest.mark.parametrize("gates", [None, {RESOURCES_DELETION_PROTECTION: False}])
async def test_gate_off_allows_every_protected_deletion(
    path, group, version, kind, resource, spec, gates
) -> None:
    routes = registry.routes(context(gates=FeatureGates(gates or {}, env={})))
    decision = await routes[path](_delete(group, version, kind, resource, spec))
    assert decision.allowed, decision.message


@pytest.mark.parametrize(("path", "group", "version", "kind", "resource", "spec"), TARGETS)
async def test_gate_on_refuses_always(path, group, version, kind, resource, spec) -> None:
    routes = registry.routes(context(gates=FeatureGates({RESOURCES_DELETION_PROTECTION: True}, env={})))
    decision = await routes[path](_delete(group, version, kind, resource, spec))
    assert not decision.allowed
    assert decision.code == 403 and decision.message == FORBIDDEN + "Always"
