"""Both API versions through real kubectl and kruise-webhook's real `/convert` (`kruise sandbox up
--api-set 2.0`: on the default 1.9 set CloneSet has no v1beta1).

On the 2.0 set the fifteen converted kinds but Advanced StatefulSet store v1alpha1 (what kruise-manager
and kruise-webhook read) and serve v1beta1 too, which is kubectl's preferred version: a CloneSet
written in the seed's v1alpha1 YAML is read, patched and watched at v1beta1 (each crossing goes through
the conversion webhook), and OpenKruise 1.9's v1beta1 YAML (a BroadcastJob in the shape of upstream's
`apps_v1beta1_broadcastjob-ttl` sample) is admitted, stored at v1alpha1 and reconciled.
"""

from __future__ import annotations

import asyncio
import json

from harness import Cluster, kubectl_binary

ALPHA = "clonesets.v1alpha1.apps.kruise.io"
BETA = "clonesets.v1beta1.apps.kruise.io"

CLONESET = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: conv-web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: conv-web}}
  template:
    metadata: {labels: {app: conv-web}}
    spec:
      containers:
      - {name: web, image: "nginx:alpine", imagePullPolicy: IfNotPresent}
  updateStrategy: {type: InPlaceIfPossible, partition: 1}
"""

# OpenKruise 1.9 YAML: BroadcastJob is stored at v1beta1 there
BROADCASTJOB_V1BETA1 = """
apiVersion: apps.kruise.io/v1beta1
kind: BroadcastJob
metadata: {name: conv-bcj, namespace: default}
spec:
  template:
    spec:
      containers:
      - name: count
        image: busybox
        command: ["/bin/sh", "-c", "echo 3 2 1"]
      restartPolicy: Never
  completionPolicy:
    type: Always
    ttlSecondsAfterFinished: 300
"""


async def json_of(cluster: Cluster, *args: str) -> dict:
    _, out = await cluster.kubectl("get", *args, "-o", "json")
    return json.loads(out)


async def watch_until(
    cluster: Cluster, resource: str, name: str, wanted: str, started: asyncio.Event
) -> list[str]:
    """`kubectl get <resource> <name> -w` printing apiVersion and partition per event; returns the lines
    up to the first equal to `wanted` (event-driven: it ends as soon as that event arrives)."""
    process = await asyncio.create_subprocess_exec(
        kubectl_binary(), "--kubeconfig", str(cluster.kubeconfig), "get", resource, name, "-w",
        "-o", "jsonpath={.apiVersion} {.spec.updateStrategy.rollingUpdate.partition}{\"\\n\"}",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(30):
            while True:
                raw = await process.stdout.readline()
                if not raw:
                    err = await process.stderr.read() if process.stderr else b""
                    raise AssertionError(f"kubectl get -w ended early: {lines} {err.decode()}")
                lines.append(raw.decode().strip())
                started.set()  # the initial ADDED event is in: the watch is established
                if lines[-1] == wanted:
                    return lines
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()


async def test_cloneset_across_versions_and_a_v1beta1_broadcastjob(kruise_sandbox_2_0: Cluster):
    cluster = kruise_sandbox_2_0
    await cluster.kubectl("apply", "-f", "-", stdin=CLONESET)
    try:
        # read at v1beta1: the v1alpha1 strategy in its v1beta1 place
        beta = await json_of(cluster, BETA, "conv-web")
        assert beta["apiVersion"] == "apps.kruise.io/v1beta1"
        assert beta["spec"]["updateStrategy"]["type"] == "RollingUpdate"
        rolling = beta["spec"]["updateStrategy"]["rollingUpdate"]
        assert (rolling["podUpdatePolicy"], rolling["partition"]) == ("InPlaceIfPossible", 1)
        await cluster.kubectl(
            "wait", f"{BETA}/conv-web", "--for=jsonpath={.status.readyReplicas}=2", "--timeout=90s"
        )
        # plain `cloneset` is v1beta1 now; its table is upstream's v1beta1 columns
        _, table = await cluster.kubectl("get", "cloneset", "conv-web")
        assert table.split("\n")[0].split() == [
            "NAME", "DESIRED", "UPDATED", "UPDATED_READY", "UPDATED_AVAILABLE", "READY", "TOTAL", "AGE",
        ]  # fmt: skip
        assert table.split("\n")[1].split()[:7] == ["conv-web", "2", "2", "2", "2", "2", "2"]

        # watch at v1beta1 while patching at v1beta1; the watch sees the patch as a v1beta1 event
        started = asyncio.Event()
        watch = asyncio.create_task(
            watch_until(cluster, BETA, "conv-web", "apps.kruise.io/v1beta1 0", started)
        )
        async with asyncio.timeout(30):
            await started.wait()
        _, out = await cluster.kubectl(
            "patch", BETA, "conv-web", "--type=merge",
            "-p", json.dumps({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
        )  # fmt: skip
        assert "cloneset.apps.kruise.io/conv-web patched" in out
        lines = await watch
        assert lines[0] == "apps.kruise.io/v1beta1 1" and lines[-1] == "apps.kruise.io/v1beta1 0"

        # stored (and read by kruise-manager) at v1alpha1
        alpha = await json_of(cluster, ALPHA, "conv-web")
        assert alpha["apiVersion"] == "apps.kruise.io/v1alpha1"
        assert alpha["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"
        assert alpha["spec"]["updateStrategy"]["partition"] == 0
        assert "apps.kruise.io/conversion-data" not in (alpha["metadata"].get("annotations") or {})

        # upstream 1.9's v1beta1 YAML: admitted (defaulted at v1beta1), stored at v1alpha1, reconciled
        await cluster.kubectl("apply", "-f", "-", stdin=BROADCASTJOB_V1BETA1)
        nodes = cluster.nodes
        await cluster.kubectl(
            "wait", "bcj/conv-bcj", f"--for=jsonpath={{.status.succeeded}}={nodes}", "--timeout=90s"
        )
        job = await json_of(cluster, "bcj", "conv-bcj")
        assert job["apiVersion"] == "apps.kruise.io/v1beta1"
        assert job["spec"]["parallelism"] == 2147483647  # kruise-webhook's default, given at v1beta1
        assert job["status"]["phase"] == "completed"
        stored = await json_of(cluster, "broadcastjobs.v1alpha1.apps.kruise.io", "conv-bcj")
        assert stored["apiVersion"] == "apps.kruise.io/v1alpha1"
        assert stored["spec"]["completionPolicy"] == {"type": "Always", "ttlSecondsAfterFinished": 300}
        _, table = await cluster.kubectl("get", "bcj", "conv-bcj")
        assert table.split("\n")[0].split() == ["NAME", "DESIRED", "ACTIVE", "SUCCEEDED", "FAILED", "AGE"]
        _, out = await cluster.kubectl("delete", "broadcastjobs.v1beta1.apps.kruise.io", "conv-bcj")
        assert 'broadcastjob.apps.kruise.io "conv-bcj" deleted' in out
    finally:
        await cluster.kubectl("delete", BETA, "conv-web", "--ignore-not-found", check=False)
        await cluster.kubectl("delete", "bcj", "conv-bcj", "--ignore-not-found", check=False)
