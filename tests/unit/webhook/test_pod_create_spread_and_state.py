"""Pod CREATE with both WorkloadSpread and PersistentPodState governing one recreated Advanced
StatefulSet pod, through the routing table: the readiness gate, the WorkloadSpread subset (required
zone term and annotation) and the recorded topology (nodeSelector, preferred zone) all land in the
one patch, in upstream's order — WorkloadSpread before PersistentPodState."""

from __future__ import annotations

import json

from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED
from kruise.webhook import paths, registry
from tests.kit.webhook import context
from tests.unit.webhook.test_pod_persistent_pod_state import HOST, PPS, ZONE, review
from tests.unit.webhook.test_workloadspread_pods import setup, workloadspread, zone


async def test_spread_subset_and_persistent_state_both_injected():
    ws = workloadspread(("a", 1), ("b", None), kind="StatefulSet", api="apps.kruise.io/v1beta1")
    ws["spec"]["targetRef"]["name"] = "web"  # the pods' Advanced StatefulSet
    client, _, keeper = setup(ws)
    routes = registry.routes(context(spreads=keeper, persistent_pod_states=lambda ns: [PPS]))
    decision = await routes[paths.POD_MUTATE](review("web-1"))
    pod = decision.mutated
    spec = pod["spec"]
    # ordinal 1: subset a holds ordinal 0 only, so subset b
    assert json.loads(pod["metadata"]["annotations"][ANNOTATION_MATCHED]) == {"name": "ws", "subset": "b"}
    affinity = spec["affinity"]["nodeAffinity"]
    assert affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [zone("b")]
    assert spec["nodeSelector"] == {HOST: "node-3"}
    assert affinity["preferredDuringSchedulingIgnoredDuringExecution"] == [
        {
            "weight": 100,
            "preference": {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z2"]}]},
        }
    ]
    assert {"conditionType": "KruisePodReady"} in spec["readinessGates"]
    assert pod["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"] == "web"
    assert client.writes == []  # StatefulSet pods are placed by ordinal, not booked
