"""Seed 002's CloneSet walkthrough, through `kruise sandbox up` (kruise-webhook + kruise-manager as
real processes) and the real kubectl: create, scale with maxUnavailable + minReadySeconds,
podsToDelete, in-place update, partition, pause and ReCreate. Durations are shortened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from harness import Cluster, SandboxProcess, ready_kubeconfig

MIN_READY = 3  # the seed uses 60 s

DEMO = """
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: cs-demo
spec:
  replicas: 3
  selector:
    matchLabels:
      app: cs
  template:
    metadata:
      labels:
        app: cs
    spec:
      containers:
      - name: nginx
        image: nginx:alpine
        imagePullPolicy: IfNotPresent
        ports:
        - containerPort: 80
"""


@pytest.fixture(scope="module")
def kruise_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    kubeconfig = tmp_path_factory.mktemp("cs-sandbox") / "kubeconfig"
    sandbox = SandboxProcess.start("--nodes", "3", "--speed", "20", "--kubeconfig", str(kubeconfig))
    try:
        yield Cluster(ready_kubeconfig(sandbox.wait_for("ready", 120)), is_sandbox=True, nodes=3)
    finally:
        code = sandbox.terminate()
        assert code == 0, sandbox.output


async def cs_status(cluster: Cluster) -> dict:
    _, out = await cluster.kubectl("get", "cloneset", "cs-demo", "-o", "json")
    return json.loads(out)


async def pods(cluster: Cluster) -> list[dict]:
    _, out = await cluster.kubectl("get", "pods", "-l", "app=cs", "-o", "json")
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


async def wait_rolled_out(cluster: Cluster, replicas: int, updated: int | None = None) -> None:
    updated = replicas if updated is None else updated
    for path, value in (
        (".status.observedGeneration", None),
        (".status.replicas", replicas),
        (".status.readyReplicas", replicas),
        (".status.updatedReadyReplicas", updated),
    ):
        if value is None:
            cs = await cs_status(cluster)
            value = cs["metadata"]["generation"]
        await cluster.kubectl(
            "wait", "cloneset/cs-demo", f"--for=jsonpath={{{path}}}={value}", "--timeout=90s"
        )


async def apply_spec(cluster: Cluster, patch: dict) -> None:
    await cluster.kubectl("patch", "cloneset", "cs-demo", "--type=merge", "-p", json.dumps({"spec": patch}))


async def events(cluster: Cluster) -> list[dict]:
    _, out = await cluster.kubectl(
        "get", "events", "--field-selector", "involvedObject.name=cs-demo", "-o", "json"
    )
    return json.loads(out)["items"]


def container(image: str) -> dict:
    """The demo's container with a new image, as a user edits it in cloneset-demo.yaml (a merge
    patch replaces the whole list, so every field is given)."""
    return {
        "name": "nginx",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"containerPort": 80}],
    }


def created(pod: dict) -> datetime:
    return datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))


async def test_seed_002_cloneset_walkthrough(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    (tmp_path / "cloneset-demo.yaml").write_text(DEMO)
    await cluster.kubectl("apply", "-f", str(tmp_path / "cloneset-demo.yaml"))
    await wait_rolled_out(cluster, 3)
    _, table = await cluster.kubectl("get", "cloneset", "cs-demo")
    header, row = table.strip().splitlines()
    assert header.split() == [
        "NAME",
        "DESIRED",
        "UPDATED",
        "UPDATED_READY",
        "UPDATED_AVAILABLE",
        "READY",
        "TOTAL",
        "AGE",
    ]
    assert row.split()[:7] == ["cs-demo", "3", "3", "3", "3", "3", "3"]
    _, described = await cluster.kubectl("describe", "cloneset", "cs-demo")
    assert described.count("SuccessfulCreate") == 3 and "cloneset-controller" in described
    first = await pods(cluster)
    assert all(
        p["metadata"]["name"].startswith("cs-demo-") and len(p["metadata"]["name"]) == 13 for p in first
    )

    # Scale to 5 with scaleStrategy.maxUnavailable 1 and minReadySeconds: one pod at a time.
    await apply_spec(
        cluster, {"minReadySeconds": MIN_READY, "scaleStrategy": {"maxUnavailable": 1}, "replicas": 5}
    )
    await wait_rolled_out(cluster, 5)
    await cluster.kubectl(
        "wait", "cloneset/cs-demo", "--for=jsonpath={.status.availableReplicas}=5", "--timeout=90s"
    )
    new = sorted((p for p in await pods(cluster) if p not in first), key=created)
    assert len(new) == 2
    assert (created(new[1]) - created(new[0])).total_seconds() >= MIN_READY - 1
    limited = [e for e in await events(cluster) if e["reason"] == "ScaleUpLimited"]
    assert limited and limited[0]["type"] == "Warning"
    assert "scaleUp is limited because of scaleStrategy.maxUnavailable, limit: " in limited[0]["message"]

    # podsToDelete with replicas 4: that pod goes, the list is cleaned up.
    victim = new[1]["metadata"]["name"]
    await apply_spec(
        cluster, {"scaleStrategy": {"maxUnavailable": 1, "podsToDelete": [victim]}, "replicas": 4}
    )
    await cluster.kubectl(
        "wait",
        "cloneset/cs-demo",
        "--for=jsonpath={.spec.scaleStrategy.podsToDelete}=",
        "--timeout=60s",
        check=False,
    )
    await wait_rolled_out(cluster, 4)
    remaining = await pods(cluster)
    assert victim not in {p["metadata"]["name"] for p in remaining} and len(remaining) == 4
    _, spec = await cluster.kubectl("get", "cloneset", "cs-demo", "-o", "jsonpath={.spec.scaleStrategy}")
    assert "podsToDelete" not in json.loads(spec) or not json.loads(spec)["podsToDelete"]

    # In-place update: same names, UIDs and IPs; restart count +1.
    before = {p["metadata"]["name"]: p for p in remaining}
    await apply_spec(
        cluster,
        {
            "updateStrategy": {"type": "InPlaceIfPossible"},
            "template": {
                "metadata": {"labels": {"app": "cs"}},
                "spec": {
                    "containers": [
                        {
                            "name": "nginx",
                            "image": "nginx:1.7.9",
                            "imagePullPolicy": "IfNotPresent",
                            "ports": [{"containerPort": 80}],
                        }
                    ]
                },
            },
        },
    )
    await wait_rolled_out(cluster, 4)
    after = {p["metadata"]["name"]: p for p in await pods(cluster)}
    assert after.keys() == before.keys()
    for name, pod in after.items():
        assert pod["metadata"]["uid"] == before[name]["metadata"]["uid"]
        assert pod["status"]["podIP"] == before[name]["status"]["podIP"]
        assert pod["status"]["containerStatuses"][0]["restartCount"] == 1
        assert pod["status"]["containerStatuses"][0]["image"].endswith("nginx:1.7.9")
    revision = (await cs_status(cluster))["status"]["updateRevision"]
    assert revision == "cs-demo-7cb9c88699"  # the name a real OpenKruise cluster gives it in the seed
    in_place = [e for e in await events(cluster) if e["reason"] == "SuccessfulUpdatePodInPlace"]
    assert {e["message"] for e in in_place} == {
        f"successfully update pod {name} in-place(revision {revision})" for name in after
    }
    some_pod = next(iter(after))
    _, pod_events = await cluster.kubectl("describe", "pod", some_pod)
    assert "Container nginx definition changed, will be restarted" in pod_events

    # partition=2 with a new image: only 2 pods move to the new revision. The seed's prose says
    # nginx:latest, but the revision it shows (cs-demo-6599fc6cdd) is the hash of image "nginx".
    await apply_spec(
        cluster,
        {
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": 2},
            "template": {"spec": {"containers": [container("nginx")]}},
        },
    )
    await wait_rolled_out(cluster, 4, updated=2)
    _, table = await cluster.kubectl("get", "pods", "-l", "app=cs", "-L", "controller-revision-hash")
    hashes = [line.split()[-1] for line in table.strip().splitlines()[1:]]
    latest = (await cs_status(cluster))["status"]["updateRevision"]
    assert latest == "cs-demo-6599fc6cdd"
    assert hashes.count(latest) == 2 and hashes.count(revision) == 2

    # paused: lowering the partition updates nothing until resumed.
    await apply_spec(cluster, {"updateStrategy": {"partition": 0, "paused": True}})
    await cluster.kubectl(
        "wait", "cloneset/cs-demo", "--for=jsonpath={.status.expectedUpdatedReplicas}=4", "--timeout=60s"
    )
    assert (await cs_status(cluster))["status"]["updatedReplicas"] == 2
    await apply_spec(cluster, {"updateStrategy": {"paused": False}})
    await wait_rolled_out(cluster, 4)

    # ReCreate: new pods with new names replace the old ones.
    names = {p["metadata"]["name"] for p in await pods(cluster)}
    await apply_spec(
        cluster,
        {
            "updateStrategy": {"type": "ReCreate", "partition": 0},
            "template": {"spec": {"containers": [container("nginx:alpine")]}},
        },
    )
    await wait_rolled_out(cluster, 4)
    final = await pods(cluster)
    assert len(final) == 4 and not names & {p["metadata"]["name"] for p in final}
    assert any(e["reason"] == "SuccessfulUpdatePodReCreate" for e in await events(cluster))
