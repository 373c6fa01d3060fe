"""Built-in controllers: Job completion/failure and Deployment -> ReplicaSet -> Pods with rollouts."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from simulator_testkit import Cluster, condition, is_ready

from kruise.sandbox.simulator.client import STRATEGIC_PATCH, resource_path


def job(name, *, completions=2, parallelism=1, backoff_limit=6, annotations=None):
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "completions": completions,
            "parallelism": parallelism,
            "backoffLimit": backoff_limit,
            "template": {
                "metadata": {"annotations": {"sandbox.kruise.io/run-seconds": "1", **(annotations or {})}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox:1.36"}]},
            },
        },
    }


def has_condition(kind):
    def check(obj):
        found = condition(obj, kind)
        return found is not None and found["status"] == "True"

    return check


async def test_job_runs_to_completion(cluster: Cluster):
    await cluster.create(job("pi", completions=3, parallelism=2), "jobs", "batch/v1")
    done = await cluster.wait_for("jobs", "pi", has_condition("Complete"), group_version="batch/v1")
    assert done["status"]["succeeded"] == 3
    assert "active" not in done["status"]
    assert done["status"]["startTime"] and done["status"]["completionTime"]
    assert condition(done, "Complete")["reason"] == "CompletionsReached"
    pods = (await cluster.client.list(resource_path("v1", "pods", "default"), labelSelector="job-name=pi"))[
        "items"
    ]
    assert len(pods) == 3
    assert all(p["status"]["phase"] == "Succeeded" for p in pods)
    assert all(p["metadata"]["ownerReferences"][0]["controller"] for p in pods)
    assert all(
        p["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == done["metadata"]["uid"] for p in pods
    )


async def test_job_fails_after_backoff_limit(cluster: Cluster):
    failing = job("flaky", completions=1, backoff_limit=1, annotations={"sandbox.kruise.io/exit-code": "1"})
    await cluster.create(failing, "jobs", "batch/v1")
    failed = await cluster.wait_for("jobs", "flaky", has_condition("Failed"), group_version="batch/v1")
    assert failed["status"]["failed"] == 2
    assert condition(failed, "Failed")["reason"] == "BackoffLimitExceeded"
    assert condition(failed, "Failed")["message"] == "Job has reached the specified backoff limit"


def deployment(name, image, replicas=3):
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "generation": 1},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


def rolled_out(replicas):
    def check(d):
        status = d.get("status") or {}
        return (
            status.get("observedGeneration", 0) >= d["metadata"].get("generation", 1)
            and status.get("updatedReplicas") == replicas
            and status.get("replicas") == replicas
            and status.get("availableReplicas") == replicas
        )

    return check


async def test_deployment_creates_replicaset_and_running_pods_then_rolls(cluster: Cluster):
    await cluster.create(deployment("web", "nginx:1.25"), "deployments", "apps/v1")
    ready = await cluster.wait_for("deployments", "web", rolled_out(3), group_version="apps/v1")
    assert condition(ready, "Available")["status"] == "True"
    sets = (await cluster.client.list(resource_path("apps/v1", "replicasets", "default")))["items"]
    first = next(rs for rs in sets if rs["metadata"]["ownerReferences"][0]["uid"] == ready["metadata"]["uid"])
    pod_hash = first["metadata"]["labels"]["pod-template-hash"]
    assert first["metadata"]["name"] == f"web-{pod_hash}"
    pods = (await cluster.client.list(resource_path("v1", "pods", "default"), labelSelector="app=web"))[
        "items"
    ]
    assert len(pods) == 3 and all(is_ready(p) for p in pods)
    assert {p["metadata"]["labels"]["pod-template-hash"] for p in pods} == {pod_hash}

    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}}}
    await cluster.client.patch(
        resource_path("apps/v1", "deployments", "default", "web"), patch, STRATEGIC_PATCH
    )
    await cluster.wait_list(
        "pods",
        lambda items: (
            len([p for p in items if p["metadata"]["labels"].get("app") == "web"]) == 3
            and all(
                p["spec"]["containers"][0]["image"] == "nginx:1.27" and is_ready(p)
                for p in items
                if p["metadata"]["labels"].get("app") == "web"
            )
        ),
        label_selector="app=web",
    )
    done = await cluster.wait_for("deployments", "web", rolled_out(3), group_version="apps/v1")
    assert done["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    old = await cluster.client.get(
        resource_path("apps/v1", "replicasets", "default", first["metadata"]["name"])
    )
    assert old["spec"]["replicas"] == 0


async def test_kubectl_rollout_status_waits_for_the_simulated_rollout(cluster: Cluster, sandbox_emulator):
    await cluster.create(deployment("api", "nginx:1.25", replicas=2), "deployments", "apps/v1")
    kubectl = Path(sys.executable).parent / "kubectl"
    process = await asyncio.create_subprocess_exec(
        str(kubectl),
        "--kubeconfig",
        str(sandbox_emulator.kubeconfig),
        "rollout",
        "status",
        "deployment/api",
        "--timeout=30s",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 40)
    assert process.returncode == 0, stderr.decode()
    assert 'deployment "api" successfully rolled out' in stdout.decode()


async def test_scaling_a_deployment_down_and_up(cluster: Cluster):
    await cluster.create(deployment("scaled", "nginx:1.25", replicas=3), "deployments", "apps/v1")
    await cluster.wait_for("deployments", "scaled", rolled_out(3), group_version="apps/v1")
    path = resource_path("apps/v1", "deployments", "default", "scaled")
    await cluster.client.patch(path, {"spec": {"replicas": 1}})
    await cluster.wait_list("pods", lambda items: len(items) == 1, label_selector="app=scaled")
    await cluster.wait_for("deployments", "scaled", rolled_out(1), group_version="apps/v1")
    await cluster.client.patch(path, {"spec": {"replicas": 4}})
    pods = await cluster.wait_list(
        "pods", lambda items: len(items) == 4 and all(is_ready(p) for p in items), label_selector="app=scaled"
    )
    assert len({p["metadata"]["labels"]["pod-template-hash"] for p in pods}) == 1
    await cluster.wait_for("deployments", "scaled", rolled_out(4), group_version="apps/v1")
