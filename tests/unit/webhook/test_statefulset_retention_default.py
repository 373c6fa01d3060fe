"""Advanced StatefulSet defaulting of ``persistentVolumeClaimRetentionPolicy`` follows gate
StatefulSetAutoDeletePVC (beta, on): on, unset fields become Retain; off, the policy is left as
written (absent stays absent), as upstream's SetDefaultsStatefulSet."""

from __future__ import annotations

import pytest

from kruise.api.features import STATEFULSET_AUTO_DELETE_PVC, FeatureGates
from kruise.webhook import registry
from kruise.webhook.admission import AdmissionRequest
from tests.kit.webhook import context

STS = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
        },
    },
}


async def _defaulted(on: bool, policy: dict | None) -> dict:
    obj = {**STS, "spec": {**STS["spec"]}}
    if policy is not None:
        obj["spec"]["persistentVolumeClaimRetentionPolicy"] = policy
    req = AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": "StatefulSet"},
            "resource": {"group": "apps.kruise.io", "version": "v1beta1", "resource": "statefulsets"},
            "name": "web",
            "namespace": "default",
            "operation": "CREATE",
            "object": obj,
        }
    )
    routes = registry.routes(context(gates=FeatureGates({STATEFULSET_AUTO_DELETE_PVC: on}, env={})))
    decision = await routes["/mutate-apps-kruise-io-v1beta1-statefulset"](req)
    assert decision.allowed and decision.mutated is not None, decision.message
    return decision.mutated["spec"]


@pytest.mark.parametrize(
    ("on", "policy", "expected"),
    [
        (True, None, {"whenDeleted": "Retain", "whenScaled": "Retain"}),
        (True, {"whenScaled": "Delete"}, {"whenDeleted": "Retain", "whenScaled": "Delete"}),
        (False, None, None),
        (False, {"whenScaled": "Delete"}, {"whenScaled": "Delete"}),
    ],
)
async def test_retention_policy_defaults_only_with_the_gate(on, policy, expected) -> None:
    spec = await _defaulted(on, policy)
    assert spec.get("persistentVolumeClaimRetentionPolicy") == expected
    assert spec["replicas"] == 1  # the other defaults apply either way
