"""EphemeralJob through `kruise sandbox up` (kruise-manager as a real process, the sandbox kubelet
running ephemeral containers) and the real kubectl: a debug container added to the one pod the
selector matches (seen with `kubectl get pod -o jsonpath` on `spec.ephemeralContainers`), run to
completion, and `kubectl get ephemeraljob` showing the job Succeeded; the other pod left alone."""

from __future__ import annotations

import json

from harness import Cluster

from tests.kit.pods import pod


def app_pod(name: str, app: str) -> dict:
    """An nginx pod labelled app=`app`, for an EphemeralJob to select (or not)."""
    return pod(name, labels={"app": app}, containers=[{"name": "main", "image": "nginx:alpine"}], typed=True)


EPHEMERAL_JOB = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "EphemeralJob",
    "metadata": {"name": "ej-debug", "namespace": "default"},
    "spec": {
        "selector": {"matchLabels": {"app": "ej-target"}},
        "replicas": 1,
        "parallelism": 1,
        "template": {
            "ephemeralContainers": [
                {
                    "name": "debugger",
                    "image": "busybox:1.36",
                    "imagePullPolicy": "IfNotPresent",
                    "terminationMessagePolicy": "File",
                    "command": ["sleep", "2"],
                }
            ]
        },
    },
}


async def test_debug_container_added_to_the_matching_pod(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(app_pod("ej-target-pod", "ej-target")))
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(app_pod("ej-other-pod", "ej-other")))
    for name in ("ej-target-pod", "ej-other-pod"):
        await cluster.kubectl("wait", f"pod/{name}", "--for=condition=Ready", "--timeout=60s")

    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(EPHEMERAL_JOB))
    await cluster.kubectl(
        "wait", "pod/ej-target-pod", "--for=jsonpath={.spec.ephemeralContainers[0].name}=debugger",
        "--timeout=60s",
    )  # fmt: skip
    _, image = await cluster.kubectl(
        "get", "pod", "ej-target-pod", "-o", "jsonpath={.spec.ephemeralContainers[0].image}"
    )
    assert image == "busybox:1.36"

    await cluster.kubectl(
        "wait", "ephemeraljob/ej-debug", "--for=jsonpath={.status.phase}=Succeeded", "--timeout=90s"
    )
    _, table = await cluster.kubectl("get", "ephemeraljob", "ej-debug")
    header, row = table.strip().splitlines()
    assert header.split()[:5] == ["NAME", "STATUS", "MATCH", "SUCCEED", "FAILED"]
    assert row.split()[:5] == ["ej-debug", "Succeeded", "1", "1", "0"]
    _, terminated = await cluster.kubectl(
        "get", "pod", "ej-target-pod", "-o",
        "jsonpath={.status.ephemeralContainerStatuses[0].state.terminated.reason}",
    )  # fmt: skip
    assert terminated == "Completed"

    _, other = await cluster.kubectl(
        "get", "pod", "ej-other-pod", "-o", "jsonpath={.spec.ephemeralContainers}"
    )
    assert other == ""
