"""WorkloadSpread through `kruise sandbox up` (kruise-webhook + kruise-manager as real processes) and
the real kubectl: the sandbox's nodes labelled `e2e-zone=zone-a|zone-b|zone-b` first, a
WorkloadSpread over a CloneSet of 5 with subset-a (zone-a, `maxReplicas: 2`) and subset-b (zone-b,
the rest). Each pod is pinned by the pod webhook to its subset's zone and lands there, the
WorkloadSpread status counts 2 + 3, and a scale-in to 3 removes zone-b pods first."""

from __future__ import annotations

import json

from harness import Cluster, until

ZONE_KEY = "e2e-zone"
MATCHED = "apps.kruise.io/matched-workloadspread"


def zone_term(zone: str) -> dict:
    return {"matchExpressions": [{"key": ZONE_KEY, "operator": "In", "values": [zone]}]}


SPREAD = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "WorkloadSpread",
    "metadata": {"name": "ws-demo", "namespace": "default"},
    "spec": {
        "targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "ws-web"},
        "subsets": [
            {"name": "subset-a", "requiredNodeSelectorTerm": zone_term("zone-a"), "maxReplicas": 2},
            {"name": "subset-b", "requiredNodeSelectorTerm": zone_term("zone-b")},
        ],
    },
}
CLONESET = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "ws-web", "namespace": "default"},
    "spec": {
        "replicas": 5,
        "selector": {"matchLabels": {"app": "ws-web"}},
        "template": {
            "metadata": {"labels": {"app": "ws-web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
        },
    },
}


async def get_json(cluster: Cluster, *args: str) -> dict:
    _, out = await cluster.kubectl("get", *args, "-o", "json")
    return json.loads(out)


async def live_pods(cluster: Cluster) -> list[dict]:
    items = (await get_json(cluster, "pods", "-l", "app=ws-web"))["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def subset_of(pod: dict) -> str:
    return json.loads(pod["metadata"]["annotations"][MATCHED])["subset"]


async def test_cloneset_pods_pinned_to_zones_by_subset(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    nodes = sorted(n["metadata"]["name"] for n in (await get_json(cluster, "nodes"))["items"])
    zones = dict(zip(nodes, ("zone-a", "zone-b", "zone-b"), strict=True))
    for node, zone in zones.items():
        await cluster.kubectl("label", "node", node, f"{ZONE_KEY}={zone}", "--overwrite")

    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(SPREAD))
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(CLONESET))
    await cluster.kubectl(
        "wait", "cloneset/ws-web", "--for=jsonpath={.status.readyReplicas}=5", "--timeout=90s"
    )

    pods = await live_pods(cluster)
    assert len(pods) == 5
    by_subset: dict[str, list[dict]] = {}
    for pod in pods:
        by_subset.setdefault(subset_of(pod), []).append(pod)
    assert {name: len(members) for name, members in by_subset.items()} == {"subset-a": 2, "subset-b": 3}
    for name, zone in (("subset-a", "zone-a"), ("subset-b", "zone-b")):
        for pod in by_subset[name]:
            affinity = pod["spec"]["affinity"]["nodeAffinity"]
            terms = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            assert zone_term(zone)["matchExpressions"][0] in terms[0]["matchExpressions"]
            assert zones[pod["spec"]["nodeName"]] == zone

    async def subset_counts() -> list[tuple[str, int]]:
        status = (await get_json(cluster, "workloadspread", "ws-demo")).get("status") or {}
        return [(s["name"], s["replicas"]) for s in status.get("subsetStatuses") or []]

    await until(subset_counts, lambda c: c == [("subset-a", 2), ("subset-b", 3)], "status counting 2 + 3")

    # Scale-in removes pods of the later subset first (the deletion costs the controller writes).
    await cluster.kubectl("scale", "cloneset", "ws-web", "--replicas=3")
    left = await until(lambda: live_pods(cluster), lambda p: len(p) == 3, "CloneSet scaled in to 3")
    assert sorted(subset_of(p) for p in left) == ["subset-a", "subset-a", "subset-b"]
