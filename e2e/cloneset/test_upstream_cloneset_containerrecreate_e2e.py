"""Upstream's ContainerRecreateRequest e2e (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/containerrecreate.go) on CloneSet pods, translated to kubectl on the AllAlpha
sandbox. Only "recreates simple containers" runs on the fake runtime: the other three rely on postStart
and preStop hooks (see docs/upstream-e2e.md)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from cloneset_tester import Case, container_status, upstream_case
from harness import Cluster, until

# upstream's common.WebserverImage and common.AgnhostImage
WEBSERVER_IMAGE = "registry.k8s.io/e2e-test-images/httpd:2.4.38-4"
AGNHOST_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.52"
CRR = "containerrecreaterequests.v1alpha1.apps.kruise.io"
ACTIVE = "crr.apps.kruise.io/active"


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


async def _cloneset_pods(case: Case, replicas: int, containers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`CreateTestCloneSetAndGetPods`: spread by preferred anti-affinity, all ready."""
    rand = case.rand
    selector = {"matchLabels": {"rand": rand}}
    term = {"topologyKey": "kubernetes.io/hostname", "labelSelector": selector}
    cs = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": f"clone-foo-{rand}", "namespace": case.ns},
        "spec": {
            "replicas": replicas,
            "selector": selector,
            "template": {
                "metadata": {"labels": {"rand": rand}},
                "spec": {
                    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 100, "podAffinityTerm": term}]}},
                    "containers": containers,
                },
            },
        },
    }  # fmt: skip
    name = (await case.create(cs))["metadata"]["name"]
    await case.eventually_status(name, "readyReplicas", replicas)
    return json.loads(await case.kubectl("get", "pods", "-l", f"rand={rand}", "-o", "json"))["items"]


async def _crr(case: Case, name: str) -> dict[str, Any] | None:
    code, out = await case.cluster.kubectl("get", CRR, name, "-n", case.ns, "-o", "json", check=False)
    if code != 0:
        assert "NotFound" in out, out
        return None
    return json.loads(out)


async def _completed(case: Case, name: str, timeout: float) -> dict[str, Any]:
    async def phase():
        return await _crr(case, name)

    return await until(
        phase, lambda c: c and (c.get("status") or {}).get("phase") == "Completed", name, timeout
    )


async def _inactive(case: Case, name: str) -> dict[str, Any]:
    async def probe():
        return await _crr(case, name)

    return await until(
        probe, lambda c: c and ACTIVE not in c["metadata"].get("labels", {}), f"{name} inactive", 5
    )


def _ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


@pytest.mark.timeout(300)
async def test_recreates_simple_containers(kruise_sandbox_all_gates: Cluster):
    """recreates simple containers"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        pods = await _cloneset_pods(
            case, 2, [{"name": "app", "image": WEBSERVER_IMAGE}, {"name": "sidecar", "image": AGNHOST_IMAGE}]
        )

        # CRR for pods[0], recreate container app
        pod = pods[0]
        crr = await case.create({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
            "metadata": {"name": f"crr-{case.rand}-0", "namespace": case.ns},
            "spec": {"podName": pod["metadata"]["name"], "containers": [{"name": "app"}],
                     "strategy": {"minStartedSeconds": 5}, "ttlSecondsAfterFinished": 3},
        })  # fmt: skip
        labels = crr["metadata"]["labels"]
        assert labels["crr.apps.kruise.io/pod-uid"] == pod["metadata"]["uid"]
        assert labels["crr.apps.kruise.io/node-name"] == pod["spec"]["nodeName"]
        assert labels[ACTIVE] == "true"
        assert crr["spec"]["strategy"]["failurePolicy"] == "Fail"
        old_app = crr["spec"]["containers"][0]["statusContext"]["containerID"]
        assert old_app == container_status(pod, "app")["containerID"]

        crr = await _completed(case, crr["metadata"]["name"], 70)
        assert crr["status"].get("completionTime")
        crr = await _inactive(case, crr["metadata"]["name"])
        assert crr["status"]["containerRecreateStates"] == [
            {"name": "app", "phase": "Succeeded", "isKilled": True}
        ]

        # the container was recreated and ran for minStartedSeconds
        pod = await case.pod(pod["metadata"]["name"])
        assert pod is not None and _ready(pod)
        app = container_status(pod, "app")
        assert app["containerID"] != old_app
        assert app["restartCount"] == 1
        started = _time(app["state"]["running"]["startedAt"])
        assert (_time(crr["status"]["completionTime"]) - started).total_seconds() > 4

        # deleted by TTL
        await until(lambda: _crr(case, crr["metadata"]["name"]), lambda c: c is None, "CRR deleted by TTL", 6)

        # CRR for pods[1], recreate containers app and sidecar
        pod = pods[1]
        crr = await case.create({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ContainerRecreateRequest",
            "metadata": {"name": f"crr-{case.rand}-1", "namespace": case.ns},
            "spec": {"podName": pod["metadata"]["name"],
                     "containers": [{"name": "app"}, {"name": "sidecar"}]},
        })  # fmt: skip
        old_app = crr["spec"]["containers"][0]["statusContext"]["containerID"]
        old_sidecar = crr["spec"]["containers"][1]["statusContext"]["containerID"]
        assert old_app == container_status(pod, "app")["containerID"]
        assert old_sidecar == container_status(pod, "sidecar")["containerID"]

        crr = await _completed(case, crr["metadata"]["name"], 60)
        assert crr["status"].get("completionTime")
        crr = await _inactive(case, crr["metadata"]["name"])
        assert crr["status"]["containerRecreateStates"] == [
            {"name": "app", "phase": "Succeeded", "isKilled": True},
            {"name": "sidecar", "phase": "Succeeded", "isKilled": True},
        ]
        pod = await case.pod(pod["metadata"]["name"])
        assert pod is not None and _ready(pod)
        assert container_status(pod, "app")["containerID"] != old_app
        assert container_status(pod, "sidecar")["containerID"] != old_sidecar
        assert container_status(pod, "app")["restartCount"] == 1
        assert container_status(pod, "sidecar")["restartCount"] == 1
