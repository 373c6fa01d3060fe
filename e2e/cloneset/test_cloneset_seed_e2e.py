"""Seed 002's CloneSet walkthrough, through `kruise sandbox up` (kruise-webhook + kruise-manager as
real processes) and the real kubectl: create, scale with maxUnavailable + minReadySeconds,
podsToDelete, in-place update, partition, pause and ReCreate. Durations are shortened."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from harness import SEED_002_CLONESET, Cluster, kubectl_kruise, until

MIN_READY = 3  # the seed uses 60 s


async def cs_status(cluster: Cluster) -> dict:
    _, out = await cluster.kubectl("get", "cloneset", "cs-demo", "-o", "json")
    return json.loads(out)


async def pods(cluster: Cluster) -> list[dict]:
    _, out = await cluster.kubectl("get", "pods", "-l", "app=cs", "-o", "json")
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


async def wait_rolled_out(cluster: Cluster, replicas: int, updated: int | None = None) -> None:
    """Observed the latest generation, then the counts. The generation is compared on one read, not
    waited for as a fixed number: the controller itself changes the spec (it drops deleted pods from
    podsToDelete), so the status can go from the generation read before straight past it."""
    updated = replicas if updated is None else updated
    await until(
        lambda: cs_status(cluster),
        lambda cs: (cs.get("status") or {}).get("observedGeneration", 0) >= cs["metadata"]["generation"],
        "status.observedGeneration >= metadata.generation",
        timeout=90,
    )
    for path, value in (
        (".status.replicas", replicas),
        (".status.readyReplicas", replicas),
        (".status.updatedReadyReplicas", updated),
    ):
        await cluster.kubectl(
            "wait", "cloneset/cs-demo", f"--for=jsonpath={{{path}}}={value}", "--timeout=90s"
        )


async def apply_spec(cluster: Cluster, patch: dict) -> None:
    """The seed edits its v1alpha1 YAML; on the default API set (1.9) CloneSet is served at v1alpha1 only,
    so a plain `kubectl patch cloneset` in the seed's shape works as written."""
    await cluster.kubectl(
        "patch",
        "cloneset",
        "cs-demo",
        "--type=merge",
        "-p",
        json.dumps({"spec": patch}),
    )


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
    (tmp_path / "cloneset-demo.yaml").write_text(SEED_002_CLONESET)
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
    # by uid: kruise-daemon annotates pods (runtime-containers-meta); a pod no longer equals its old read
    first_uids = {p["metadata"]["uid"] for p in first}
    new = sorted((p for p in await pods(cluster) if p["metadata"]["uid"] not in first_uids), key=created)
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
    # the controller drops the deleted pod's name from the list
    await until(
        lambda: cs_status(cluster),
        lambda cs: not cs["spec"].get("scaleStrategy", {}).get("podsToDelete"),
        "spec.scaleStrategy.podsToDelete emptied",
        timeout=60,
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


HPA_DEMO = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "CloneSet",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "updateStrategy": {"type": "InPlaceIfPossible"},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
        },
    },
}


async def test_scale_subresource_and_kubectl_kruise_drive_the_controller(kruise_sandbox: Cluster):
    """`kubectl scale` through the scale subresource (HPA's path) and `kubectl kruise rollout` /
    `set image` against CloneSets the real controller rolls out."""
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(HPA_DEMO))
    await cluster.kubectl("scale", "clonesets.apps.kruise.io/web", "--replicas=4")
    await cluster.kubectl("wait", "cloneset/web", "--for=jsonpath={.status.readyReplicas}=4", "--timeout=90s")
    _, raw = await cluster.kubectl(
        "get", "--raw", "/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets/web/scale"
    )
    scale = json.loads(raw)
    assert scale["spec"]["replicas"] == 4 and scale["status"]["replicas"] == 4
    assert scale["status"]["selector"] == "app=web"

    await kubectl_kruise(cluster, "set", "image", "cloneset/web", "web=nginx:1.26")
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "cloneset/web")
    assert "rolling update complete 4 pods at revision web-" in out
    _, raw = await cluster.kubectl("get", "pods", "-l", "app=web", "-o", "json")
    pods = json.loads(raw)["items"]
    assert len(pods) == 4
    assert all(p["status"]["containerStatuses"][0]["restartCount"] == 1 for p in pods)

    await kubectl_kruise(cluster, "rollout", "undo", "cloneset/web")
    _, out, _ = await kubectl_kruise(cluster, "rollout", "status", "cloneset/web")
    assert "rolling update complete 4 pods at revision web-" in out
    _, raw = await cluster.kubectl("get", "pods", "-l", "app=web", "-o", "json")
    pods = json.loads(raw)["items"]
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"nginx:1.25"}
    assert all(p["status"]["containerStatuses"][0]["restartCount"] == 2 for p in pods)
