"""Upstream's test/e2e/apps/containermeta.go, translated: kruise-manager, kruise-webhook and one
kruise-daemon per node as real processes (`kruise sandbox up --host-processes`), driven with the real
kubectl. A CloneSet in-place update whose only change is a template annotation read by an env ``fieldRef``
(InPlaceUpdateEnvFromMetadata, on by default) finishes: each node's daemon reports the pods' containers
in ``apps.kruise.io/runtime-containers-meta`` and restarts the containers whose env is stale."""

from __future__ import annotations

import json
import secrets
from typing import Any

from harness import Cluster, until

META = "apps.kruise.io/runtime-containers-meta"


def clone_set(name: str, replicas: int) -> dict[str, Any]:
    """Upstream's ``CloneSetTester.NewCloneSet`` plus what the case adds: the ``test-env`` template
    annotation, the ``TEST_ENV`` env reading it, and one pod per node (hostname spread)."""
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"owner": name}},
            "updateStrategy": {"type": "InPlaceIfPossible"},
            "template": {
                "metadata": {"labels": {"owner": name}, "annotations": {"test-env": "foo"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": "nginx:alpine",
                            "env": [
                                {"name": "test", "value": "foo"},
                                {
                                    "name": "TEST_ENV",
                                    "valueFrom": {
                                        "fieldRef": {"fieldPath": "metadata.annotations['test-env']"}
                                    },
                                },
                            ],
                            "resources": {
                                "requests": {"cpu": "200m", "memory": "200Mi"},
                                "limits": {"cpu": "1", "memory": "1Gi"},
                            },
                        }
                    ],
                    "topologySpreadConstraints": [
                        {
                            "labelSelector": {"matchLabels": {"owner": name}},
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                        }
                    ],
                },
            },
        },
    }


async def get_json(cluster: Cluster, *args: str) -> dict[str, Any]:
    _, out = await cluster.kubectl("get", *args, "-o", "json")
    return json.loads(out)


async def cloneset_pods(cluster: Cluster, ns: str, name: str) -> list[dict[str, Any]]:
    """``ListPodsForCloneSet``: the CloneSet's pods not being deleted, sorted by name."""
    items = (await get_json(cluster, "pods", "-n", ns))["items"]
    owned = [
        p
        for p in items
        if not p["metadata"].get("deletionTimestamp")
        and any(r.get("controller") and r["name"] == name for r in p["metadata"].get("ownerReferences") or [])
    ]
    return sorted(owned, key=lambda p: p["metadata"]["name"])


async def test_should_recreate_container_when_annotations_for_env_changed(kruise_sandbox: Cluster):
    """ContainerMeta / In-place update env from metadata: "should recreate container when annotations for
    env changed"."""
    cluster = kruise_sandbox
    rand = secrets.token_hex(5)
    ns, name = f"containermeta-{rand}", f"clone-{rand}"
    nodes = (await get_json(cluster, "nodes"))["items"]
    replicas = len(nodes)
    await cluster.kubectl("create", "namespace", ns)
    try:
        # Create a CloneSet with replicas = the number of nodes.
        await cluster.kubectl("apply", "-n", ns, "-f", "-", stdin=json.dumps(clone_set(name, replicas)))

        # Wait for all pods ready.
        await cluster.kubectl(
            "wait", "-n", ns, f"clonesets.apps.kruise.io/{name}",
            f"--for=jsonpath={{.status.readyReplicas}}={replicas}", "--timeout=120s",
        )  # fmt: skip
        pods = await cloneset_pods(cluster, ns, name)
        assert len(pods) == replicas

        # Patch pods[0] annotation to bar: a metadata edit outside an in-place update restarts nothing.
        await cluster.kubectl(
            "patch", "pod", "-n", ns, pods[0]["metadata"]["name"], "--type=strategic",
            "-p", json.dumps({"metadata": {"annotations": {"test-env": "bar"}}}),
        )  # fmt: skip
        pod0 = await get_json(cluster, "pod", "-n", ns, pods[0]["metadata"]["name"])
        assert pod0["status"]["containerStatuses"][0]["restartCount"] == 0
        assert (
            pod0["status"]["containerStatuses"][0]["containerID"]
            == pods[0]["status"]["containerStatuses"][0]["containerID"]
        )

        # Update CloneSet template annotation to bar.
        await cluster.kubectl(
            "patch", "-n", ns, f"clonesets.v1alpha1.apps.kruise.io/{name}", "--type=merge",
            "-p", json.dumps({"spec": {"template": {"metadata": {"annotations": {"test-env": "bar"}}}}}),
        )  # fmt: skip

        # Wait for all pods updated and ready.
        async def status() -> dict[str, Any]:
            return await get_json(cluster, f"clonesets.apps.kruise.io/{name}", "-n", ns)

        await until(
            status,
            lambda cs: (
                cs["status"].get("observedGeneration") == cs["metadata"]["generation"]
                and cs["status"].get("updatedReadyReplicas") == replicas
            ),
            "all pods updated and ready",
            timeout=60.0,
        )

        # Check all pods restarted: the same pods, each container once more, with a new container ID.
        new_pods = await cloneset_pods(cluster, ns, name)
        assert [p["metadata"]["uid"] for p in new_pods] == [p["metadata"]["uid"] for p in pods]
        for old, new in zip(pods, new_pods, strict=True):
            status_new = new["status"]["containerStatuses"][0]
            assert status_new["restartCount"] == 1, json.dumps(new["status"])
            assert status_new["containerID"] != old["status"]["containerStatuses"][0]["containerID"]
            assert new["metadata"]["annotations"]["test-env"] == "bar"
            ready = {c["type"]: c["status"] for c in new["status"]["conditions"]}
            assert ready["InPlaceUpdateReady"] == "True"
            reported = json.loads(new["metadata"]["annotations"][META])["containers"]
            assert [(c["name"], c["containerID"]) for c in reported] == [("nginx", status_new["containerID"])]
    finally:
        await cluster.kubectl("delete", "namespace", ns, "--wait=false", check=False)
