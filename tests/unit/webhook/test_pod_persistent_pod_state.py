"""Pod CREATE: a recreated StatefulSet pod gets its recorded topology back as a nodeSelector and
preferred node affinity, through the routing table as kruise-webhook serves it."""

from __future__ import annotations

from kruise.webhook import paths, registry
from kruise.webhook.admission import AdmissionRequest
from tests.kit.webhook import context

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"

PPS = {
    "metadata": {"name": "web", "namespace": "ns"},
    "spec": {
        "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
        "requiredPersistentTopology": {"nodeTopologyKeys": [HOST]},
        "preferredPersistentTopology": [{"weight": 100, "preference": {"nodeTopologyKeys": [ZONE]}}],
    },
    "status": {
        "podStates": {"web-1": {"nodeName": "node-3", "nodeTopologyLabels": {HOST: "node-3", ZONE: "z2"}}}
    },
}


def review(name, operation="CREATE"):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1beta1",
                    "kind": "StatefulSet",
                    "name": "web",
                    "uid": "u",
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
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


def handler(states=(PPS,)):
    routes = registry.routes(context(persistent_pod_states=lambda ns: list(states)))
    return routes[paths.POD_MUTATE]


async def test_recorded_pod_is_steered_back_to_its_node_and_zone():
    decision = await handler()(review("web-1"))
    spec = decision.mutated["spec"]
    assert spec["nodeSelector"] == {HOST: "node-3"}
    assert spec["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {
            "weight": 100,
            "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z2"]}]},
        }
    ]
    assert decision.mutated["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"] == "web"


async def test_first_creation_gets_no_affinity():
    decision = await handler()(review("web-2"))
    assert "nodeSelector" not in (decision.mutated or {}).get("spec", {})


async def test_without_the_kind_served_nothing_is_injected():
    routes = registry.routes(context())
    decision = await routes[paths.POD_MUTATE](review("web-1"))
    assert "nodeSelector" not in (decision.mutated or {}).get("spec", {})
