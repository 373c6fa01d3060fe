"""PersistentPodState through `kruise sandbox up` (kruise-webhook + kruise-manager as real processes)
and the real kubectl: an Advanced StatefulSet annotated for it gets its PersistentPodState, every
pod's node is recorded, and a deleted pod comes back pinned to its recorded hostname (the required
topology becomes a `nodeSelector`, as upstream's pod webhook injects it; the preferred zone a
preferred node-affinity term), landing on the same node."""

from __future__ import annotations

import json

from harness import Cluster, until

HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
STS = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "metadata": {
        "name": "pps-web",
        "namespace": "default",
        "annotations": {
            "kruise.io/auto-generate-persistent-pod-state": "true",
            "kruise.io/required-persistent-topology": HOST,
            "kruise.io/preferred-persistent-topology": ZONE,
        },
    },
    "spec": {
        "replicas": 3,
        "serviceName": "pps-web",
        "selector": {"matchLabels": {"app": "pps-web"}},
        "template": {
            "metadata": {"labels": {"app": "pps-web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:alpine"}]},
        },
    },
}


async def get_json(cluster: Cluster, *args: str, check: bool = True) -> dict | None:
    code, out = await cluster.kubectl("get", *args, "-o", "json", check=check)
    return json.loads(out) if code == 0 else None


async def test_recreated_pod_goes_back_to_its_node(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(STS))
    await cluster.kubectl("wait", "asts/pps-web", "--for=jsonpath={.status.readyReplicas}=3", "--timeout=90s")

    # the default API set (1.9) serves PersistentPodState at v1alpha1 only (`nodeTopologyKeys`)
    state = await until(
        lambda: get_json(cluster, "persistentpodstate", "pps-web", check=False),
        lambda pps: pps is not None and len((pps.get("status") or {}).get("podStates") or {}) == 3,
        "three pods recorded in PersistentPodState pps-web",
    )
    assert state is not None
    assert state["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert state["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert state["spec"]["requiredPersistentTopology"]["nodeTopologyKeys"] == [HOST]
    recorded = state["status"]["podStates"]
    for name in ("pps-web-0", "pps-web-1", "pps-web-2"):
        _, node = await cluster.kubectl("get", "pod", name, "-o", "jsonpath={.spec.nodeName}")
        assert recorded[name]["nodeName"] == node
        assert recorded[name]["nodeTopologyLabels"][HOST] == node

    old = await get_json(cluster, "pod", "pps-web-1")
    assert old is not None
    node, old_uid = old["spec"]["nodeName"], old["metadata"]["uid"]
    await cluster.kubectl("delete", "pod", "pps-web-1", "--wait=false")

    async def recreated() -> dict | None:
        return await get_json(cluster, "pod", "pps-web-1", check=False)

    new = await until(
        recreated,
        lambda p: p is not None and p["metadata"]["uid"] != old_uid and p["spec"].get("nodeName"),
        "pps-web-1 recreated and scheduled",
        timeout=90,
    )
    assert new is not None
    assert new["metadata"]["annotations"]["kruise.io/injected-persistent-pod-state"] == "pps-web"
    assert new["spec"]["nodeSelector"][HOST] == node
    preferred = new["spec"]["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    zone = recorded["pps-web-1"]["nodeTopologyLabels"][ZONE]
    wanted_zone = {"key": ZONE, "operator": "In", "values": [zone]}
    assert any(wanted_zone in p["preference"]["matchExpressions"] for p in preferred)
    assert new["spec"]["nodeName"] == node
    await cluster.kubectl("wait", "pod/pps-web-1", "--for=condition=Ready", "--timeout=60s")
