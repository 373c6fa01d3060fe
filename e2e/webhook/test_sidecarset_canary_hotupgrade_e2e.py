"""Seed 002's SidecarSet "金丝雀发布" (canary) and "热升级" (hot upgrade) sections on `kruise sandbox up`,
through real kubectl against the real kruise-webhook and kruise-manager processes.

Canary: four `app=nginx` pods (test-pod plus a 3-replica Deployment) get sidecar1; the SidecarSet then gets
`updateStrategy.selector` canary.release=true and busybox:1.35.0 (by `kubectl patch`: a `kubectl apply` of
the whole SidecarSet would replace its container list, re-default imagePullPolicy from Always (untagged
`busybox`) to IfNotPresent and so make the change not upgradable in place, as upstream), and `kubectl apply`
of test-pod with that label (a pod that received an injected sidecar) upgrades just that pod.

Hot upgrade: a CloneSet pod gets `sidecar-1` (working) and `sidecar-2` (empty image); `kubectl patch` of the
image puts sidecarv2 into sidecar-2, then resets sidecar-1 to the empty image; the pod keeps its UID, the
app container never restarts and `kubectl logs -f` of it keeps streaming across the swap.
"""

from __future__ import annotations

import asyncio
import json

from harness import (
    SEED_002_HOT_CLONESET,
    SEED_002_HOT_SIDECARSET,
    SEED_002_POD,
    SEED_002_SIDECARSET,
    Cluster,
    kubectl_binary,
)

CANARY_POD = """
apiVersion: v1
kind: Pod
metadata:
  labels:
    app: nginx
    canary.release: "true"
  name: test-pod
spec:
  containers:
  - name: app
    image: nginx:1.7.9
"""
DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx
  namespace: default
spec:
  replicas: 3
  revisionHistoryLimit: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: ngx
        image: nginx:1.7.9
        ports:
        - containerPort: 80
"""
WAIT = "--timeout=90s"


async def _cleanup(cluster: Cluster, *objects: str) -> None:
    for obj in objects:
        await cluster.kubectl(
            "delete", obj, "--ignore-not-found", "--wait=true", "--timeout=60s", check=False
        )


async def _pods(cluster: Cluster, selector: str) -> list[dict]:
    _, out = await cluster.kubectl("get", "pods", "-l", selector, "-o", "json")
    return json.loads(out)["items"]


def _images(pod: dict) -> dict[str, str]:
    return {c["name"]: c["image"] for c in pod["spec"]["containers"]}


def _restarts(pod: dict) -> dict[str, int]:
    return {s["name"]: s["restartCount"] for s in pod["status"]["containerStatuses"]}


async def test_seed_sidecarset_canary_by_selector(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    # the seed's section starts on a clean cluster: a same-named pod or SidecarSet left by an earlier
    # module would carry restarts of its own and the absolute restartCount waits below would time out
    for obj in ("pod/test-pod", "sidecarset/test-sidecarset"):
        _, leftover = await cluster.kubectl("get", obj, "--ignore-not-found", "-o", "name")
        assert not leftover.strip(), f"{obj} left over by an earlier e2e module on the shared sandbox"
    try:
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_SIDECARSET)
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_POD)
        await cluster.kubectl("apply", "-f", "-", stdin=DEPLOYMENT)
        await cluster.kubectl("rollout", "status", "deployment/nginx", WAIT)
        await cluster.kubectl("wait", "pod/test-pod", "--for=condition=Ready", WAIT)
        await cluster.kubectl(
            "wait", "sidecarset/test-sidecarset", "--for=jsonpath={.status.readyPods}=4", WAIT
        )
        _, table = await cluster.kubectl("get", "pods", "-l", "app=nginx")
        # only this test's pods: other e2e modules may still be tearing down their own `app: nginx` pods
        rows = [r for r in (line.split() for line in table.splitlines()[1:]) if _ours(r[0])]
        assert len(rows) == 4 and all(row[1:3] == ["2/2", "Running"] for row in rows), table
        before = {p["metadata"]["name"]: p for p in await _pods(cluster, "app=nginx")}
        assert {_images(p)["sidecar1"] for p in before.values()} == {"busybox"}

        # the canary: only pods labelled canary.release=true take the new sidecar image
        canary = '{"spec": {"updateStrategy": {"selector": {"matchLabels": {"canary.release": "true"}}}}}'
        await cluster.kubectl("patch", "sidecarset", "test-sidecarset", "--type=merge", "-p", canary)
        image = '[{"op": "replace", "path": "/spec/containers/0/image", "value": "busybox:1.35.0"}]'
        _, out = await cluster.kubectl("patch", "sidecarset", "test-sidecarset", "--type=json", "-p", image)
        assert "sidecarset.apps.kruise.io/test-sidecarset patched" in out
        _, generation = await cluster.kubectl(
            "get", "sidecarset", "test-sidecarset", "-o", "jsonpath={.metadata.generation}"
        )
        await cluster.kubectl(
            "wait",
            "sidecarset/test-sidecarset",
            f"--for=jsonpath={{.status.observedGeneration}}={generation}",
            WAIT,
        )
        # no pod carries the canary label yet: the new image waits
        _, updated = await cluster.kubectl(
            "get", "sidecarset", "test-sidecarset", "-o", "jsonpath={.status.updatedPods}"
        )
        assert updated == "0"
        _, out = await cluster.kubectl("apply", "-f", "-", stdin=CANARY_POD)
        assert "pod/test-pod configured" in out
        await cluster.kubectl(
            "wait", "pod/test-pod",
            "--for=jsonpath={.status.containerStatuses[?(@.name=='sidecar1')].restartCount}=1", WAIT,
        )  # fmt: skip
        await cluster.kubectl("wait", "pod/test-pod", "--for=condition=Ready", WAIT)
        await cluster.kubectl(
            "wait", "sidecarset/test-sidecarset", "--for=jsonpath={.status.updatedReadyPods}=1", WAIT
        )
        after = {p["metadata"]["name"]: p for p in await _pods(cluster, "app=nginx")}
        assert after.keys() == before.keys()
        for name, pod in after.items():
            assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
            if name == "test-pod":
                assert _images(pod) == {"sidecar1": "busybox:1.35.0", "app": "nginx:1.7.9"}
                assert _restarts(pod) == {"sidecar1": 1, "app": 0}
            else:
                assert _images(pod)["sidecar1"] == "busybox"
                assert set(_restarts(pod).values()) == {0}
        _, status = await cluster.kubectl("get", "sidecarset", "test-sidecarset", "-o", "jsonpath={.status}")
        assert json.loads(status)["matchedPods"] == 4 and json.loads(status)["updatedPods"] == 1
        _, events = await cluster.kubectl("describe", "pod", "test-pod")
        assert "Container sidecar1 definition changed, will be restarted" in events
    finally:
        await _cleanup(cluster, "deployment/nginx", "pod/test-pod", "sidecarset/test-sidecarset")


EMPTY = "openkruise/hotupgrade-sample:empty"
V1, V2 = "openkruise/hotupgrade-sample:sidecarv1", "openkruise/hotupgrade-sample:sidecarv2"


async def _one_pod(cluster: Cluster) -> dict:
    async with asyncio.timeout(90):
        while True:
            pods = await _pods(cluster, "app=hotupgrade")
            if len(pods) == 1:
                return pods[0]
            await asyncio.sleep(0.2)  # polling kubectl with a deadline


async def test_seed_sidecarset_hot_upgrade(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    follow = None
    try:
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_HOT_SIDECARSET)
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_HOT_CLONESET)
        name = (await _one_pod(cluster))["metadata"]["name"]
        assert name.startswith("busybox-")
        await cluster.kubectl("wait", f"pod/{name}", "--for=condition=Ready", WAIT)
        await cluster.kubectl(
            "wait", "sidecarset/hotupgrade-sidecarset", "--for=jsonpath={.status.readyPods}=1", WAIT
        )
        _, table = await cluster.kubectl("get", "sidecarset", "hotupgrade-sidecarset")
        assert table.splitlines()[1].split()[:4] == ["hotupgrade-sidecarset", "1", "1", "1"]
        _, table = await cluster.kubectl("get", "pods", "-l", "app=hotupgrade")
        assert table.splitlines()[1].split()[1:4] == ["3/3", "Running", "0"]
        pod = await _one_pod(cluster)
        uid = pod["metadata"]["uid"]
        assert _images(pod) == {
            "sidecar-1": V1,
            "sidecar-2": EMPTY,
            "busybox": "openkruise/hotupgrade-sample:busybox",
        }
        _, described = await cluster.kubectl("describe", "pod", name)
        assert (
            "SIDECARSET_VERSION:       (v1:metadata.annotations['version.sidecarset.kruise.io/sidecar-1'])"
            in (described)
        )
        assert "Controlled By:  CloneSet/busybox" in described

        follow = await asyncio.create_subprocess_exec(
            kubectl_binary(), "--kubeconfig", str(cluster.kubeconfig), "logs", "-f", name, "-c", "busybox",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        assert follow.stdout is not None
        first = await asyncio.wait_for(follow.stdout.readline(), 30)
        assert b'container "busybox" started' in first

        patch = f'[{{"op": "replace", "path": "/spec/containers/0/image", "value": "{V2}"}}]'
        _, out = await cluster.kubectl(
            "patch", "sidecarset", "hotupgrade-sidecarset", "--type=json", "-p", patch
        )
        assert "sidecarset.apps.kruise.io/hotupgrade-sidecarset patched" in out
        # new version into the idle sidecar-2, then the old sidecar-1 back on the empty image
        await cluster.kubectl(
            "wait",
            f"pod/{name}",
            "--for=jsonpath={.spec.containers[?(@.name=='sidecar-1')].image}=" + EMPTY,
            WAIT,
        )
        await cluster.kubectl(
            "wait", "sidecarset/hotupgrade-sidecarset", "--for=jsonpath={.status.updatedReadyPods}=1", WAIT
        )
        await cluster.kubectl("wait", f"pod/{name}", "--for=condition=Ready", WAIT)
        pod = await _one_pod(cluster)
        assert pod["metadata"]["uid"] == uid
        assert _images(pod) == {
            "sidecar-1": EMPTY,
            "sidecar-2": V2,
            "busybox": "openkruise/hotupgrade-sample:busybox",
        }
        assert _restarts(pod)["busybox"] == 0
        working = json.loads(
            pod["metadata"]["annotations"]["kruise.io/sidecarset-working-hotupgrade-container"]
        )
        assert working == {"sidecar": "sidecar-2"}
        _, table = await cluster.kubectl("get", "pods", name)
        assert table.splitlines()[1].split()[1:3] == ["3/3", "Running"]
        _, described = await cluster.kubectl("describe", "pod", name)
        assert "Container sidecar-2 definition changed, will be restarted" in described
        assert f'Pulling image "{V2}"' in described
        assert "ResetContainerSucceed" in described

        # the app container never stopped: its log stream is still open, with no exit line
        assert follow.returncode is None
        follow.terminate()
        rest, _ = await asyncio.wait_for(follow.communicate(), 30)
        assert b"exited with code" not in first + rest
    finally:
        if follow is not None and follow.returncode is None:
            follow.kill()
            await follow.wait()
        await _cleanup(cluster, "cloneset/busybox", "sidecarset/hotupgrade-sidecarset")


def _ours(pod_name: str) -> bool:
    return pod_name == "test-pod" or pod_name.startswith("nginx-")
