"""`/mutate-pod` with gate EnhancedLivenessProbe: only pods controlled by an apps.kruise.io owner are
touched, and only with the gate on (upstream's enhancedLivenessProbeWhenPodCreate)."""

from __future__ import annotations

from typing import Any

from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.handlers.pod import pod_create_handler

CONTEXT = "apps.kruise.io/container-probe-context"
KRUISE_OWNER = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs", "uid": "u",
                "controller": True}  # fmt: skip
APPS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}


def request(owner: dict[str, Any] | None, operation: str = "CREATE") -> AdmissionRequest:
    meta: dict[str, Any] = {"name": "p", "namespace": "ns",
                            "annotations": {"apps.kruise.io/using-enhanced-liveness": "true"}}  # fmt: skip
    if owner:
        meta["ownerReferences"] = [owner]
    pod = {
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "livenessProbe": {"tcpSocket": {"port": 80}}}]},
    }
    return AdmissionRequest.model_validate(
        {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "ns",
            "operation": operation,
            "object": pod,
        }
    )


async def test_a_kruise_owned_pod_loses_its_liveness_probe_to_the_annotation():
    decision = await pod_create_handler(enhanced_liveness=True)(request(KRUISE_OWNER))
    assert decision.mutated is not None
    assert decision.mutated["metadata"]["annotations"][CONTEXT] == (
        '[{"name":"c","livenessProbe":{"tcpSocket":{"port":80}}}]'
    )
    assert "livenessProbe" not in decision.mutated["spec"]["containers"][0]


async def test_other_owners_and_the_gate_off_leave_the_pod_alone():
    for handle, owner in (
        (pod_create_handler(enhanced_liveness=True), APPS_OWNER),
        (pod_create_handler(enhanced_liveness=True), None),
        (pod_create_handler(), KRUISE_OWNER),
    ):
        decision = await handle(request(owner))
        assert decision.allowed
        if decision.mutated is not None:  # e.g. the readiness gate of a kruise-owned pod
            assert CONTEXT not in decision.mutated["metadata"]["annotations"]
            assert "livenessProbe" in decision.mutated["spec"]["containers"][0]
