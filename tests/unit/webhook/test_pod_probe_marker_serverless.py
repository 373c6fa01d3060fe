"""`/mutate-pod` with gate EnablePodProbeMarkerOnServerless: a new pod matching PodProbeMarkers of its
namespace carries their probes (`kruise.io/podprobe`) and names (`kruise.io/podprobemarker-list`),
through the routing table as kruise-webhook serves it; only on CREATE and only with the gate on."""

from __future__ import annotations

import json

from kruise.api.features import FeatureGates
from kruise.webhook import paths, registry
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.handlers.pod import pod_create_handler
from tests.kit.webhook import context

GATE = "EnablePodProbeMarkerOnServerless"
MARKER = {
    "metadata": {"name": "game", "namespace": "ns"},
    "spec": {
        "selector": {"matchLabels": {"app": "game"}},
        "probes": [
            {
                "name": "idle",
                "containerName": "main",
                "probe": {"exec": {"command": ["/idle.sh"]}, "periodSeconds": 5},
                "podConditionType": "game.io/idle",
                "markerPolicy": [{"state": "Succeeded", "labels": {"idle": "true"}}],
            },
            {"name": "sidecar", "containerName": "absent", "probe": {"exec": {"command": ["x"]}},
             "podConditionType": "game.io/sidecar"},
        ],
    },
}  # fmt: skip


def review(labels, operation="CREATE"):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "g1", "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
    }
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "ns",
            "operation": operation,
            "object": pod,
        }
    )


def routed(gate_on, markers=(MARKER,)):
    seen = []

    def in_namespace(namespace):
        seen.append(namespace)
        return list(markers)

    gates = FeatureGates({GATE: gate_on}, env={})
    return registry.routes(context(gates=gates, probe_markers=in_namespace))[paths.POD_MUTATE], seen


async def test_a_matching_pod_carries_the_probes_and_marker_names():
    handle, seen = routed(True)
    decision = await handle(review({"app": "game"}))
    assert seen == ["ns"]  # the namespace comes from the request when the pod has none
    annotations = decision.mutated["metadata"]["annotations"]
    assert json.loads(annotations["kruise.io/podprobe"]) == [
        {
            "name": "idle",
            "containerName": "main",
            "probe": {"exec": {"command": ["/idle.sh"]}, "periodSeconds": 5},
            "podConditionType": "game.io/idle",
        }
    ]
    assert annotations["kruise.io/podprobemarker-list"] == "game"
    assert "namespace" not in decision.mutated["metadata"]


async def test_other_labels_gate_off_or_no_markers_leave_the_pod_alone():
    for handle, labels in (
        (routed(True)[0], {"app": "web"}),
        (routed(False)[0], {"app": "game"}),
        (routed(True, markers=())[0], {"app": "game"}),
    ):
        decision = await handle(review(labels))
        assert decision.allowed
        assert "kruise.io/podprobe" not in ((decision.mutated or {}).get("metadata") or {}).get(
            "annotations", {}
        )


async def test_only_create_is_mutated():
    handle = pod_create_handler(probe_markers=lambda _ns: [MARKER])
    decision = await handle(review({"app": "game"}, operation="UPDATE"))
    assert decision.allowed and decision.mutated is None
