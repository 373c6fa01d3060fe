"""Seed 001's multi-zone deployment ("跨多可用区部署": one global workload, a sub-workload per zone,
replicas managed as a whole), through `kruise sandbox up` and the real kubectl.

The seed describes UnitedDeployment without a manifest, so the UnitedDeployment here follows
upstream's own tutorial shape: three subsets pinned by an `az` node label to zone-a/b/c, with
`replicas: 2`, `replicas: 50%` and the rest. The sandbox's three nodes are labelled
`az=zone-a|b|c` first. The template is a `deploymentTemplate` (the sandbox runs Deployments);
the per-zone children, their replicas and where their pods land are checked, then a rescale.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import Cluster

UD = """
apiVersion: apps.kruise.io/v1alpha1
kind: UnitedDeployment
metadata:
  name: sample-ud
  namespace: default
spec:
  replicas: {replicas}
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app: sample
  template:
    deploymentTemplate:
      metadata:
        labels:
          app: sample
      spec:
        template:
          metadata:
            labels:
              app: sample
          spec:
            containers:
            - name: nginx
              image: nginx:alpine
  topology:
    subsets:
    - name: subset-a
      nodeSelectorTerm:
        matchExpressions:
        - key: az
          operator: In
          values: [zone-a]
      replicas: 2
    - name: subset-b
      nodeSelectorTerm:
        matchExpressions:
        - key: az
          operator: In
          values: [zone-b]
      replicas: 50%
    - name: subset-c
      nodeSelectorTerm:
        matchExpressions:
        - key: az
          operator: In
          values: [zone-c]
"""
SUBSET_LABEL = "apps.kruise.io/subset-name"


async def get_json(cluster: Cluster, *args: str) -> dict:
    _, out = await cluster.kubectl("get", *args, "-o", "json")
    return json.loads(out)


async def wait_ud(cluster: Cluster, **expected: int) -> dict:
    generation = (await get_json(cluster, "ud", "sample-ud"))["metadata"]["generation"]
    for field, value in {"observedGeneration": generation, **expected}.items():
        await cluster.kubectl(
            "wait", "ud/sample-ud", f"--for=jsonpath={{.status.{field}}}={value}", "--timeout=90s"
        )
    # the default API set (1.9) serves UnitedDeployment at v1alpha1 only: plain `ud` is the seed's shape
    return await get_json(cluster, "ud", "sample-ud")


async def children(cluster: Cluster) -> dict[str, dict]:
    items = (await get_json(cluster, "deployments", "-l", "app=sample"))["items"]
    return {d["metadata"]["labels"][SUBSET_LABEL]: d for d in items}


async def pods_per_zone(cluster: Cluster, zones: dict[str, str]) -> dict[str, int]:
    """subset → live pods, asserting each runs on a node of its subset's zone."""
    counts: dict[str, int] = {}
    for pod in (await get_json(cluster, "pods", "-l", "app=sample"))["items"]:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        subset = pod["metadata"]["labels"][SUBSET_LABEL]
        assert zones[pod["spec"]["nodeName"]] == f"zone-{subset[-1]}", pod["metadata"]["name"]
        counts[subset] = counts.get(subset, 0) + 1
    return counts


async def test_seed_001_uniteddeployment_across_zones(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    nodes = sorted(n["metadata"]["name"] for n in (await get_json(cluster, "nodes"))["items"])
    assert len(nodes) == 3
    zones = {node: f"zone-{'abc'[i]}" for i, node in enumerate(nodes)}
    for node, zone in zones.items():
        await cluster.kubectl("label", "node", node, f"az={zone}", "--overwrite")

    manifest = tmp_path / "sample-ud.yaml"
    manifest.write_text(UD.format(replicas=10))
    await cluster.kubectl("apply", "-f", str(manifest))
    ud = await wait_ud(cluster, replicas=10, readyReplicas=10, updatedReadyReplicas=10)

    # One Deployment per zone: 2, 50% of 10, and the rest.
    found = await children(cluster)
    assert {s: d["spec"]["replicas"] for s, d in found.items()} == {
        "subset-a": 2,
        "subset-b": 5,
        "subset-c": 3,
    }
    for subset, deployment in found.items():
        assert deployment["metadata"]["name"].startswith(f"sample-ud-{subset}-")
        owner = deployment["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["controller"]) == ("UnitedDeployment", "sample-ud", True)
        terms = deployment["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]["nodeSelectorTerms"]
        assert terms == [
            {"matchExpressions": [{"key": "az", "operator": "In", "values": [f"zone-{subset[-1]}"]}]}
        ]
    assert ud["status"]["subsetReplicas"] == {"subset-a": 2, "subset-b": 5, "subset-c": 3}
    assert ud["apiVersion"] == "apps.kruise.io/v1alpha1"
    assert await pods_per_zone(cluster, zones) == {"subset-a": 2, "subset-b": 5, "subset-c": 3}

    _, table = await cluster.kubectl("get", "ud", "sample-ud")
    header, row = table.strip().splitlines()
    assert header.split()[:4] == ["NAME", "DESIRED", "CURRENT", "UPDATED"]
    assert row.split()[:4] == ["sample-ud", "10", "10", "10"]
    _, described = await cluster.kubectl("describe", "ud", "sample-ud")
    assert "Create 3 Subset (Deployment)" in described

    # The workload is managed as a whole: 6 replicas are split again (2, 3, 1).
    manifest.write_text(UD.format(replicas=6))
    await cluster.kubectl("apply", "-f", str(manifest))
    await wait_ud(cluster, replicas=6, readyReplicas=6)
    found = await children(cluster)
    assert {s: d["spec"]["replicas"] for s, d in found.items()} == {
        "subset-a": 2,
        "subset-b": 3,
        "subset-c": 1,
    }
    await cluster.kubectl("wait", "pods", "-l", "app=sample", "--for=condition=Ready", "--timeout=60s")
    assert await pods_per_zone(cluster, zones) == {"subset-a": 2, "subset-b": 3, "subset-c": 1}

    await cluster.kubectl("delete", "ud", "sample-ud", "--wait=true")
    await cluster.kubectl("wait", "pods", "-l", "app=sample", "--for=delete", "--timeout=90s")
    assert (await get_json(cluster, "deployments", "-l", "app=sample"))["items"] == []
