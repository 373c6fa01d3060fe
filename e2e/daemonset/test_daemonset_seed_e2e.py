"""Seed 002's Advanced DaemonSet walkthrough, through `kruise sandbox up` (kruise-webhook +
kruise-manager as real processes) and the real kubectl: create (one pod per node), a Standard
update limited by ``rollingUpdate.selector`` to one node, ``partition`` + ``paused``, and an
``InPlaceIfPossible`` update; then `kubectl kruise rollout status|pause|resume|undo` on one.

The sandbox has 3 nodes where the seed had 2 workers, so the counts are 3 where the seed shows 2.
The seed's `kubectl get daemon` columns (DESIREDNUMBER, CURRENTNUMBER, ...) are those of an old
Kruise release; 1.9's are DESIRED CURRENT READY UP-TO-DATE AVAILABLE AGE. Its Warning event
``numUnavailable >= maxUnavailable`` is no longer emitted by 1.9 either, so it is not asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import Cluster, kubectl_kruise

NGINX = """
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata:
  name: nginx
  namespace: default
spec:
  updateStrategy:
    type: RollingUpdate
    rollingUpdate:
      rollingUpdateType: {rolling_type}
  selector:
    matchLabels:
      k8s-app: nginx
  template:
    metadata:
      labels:
        k8s-app: nginx
    spec:
      containers:
      - image: nginx:1.7.9
        name: nginx
        ports:
        - name: http
          containerPort: 80
"""


def container(image: str) -> dict:
    """The seed's container with another image (a merge patch replaces the whole list)."""
    return {"image": image, "name": "nginx", "ports": [{"name": "http", "containerPort": 80}]}


async def get_ds(cluster: Cluster, name: str = "nginx") -> dict:
    # v1alpha1, as the seed's YAML (status.daemonSetHash is status.updateRevision at v1beta1)
    _, out = await cluster.kubectl("get", "daemonsets.v1alpha1.apps.kruise.io", name, "-o", "json")
    return json.loads(out)


async def live_pods(cluster: Cluster, app: str = "nginx") -> dict[str, dict]:
    """node name → the live pod on it."""
    _, out = await cluster.kubectl("get", "pods", "-l", f"k8s-app={app}", "-o", "json")
    items = [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]
    return {p["spec"]["nodeName"]: p for p in items}


async def patch_spec(cluster: Cluster, patch: dict, name: str = "nginx") -> None:
    await cluster.kubectl(
        "patch", "daemonsets.v1alpha1.apps.kruise.io", name, "--type=merge", "-p", json.dumps({"spec": patch})
    )


async def wait_status(cluster: Cluster, name: str = "nginx", **expected: int) -> dict:
    """The spec observed, then each status counter at its value (kubectl wait, 90 s each)."""
    generation = (await get_ds(cluster, name))["metadata"]["generation"]
    expected = {"observedGeneration": generation, **expected}
    for field, value in expected.items():
        await cluster.kubectl(
            "wait", f"daemon/{name}", f"--for=jsonpath={{.status.{field}}}={value}", "--timeout=90s"
        )
    return await get_ds(cluster, name)


async def wait_hash_observed(cluster: Cluster, name: str = "nginx") -> dict:
    """The controller has run a pass over the current spec: observedGeneration is current and the
    status hash names the revision of the current template (its rolling-update step has run)."""
    await wait_status(cluster, name)
    _, out = await cluster.kubectl(
        "get", "controllerrevisions", "-l", f"k8s-app={name}", "-o", "json", "--sort-by=.revision"
    )
    newest = json.loads(out)["items"][-1]["metadata"]["labels"]["controller-revision-hash"]
    await cluster.kubectl(
        "wait",
        f"daemonsets.v1alpha1.apps.kruise.io/{name}",
        f"--for=jsonpath={{.status.daemonSetHash}}={newest}",
        "--timeout=60s",
    )
    return await get_ds(cluster, name)


async def ds_events(cluster: Cluster, name: str = "nginx") -> list[tuple[str, str, str]]:
    _, out = await cluster.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json"
    )
    return [
        (e["type"], e["reason"], e["message"])
        for e in json.loads(out)["items"]
        if e["involvedObject"].get("kind") == "DaemonSet"
    ]


def revision_of(pod: dict) -> str:
    return pod["metadata"]["labels"]["controller-revision-hash"]


async def test_seed_002_advanced_daemonset_walkthrough(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    _, out = await cluster.kubectl("get", "nodes", "-o", "json")
    nodes = sorted(n["metadata"]["name"] for n in json.loads(out)["items"])
    assert len(nodes) == 3
    manifest = tmp_path / "nginx-ds.yaml"
    manifest.write_text(NGINX.format(rolling_type="Standard"))

    # Create: one pod per node, `kubectl get daemon` counts, SuccessfulCreate per pod.
    await cluster.kubectl("apply", "-f", str(manifest))
    await wait_status(
        cluster, desiredNumberScheduled=3, currentNumberScheduled=3, updatedNumberScheduled=3, numberReady=3
    )
    _, table = await cluster.kubectl("get", "daemon")
    header, row = table.strip().splitlines()
    assert header.split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert row.split()[:6] == ["nginx", "3", "3", "3", "3", "3"]
    _, wide = await cluster.kubectl("get", "pods", "-l", "k8s-app=nginx", "-o", "wide")
    lines = wide.strip().splitlines()
    assert lines[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    rows = [line.split() for line in lines[1:]]
    assert sorted(r[6] for r in rows) == nodes
    for r in rows:
        assert r[0].startswith("nginx-") and len(r[0]) == len("nginx-59mbd")
        assert r[1:3] == ["1/1", "Running"]
    first = await live_pods(cluster)
    created = sorted(m for _, reason, m in await ds_events(cluster) if reason == "SuccessfulCreate")
    assert created == sorted(f"Created pod: {p['metadata']['name']}" for p in first.values())

    # rollingUpdate.selector on one node's hostname + a new image: only that node's pod is replaced.
    target = nodes[0]
    await patch_spec(
        cluster,
        {
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {
                    "rollingUpdateType": "Standard",
                    "selector": {"matchLabels": {"kubernetes.io/hostname": target}},
                },
            },
            "template": {"spec": {"containers": [container("nginx:1.25")]}},
        },
    )
    await wait_status(cluster, updatedNumberScheduled=1, numberAvailable=3, currentNumberScheduled=3)
    second = await live_pods(cluster)
    new_hash = (await get_ds(cluster))["status"]["daemonSetHash"]
    assert revision_of(second[target]) == new_hash
    assert second[target]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert second[target]["metadata"]["name"] != first[target]["metadata"]["name"]
    for node in nodes[1:]:
        assert second[node]["metadata"]["uid"] == first[node]["metadata"]["uid"]
        assert revision_of(second[node]) != new_hash
    _, described = await cluster.kubectl("describe", "daemon", "nginx")
    assert f"Deleted pod: {first[target]['metadata']['name']}" in described
    assert f"Created pod: {second[target]['metadata']['name']}" in described
    assert "daemonset-controller" in described
    deleted = [m for _, reason, m in await ds_events(cluster) if reason == "SuccessfulDelete"]
    assert deleted == [f"Deleted pod: {first[target]['metadata']['name']}"]

    # partition 10 + paused (the seed's YAML), selector dropped, another image: nothing moves.
    await patch_spec(
        cluster,
        {
            "updateStrategy": {"rollingUpdate": {"selector": None, "partition": 10, "paused": True}},
            "template": {"spec": {"containers": [container("nginx:1.26")]}},
        },
    )
    ds = await wait_hash_observed(cluster)
    assert ds["status"]["updatedNumberScheduled"] == 0
    paused_pods = await live_pods(cluster)
    assert {n: p["metadata"]["uid"] for n, p in paused_pods.items()} == {
        n: p["metadata"]["uid"] for n, p in second.items()
    }
    # Resumed with partition 1: desiredNumberScheduled − partition = 2 pods are updated, one is kept.
    await patch_spec(cluster, {"updateStrategy": {"rollingUpdate": {"partition": 1, "paused": False}}})
    await wait_status(cluster, updatedNumberScheduled=2, numberAvailable=3)
    hashes = [revision_of(p) for p in (await live_pods(cluster)).values()]
    assert hashes.count(ds["status"]["daemonSetHash"]) == 2 and len(hashes) == 3
    await patch_spec(cluster, {"updateStrategy": {"rollingUpdate": {"partition": 0}}})
    await wait_status(cluster, updatedNumberScheduled=3, numberAvailable=3)

    # InPlaceIfPossible (the seed recreates the DaemonSet with it, then changes the image): every
    # pod keeps its name and UID, its container restarts, SuccessfulUpdatePodInPlace per pod.
    await cluster.kubectl("delete", "daemon", "nginx", "--wait=true")
    await cluster.kubectl("wait", "pods", "-l", "k8s-app=nginx", "--for=delete", "--timeout=90s")
    manifest.write_text(NGINX.format(rolling_type="InPlaceIfPossible"))
    await cluster.kubectl("apply", "-f", str(manifest))
    await wait_status(cluster, desiredNumberScheduled=3, updatedNumberScheduled=3, numberAvailable=3)
    before = await live_pods(cluster)
    for pod in before.values():
        gates = [g["conditionType"] for g in pod["spec"].get("readinessGates") or []]
        assert "InPlaceUpdateReady" in gates
    await patch_spec(cluster, {"template": {"spec": {"containers": [container("nginx:1.25")]}}})
    await wait_status(cluster, updatedNumberScheduled=3, numberAvailable=3, numberReady=3)
    after = await live_pods(cluster)
    assert {n: p["metadata"]["uid"] for n, p in after.items()} == {
        n: p["metadata"]["uid"] for n, p in before.items()
    }
    for pod in after.values():
        assert pod["spec"]["containers"][0]["image"] == "nginx:1.25"
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 1
    events = await ds_events(cluster)
    in_place = sorted(
        m for t, reason, m in events if reason == "SuccessfulUpdatePodInPlace" and t == "Normal"
    )
    assert in_place == sorted(
        f"successfully update pod {p['metadata']['name']} in-place" for p in after.values()
    )
    names = {p["metadata"]["name"] for p in after.values()}
    assert {f"Created pod: {name}" for name in names} <= {m for _, r, m in events if r == "SuccessfulCreate"}
    assert not {f"Deleted pod: {name}" for name in names} & {
        m for _, r, m in events if r == "SuccessfulDelete"
    }


AGENT = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "DaemonSet",
    "metadata": {"name": "agent", "namespace": "default"},
    "spec": {
        "selector": {"matchLabels": {"k8s-app": "agent"}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"rollingUpdateType": "Standard"}},
        "template": {
            "metadata": {"labels": {"k8s-app": "agent"}},
            "spec": {"containers": [{"name": "agent", "image": "nginx:1.25"}]},
        },
    },
}


async def images(cluster: Cluster) -> set[str]:
    return {p["spec"]["containers"][0]["image"] for p in (await live_pods(cluster, "agent")).values()}


async def test_kubectl_kruise_rollout_on_an_advanced_daemonset(kruise_sandbox: Cluster):
    """`daemon/<name>` (the Advanced DaemonSet's short name; plain `daemonset` is the built-in kind,
    as in kubectl) through status, pause, set image, resume and undo, with the real controller."""
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(AGENT))
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "daemon/agent")
    assert out.endswith('daemon set "agent" successfully rolled out\n')
    assert await images(cluster) == {"nginx:1.25"}

    _, out, _ = await kubectl_kruise(cluster, "rollout", "pause", "daemon/agent")
    assert out == "daemonset.apps.kruise.io/agent paused\n"
    await kubectl_kruise(cluster, "set", "image", "daemon/agent", "agent=nginx:1.26")
    ds = await wait_hash_observed(cluster, "agent")
    assert ds["status"]["updatedNumberScheduled"] == 0
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "daemon/agent", "--watch=false")
    assert (
        out == 'Waiting for daemon set "agent" rollout to finish: 0 out of 3 new pods have been updated...\n'
    )
    assert await images(cluster) == {"nginx:1.25"}

    _, out, _ = await kubectl_kruise(cluster, "rollout", "resume", "daemon/agent")
    assert out == "daemonset.apps.kruise.io/agent resumed\n"
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "daemon/agent")
    assert out.endswith('daemon set "agent" successfully rolled out\n')
    assert await images(cluster) == {"nginx:1.26"}

    _, out, _ = await kubectl_kruise(cluster, "rollout", "history", "daemon/agent")
    assert out.splitlines()[1:4] == ["REVISION  CHANGE-CAUSE", "1         <none>", "2         <none>"]
    _, out, _ = await kubectl_kruise(cluster, "rollout", "undo", "daemon/agent")
    assert out == "daemonset.apps.kruise.io/agent rolled back\n"
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "daemonsets.apps.kruise.io/agent")
    assert out.endswith('daemon set "agent" successfully rolled out\n')
    assert await images(cluster) == {"nginx:1.25"}
