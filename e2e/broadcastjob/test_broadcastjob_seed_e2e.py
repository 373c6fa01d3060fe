"""Seed 002's BroadcastJob section, through `kruise sandbox up` (kruise-webhook + kruise-manager as
real processes) and the real kubectl: ``bcj-demo`` runs one pod per node to completion (`kubectl get
bcj` DESIRED/ACTIVE/SUCCEEDED/FAILED/AGE, pods ``Completed``), ``completionPolicy`` Always with
``ttlSecondsAfterFinished`` (the finished job is deleted, its pods with it), with
``activeDeadlineSeconds: 10`` (marked failed, running pods deleted) and Never (the job keeps
running; a node that becomes eligible gets a pod). The webhook rejects restartPolicy Always.

The sandbox has 3 nodes where the seed had 2, so the counts are 3 where the seed shows 2. The
sandbox's speed factor shortens the pods' run time, not the manager's clock: the TTL is 5 s here
(the seed's 30 s would only make the test wait longer); the deadline is the seed's 10 s. The
deadline job's pods carry ``sandbox.kruise.io/run-seconds`` so they are still running when it
passes (the seed's counter exits at once).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import yaml
from harness import Cluster

SEED_JOB = """
apiVersion: apps.kruise.io/v1alpha1
kind: BroadcastJob
metadata:
  name: bcj-demo
  namespace: default
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: counter
        image: busybox
        command:
        - "/bin/sh"
        - "-c"
        - "for i in 9 8 7 6 5 4 3 2 1; do echo $i; done"
"""

LONG_RUN = {"sandbox.kruise.io/run-seconds": "1000000"}


def job_manifest(name: str, completion_policy: dict | None = None, **template_changes: dict) -> str:
    """The seed's job under another name, with one of the seed's completionPolicy fragments."""
    job = yaml.safe_load(SEED_JOB)
    job["metadata"]["name"] = name
    if completion_policy is not None:
        job["spec"]["completionPolicy"] = completion_policy
    for key, value in template_changes.items():
        if key == "annotations":
            job["spec"]["template"].setdefault("metadata", {})["annotations"] = value
        else:
            job["spec"]["template"]["spec"][key] = value
    return yaml.safe_dump(job)


async def apply(cluster: Cluster, tmp_path: Path, manifest: str, check: bool = True) -> tuple[int, str]:
    path = tmp_path / "bcj.yaml"
    path.write_text(manifest)
    return await cluster.kubectl("apply", "-f", str(path), check=check)


async def get_job(cluster: Cluster, name: str) -> dict:
    _, out = await cluster.kubectl("get", "bcj", name, "-o", "json")
    return json.loads(out)


async def wait_status(cluster: Cluster, name: str, timeout: str = "60s", **expected: object) -> dict:
    for field, value in expected.items():
        await cluster.kubectl(
            "wait", f"bcj/{name}", f"--for=jsonpath={{.status.{field}}}={value}", f"--timeout={timeout}"
        )
    return await get_job(cluster, name)


async def job_pods(cluster: Cluster, name: str) -> list[dict]:
    _, out = await cluster.kubectl("get", "pods", "-l", f"broadcastjob-name={name}", "-o", "json")
    return json.loads(out)["items"]


async def job_events(cluster: Cluster, name: str) -> list[tuple[str, str, str]]:
    _, out = await cluster.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "json"
    )
    return [
        (e["type"], e["reason"], e["message"])
        for e in json.loads(out)["items"]
        if e["involvedObject"].get("kind") == "BroadcastJob"
    ]


async def node_names(cluster: Cluster) -> list[str]:
    _, out = await cluster.kubectl("get", "nodes", "-o", "json")
    return sorted(n["metadata"]["name"] for n in json.loads(out)["items"])


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def seconds_between(earlier: str, later: str) -> float:
    return (parse_time(later) - parse_time(earlier)).total_seconds()


async def test_seed_002_bcj_demo_runs_once_on_every_node(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    nodes = await node_names(cluster)
    assert len(nodes) == 3
    await apply(cluster, tmp_path, SEED_JOB)
    job = await wait_status(cluster, "bcj-demo", succeeded=3, phase="completed")
    assert job["spec"]["completionPolicy"] == {"type": "Always"}  # the webhook's default
    status = job["status"]
    assert (status["desired"], status["active"], status["succeeded"], status["failed"]) == (3, 0, 3, 0)
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("Complete", "True", "Complete")
    ]
    assert status["conditions"][0]["message"] == "Job completed, 3 pods succeeded, 0 pods failed"
    assert status["startTime"] <= status["completionTime"]

    _, table = await cluster.kubectl("get", "bcj", "bcj-demo")
    header, row = table.strip().splitlines()
    assert header.split() == ["NAME", "DESIRED", "ACTIVE", "SUCCEEDED", "FAILED", "AGE"]
    assert row.split()[:5] == ["bcj-demo", "3", "0", "3", "0"]

    _, wide = await cluster.kubectl("get", "pods", "-l", "broadcastjob-name=bcj-demo", "-o", "wide")
    lines = wide.strip().splitlines()
    assert lines[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    rows = [line.split() for line in lines[1:]]
    assert sorted(r[6] for r in rows) == nodes
    for r in rows:
        assert r[0].startswith("bcj-demo-") and len(r[0]) == len("bcj-demo-m4mrw")
        assert r[1:4] == ["0/1", "Completed", "0"]

    pods = await job_pods(cluster, "bcj-demo")
    events = await job_events(cluster, "bcj-demo")
    created = sorted(m for _, reason, m in events if reason == "SuccessfulCreate")
    assert created == sorted(f"Created pod: {p['metadata']['name']}" for p in pods)
    assert (
        "Normal",
        "JobComplete",
        "Job default/bcj-demo is completed, 3 pods succeeded, 0 pods failed",
    ) in events

    await cluster.kubectl("delete", "bcj", "bcj-demo", "--wait=true")
    await cluster.kubectl("wait", "pods", "-l", "broadcastjob-name=bcj-demo", "--for=delete", "--timeout=60s")


async def test_seed_002_ttl_seconds_after_finished_deletes_the_job(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    ttl = 5
    await apply(
        cluster, tmp_path, job_manifest("bcj-ttl", {"type": "Always", "ttlSecondsAfterFinished": ttl})
    )
    job = await wait_status(cluster, "bcj-ttl", succeeded=3, phase="completed")
    finished = job["status"]["completionTime"]
    # Still there right after it finished, with its pods.
    assert len(await job_pods(cluster, "bcj-ttl")) == 3
    await cluster.kubectl("wait", "bcj/bcj-ttl", "--for=delete", "--timeout=60s")
    code, out = await cluster.kubectl("get", "bcj", "bcj-ttl", check=False)
    assert code != 0 and 'broadcastjobs.apps.kruise.io "bcj-ttl" not found' in out
    # The pods go with it (owner references, background cascading).
    await cluster.kubectl("wait", "pods", "-l", "broadcastjob-name=bcj-ttl", "--for=delete", "--timeout=60s")
    # Not before the TTL ran out (completionTime has whole seconds: allow that truncation).
    assert (datetime.now(UTC) - parse_time(finished)).total_seconds() >= ttl - 1


async def test_seed_002_active_deadline_fails_the_job_and_deletes_running_pods(
    kruise_sandbox: Cluster, tmp_path: Path
):
    cluster = kruise_sandbox
    name = "bcj-deadline"
    await apply(
        cluster,
        tmp_path,
        job_manifest(name, {"type": "Always", "activeDeadlineSeconds": 10}, annotations=LONG_RUN),
    )
    running = await wait_status(cluster, name, active=3)
    assert running["status"]["phase"] == "running"
    await cluster.kubectl(
        "wait", "pods", "-l", f"broadcastjob-name={name}", "--for=jsonpath={.status.phase}=Running",
        "--timeout=60s",
    )  # fmt: skip
    started = running["status"]["startTime"]

    await cluster.kubectl("wait", f"bcj/{name}", "--for=condition=Failed", "--timeout=60s")
    job = await get_job(cluster, name)
    status = job["status"]
    assert (status["desired"], status["active"], status["succeeded"], status["failed"]) == (3, 0, 0, 3)
    assert status["phase"] == "failed"
    (condition,) = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == ("Failed", "True", "Failed")
    assert condition["message"] == f"Job default/{name} was active longer than specified deadline"
    assert seconds_between(started, condition["lastTransitionTime"]) >= 10

    await cluster.kubectl("wait", "pods", "-l", f"broadcastjob-name={name}", "--for=delete", "--timeout=60s")
    events = await job_events(cluster, name)
    assert (
        "Warning",
        "DeadlineExceeded",
        f"Job default/{name} was active longer than specified deadline: 0 pods succeeded, 3 pods failed",
    ) in events
    assert len([e for e in events if e[1] == "SuccessfulDelete"]) == 3

    _, table = await cluster.kubectl("get", "bcj", name)
    assert table.strip().splitlines()[1].split()[:5] == [name, "3", "0", "0", "3"]
    await cluster.kubectl("delete", "bcj", name)


async def test_seed_002_completion_policy_never_keeps_running_for_new_nodes(
    kruise_sandbox: Cluster, tmp_path: Path
):
    cluster = kruise_sandbox
    name = "bcj-never"
    nodes = await node_names(cluster)
    label = "bcj-e2e"
    for node in nodes[:2]:
        await cluster.kubectl("label", "node", node, f"{label}=yes")
    try:
        await apply(
            cluster,
            tmp_path,
            job_manifest(name, {"type": "Never"}, nodeSelector={label: "yes"}),
        )
        job = await wait_status(cluster, name, desired=2, succeeded=2)
        status = job["status"]
        assert (status["active"], status["failed"], status["phase"]) == (0, 0, "running")
        assert not status.get("conditions") and not status.get("completionTime")
        assert sorted(p["spec"]["nodeName"] for p in await job_pods(cluster, name)) == nodes[:2]

        # A node that becomes eligible gets its pod: the job never finished.
        await cluster.kubectl("label", "node", nodes[2], f"{label}=yes")
        job = await wait_status(cluster, name, desired=3, succeeded=3)
        assert job["status"]["phase"] == "running" and not job["status"].get("conditions")
        assert sorted(p["spec"]["nodeName"] for p in await job_pods(cluster, name)) == nodes
        _, table = await cluster.kubectl("get", "bcj", name)
        assert table.strip().splitlines()[1].split()[:5] == [name, "3", "0", "3", "0"]
        assert not [e for e in await job_events(cluster, name) if e[1] == "JobComplete"]
    finally:
        for node in nodes:
            await cluster.kubectl("label", "node", node, f"{label}-", check=False)
        await cluster.kubectl("delete", "bcj", name, "--ignore-not-found")


async def test_never_with_ttl_or_restart_policy_always_is_rejected(kruise_sandbox: Cluster, tmp_path: Path):
    cluster = kruise_sandbox
    code, out = await apply(cluster, tmp_path, job_manifest("bcj-bad", restartPolicy="Always"), check=False)
    assert code != 0
    assert 'admission webhook "vbroadcastjob.kb.io" denied the request' in out
    assert 'spec.template.spec.restartPolicy: Invalid value: "Always": ' in out
    assert "pod restartPolicy can only be Never or OnFailure" in out

    never_with_ttl = job_manifest("bcj-bad", {"type": "Never", "ttlSecondsAfterFinished": 30})
    code, out = await apply(cluster, tmp_path, never_with_ttl, check=False)
    assert code != 0
    assert "ttlSecondsAfterFinished can just work with Always CompletionPolicyType" in out
    code, out = await cluster.kubectl("get", "bcj", "bcj-bad", check=False)
    assert code != 0
