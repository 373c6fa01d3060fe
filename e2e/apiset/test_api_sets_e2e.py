"""The API set in force, seen through real kubectl on `kruise sandbox up` (host processes).

Default set (1.9): CloneSet is served at v1alpha1 only, as by OpenKruise 1.9.0, so seed 002's plain
`kubectl patch cloneset ... {"spec":{"updateStrategy":{"partition":0}}}` talks v1alpha1 and takes effect
(at v1beta1 the field lives under rollingUpdate and was pruned: "patched (no change)"); discovery shows
exactly 1.9's group versions. 2.0 set (`--api-set 2.0`): master's, CloneSet also at v1beta1.
"""

from __future__ import annotations

import json

from harness import Cluster

NAME = "cs-apiset"
CLONESET = f"""
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {{name: {NAME}, namespace: default}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: {NAME}}}}}
  template:
    metadata: {{labels: {{app: {NAME}}}}}
    spec:
      containers:
      - {{name: nginx, image: "nginx:alpine", imagePullPolicy: IfNotPresent, ports: [{{containerPort: 80}}]}}
  updateStrategy: {{type: InPlaceIfPossible, partition: 2}}
"""

# OpenKruise 1.9.0 (config/crd/bases at tag v1.9.0): the kinds served at v1beta1, all stored there
V1BETA1_KINDS_1_9 = {
    "statefulsets", "daemonsets", "sidecarsets", "broadcastjobs", "advancedcronjobs", "imagepulljobs",
    "imagelistpulljobs", "nodeimages",
}  # fmt: skip
V1BETA1_ONLY_IN_2_0 = {
    "clonesets", "containerrecreaterequests", "uniteddeployments", "persistentpodstates",
    "resourcedistributions", "workloadspreads",
}  # fmt: skip


async def raw(cluster: Cluster, path: str) -> dict:
    _, out = await cluster.kubectl("get", "--raw", path)
    return json.loads(out)


async def wait_for(cluster: Cluster, path: str, value: object) -> None:
    await cluster.kubectl("wait", f"cloneset/{NAME}", f"--for=jsonpath={{{path}}}={value}", "--timeout=90s")


def top_level(resources: dict) -> set[str]:
    return {r["name"] for r in resources["resources"] if "/" not in r["name"]}


async def test_seed_002_partition_patch_takes_effect_on_the_default_set(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=CLONESET)
    try:
        await wait_for(cluster, ".status.updatedReadyReplicas", 3)
        # a new image with partition 2: one pod of three moves (replicas - partition)
        image = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:latest"}]
        await cluster.kubectl("patch", "cloneset", NAME, "--type=json", "-p", json.dumps(image))
        await wait_for(cluster, ".status.updatedReplicas", 1)
        await wait_for(cluster, ".status.updatedReadyReplicas", 1)

        # the seed's command, word for word but the name: kubectl's version for `cloneset` is v1alpha1
        _, out = await cluster.kubectl(
            "patch", "cloneset", NAME, "--type=merge", "-p", '{"spec":{"updateStrategy":{"partition":0}}}'
        )
        assert out.strip() == f"cloneset.apps.kruise.io/{NAME} patched"
        _, partition = await cluster.kubectl(
            "get", "cloneset", NAME, "-o", "jsonpath={.spec.updateStrategy.partition}"
        )
        assert partition == "0"
        _, strategy = await cluster.kubectl(
            "get", "cloneset", NAME, "-o", "jsonpath={.spec.updateStrategy.type}"
        )
        assert strategy == "InPlaceIfPossible"
        # ... and the controller acts on it: every pod reaches the new revision
        await wait_for(cluster, ".status.updatedReadyReplicas", 3)
        _, images = await cluster.kubectl(
            "get", "pods", "-l", f"app={NAME}", "-o", "jsonpath={.items[*].spec.containers[0].image}"
        )
        assert images.split() == ["nginx:latest"] * 3
        cloneset = json.loads((await cluster.kubectl("get", "cloneset", NAME, "-o", "json"))[1])
        assert cloneset["apiVersion"] == "apps.kruise.io/v1alpha1"
        assert "apps.kruise.io/conversion-data" not in (cloneset["metadata"].get("annotations") or {})
    finally:
        await cluster.kubectl("delete", "cloneset", NAME, "--ignore-not-found", check=False)


async def test_discovery_shows_exactly_1_9s_versions(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    apps = await raw(cluster, "/apis/apps.kruise.io")
    assert [v["version"] for v in apps["versions"]] == ["v1beta1", "v1alpha1"]
    assert apps["preferredVersion"]["version"] == "v1beta1"
    policy = await raw(cluster, "/apis/policy.kruise.io")
    assert [v["version"] for v in policy["versions"]] == ["v1alpha1"]
    assert top_level(await raw(cluster, "/apis/apps.kruise.io/v1beta1")) == V1BETA1_KINDS_1_9
    alpha = top_level(await raw(cluster, "/apis/apps.kruise.io/v1alpha1"))
    assert alpha >= V1BETA1_KINDS_1_9 | V1BETA1_ONLY_IN_2_0
    _, table = await cluster.kubectl("api-resources", "--api-group=apps.kruise.io", "--no-headers")
    versions = {line.split()[0]: line.split()[-3] for line in table.strip().splitlines()}
    assert versions["clonesets"] == "apps.kruise.io/v1alpha1"
    assert versions["daemonsets"] == "apps.kruise.io/v1beta1"
    code, out = await cluster.kubectl("get", "clonesets.v1beta1.apps.kruise.io", check=False)
    assert code != 0 and "the server doesn't have a resource type" in out


async def test_discovery_on_the_2_0_set_adds_master_v1beta1_kinds(kruise_sandbox_2_0: Cluster):
    cluster = kruise_sandbox_2_0
    policy = await raw(cluster, "/apis/policy.kruise.io")
    assert [v["version"] for v in policy["versions"]] == ["v1beta1", "v1alpha1"]
    beta = top_level(await raw(cluster, "/apis/apps.kruise.io/v1beta1"))
    assert beta == V1BETA1_KINDS_1_9 | V1BETA1_ONLY_IN_2_0
    _, table = await cluster.kubectl("api-resources", "--api-group=apps.kruise.io", "--no-headers")
    versions = {line.split()[0]: line.split()[-3] for line in table.strip().splitlines()}
    assert versions["clonesets"] == "apps.kruise.io/v1beta1"
