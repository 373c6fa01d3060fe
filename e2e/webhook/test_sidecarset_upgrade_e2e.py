"""Seed 002's SidecarSet walkthrough on `kruise sandbox up`: kruise-webhook injects sidecar1, then
`kubectl patch sidecarset ... busybox:1.35.0` makes kruise-manager upgrade it in place.

The module deletes its SidecarSet and pod afterwards: the sandbox is shared by every e2e module and the
canary test (seed 002's next section) creates a `test-sidecarset` and `test-pod` of the same names and
expects the pod's sidecar to restart exactly once, which a leftover pod (already restarted by this test,
then rolled back when the canary test re-applies the SidecarSet) cannot satisfy."""

from __future__ import annotations

import json

from harness import SEED_002_POD, SEED_002_SIDECARSET, Cluster


async def test_seed_sidecarset_upgrade_in_place(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    try:
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_SIDECARSET)
        _, table = await cluster.kubectl("get", "sidecarset")
        assert table.splitlines()[0].split()[:4] == ["NAME", "MATCHED", "UPDATED", "READY"]
        await cluster.kubectl("apply", "-f", "-", stdin=SEED_002_POD)
        await cluster.kubectl("wait", "pod/test-pod", "--for=condition=Ready", "--timeout=60s")
        await cluster.kubectl(
            "wait", "sidecarset/test-sidecarset", "--for=jsonpath={.status.readyPods}=1", "--timeout=60s"
        )
        _, out = await cluster.kubectl("get", "pod", "test-pod", "-o", "json")
        uid = json.loads(out)["metadata"]["uid"]

        patch = '[{"op": "replace", "path": "/spec/containers/0/image", "value": "busybox:1.35.0"}]'
        _, out = await cluster.kubectl("patch", "sidecarset", "test-sidecarset", "--type=json", "-p", patch)
        assert "sidecarset.apps.kruise.io/test-sidecarset patched" in out
        await cluster.kubectl(
            "wait", "pod/test-pod",
            "--for=jsonpath={.status.containerStatuses[?(@.name=='sidecar1')].restartCount}=1",
            "--timeout=60s",
        )  # fmt: skip
        await cluster.kubectl("wait", "pod/test-pod", "--for=condition=Ready", "--timeout=60s")
        _, out = await cluster.kubectl("get", "pod", "test-pod", "-o", "json")
        pod = json.loads(out)
        assert pod["metadata"]["uid"] == uid
        images = {c["name"]: c["image"] for c in pod["spec"]["containers"]}
        assert images == {"sidecar1": "busybox:1.35.0", "app": "nginx:1.7.9"}
        restarts = {s["name"]: s["restartCount"] for s in pod["status"]["containerStatuses"]}
        assert restarts == {"sidecar1": 1, "app": 0}
        state = json.loads(pod["metadata"]["annotations"]["kruise.io/sidecarset-inplace-update-state"])
        assert "sidecar1" in state["test-sidecarset"]["lastContainerStatuses"]
        _, events = await cluster.kubectl("describe", "pod", "test-pod")
        assert "Container sidecar1 definition changed, will be restarted" in events
        await cluster.kubectl(
            "wait",
            "sidecarset/test-sidecarset",
            "--for=jsonpath={.status.updatedReadyPods}=1",
            "--timeout=60s",
        )
        _, table = await cluster.kubectl("get", "pod", "test-pod")
        assert table.splitlines()[1].split()[1:3] == ["2/2", "Running"]
    finally:
        for obj in ("pod/test-pod", "sidecarset/test-sidecarset"):
            await cluster.kubectl(
                "delete", obj, "--ignore-not-found", "--wait=true", "--timeout=60s", check=False
            )
