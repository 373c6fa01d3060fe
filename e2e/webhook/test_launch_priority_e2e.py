"""Container launch priority end to end: kruise-webhook injects the barriers, kruise-manager
releases them, the simulated kubelet starts the containers in order — driven by real kubectl."""

from __future__ import annotations

import json
from datetime import datetime

from harness import Cluster

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "launch-ordered", "namespace": "default"},
    "spec": {
        "containers": [
            {"name": "app", "image": "nginx:alpine"},
            {
                "name": "proxy",
                "image": "envoyproxy/envoy:v1.30",
                "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "10"}],
            },
        ]
    },
}


def started(pod: dict, name: str) -> datetime:
    status = next(s for s in pod["status"]["containerStatuses"] if s["name"] == name)
    return datetime.fromisoformat(status["state"]["running"]["startedAt"].replace("Z", "+00:00"))


async def test_higher_priority_container_starts_first(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(POD))
    await cluster.kubectl(
        "wait", "pod/launch-ordered",
        "--for=jsonpath={.metadata.annotations.apps\\.kruise\\.io/container-launch-priority-completed}=true",
        "--timeout=90s",
    )  # fmt: skip
    await cluster.kubectl("wait", "pod/launch-ordered", "--for=condition=Ready", "--timeout=90s")
    _, out = await cluster.kubectl("get", "pod", "launch-ordered", "-o", "json")
    pod = json.loads(out)
    envs = {c["name"]: {e["name"]: e for e in c.get("env", [])} for c in pod["spec"]["containers"]}
    assert envs["proxy"]["KRUISE_CONTAINER_BARRIER"]["valueFrom"]["configMapKeyRef"] == {
        "name": "launch-ordered-barrier",
        "key": "p_10",
    }
    assert envs["app"]["KRUISE_CONTAINER_BARRIER"]["valueFrom"]["configMapKeyRef"]["key"] == "p_0"
    assert started(pod, "proxy") <= started(pod, "app")
    _, out = await cluster.kubectl("get", "configmap", "launch-ordered-barrier", "-o", "json")
    assert set(json.loads(out)["data"]) == {"p_10", "p_0"}
    _, events = await cluster.kubectl("describe", "pod", "launch-ordered")
    assert "CreateContainerConfigError" in events or "couldn't find key p_0" in events
