"""Upstream's SidecarTerminator e2e, Describe "SidecarTerminator" — context "SidecarTerminator checker"
(openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/sidecarterminator.go) — translated to kubectl on real
nodes (`kruise sandbox up --runtime containerd`, upstream's e2e feature gates, so the alpha
SidecarTerminator gate is on).

It runs here rather than on the fake-runtime sandbox because the case is about what containers' commands
do: the main container `sleep 5`s or `exit 1`s while the nginx sidecar serves until it is stopped. The fake
runtime ends every container of a Job pod together after the pod's run time, with one pod-wide exit code,
so there the sidecar would stop by itself and "main failed" could not be expressed. On containerd
busybox really sleeps and exits and `nginx:latest` (busybox httpd) runs until kruise-daemon stops it
through the ContainerRecreateRequest kruise-manager writes.

Upstream's second `It`, "use in-place update strategy to kill containers", is commented out in v1.9.0."""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable

import pytest
from harness import Cluster, until
from upstream_kit import Obj, rand_string

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(1200)]

# as e2e/conftest.py's UPSTREAM_E2E_GATES: the manager flag of upstream's e2e deployment
SANDBOX_ARGS = (
    "--feature-gates",
    "AllAlpha=true,AllBeta=true,EnableExternalCerts=false,TemplateNoDefaults=false",
)

TERMINATE_SIDECAR_ENV = "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT"
IGNORE_EXIT_CODE_ENV = "KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE"
BROADCASTJOB = "broadcastjobs.v1beta1.apps.kruise.io"
WAIT = 600.0  # upstream: 10 minutes per job

MAIN = {
    "name": "main",
    "image": "busybox:latest",
    "imagePullPolicy": "IfNotPresent",
    "command": ["/bin/sh", "-c", "sleep 5"],
}
SIDECAR = {
    "name": "sidecar",
    "image": "nginx:latest",
    "imagePullPolicy": "IfNotPresent",
    "env": [{"name": TERMINATE_SIDECAR_ENV, "value": "true"}],
}
SIDECAR_NEVER_STOP = {
    "name": "sidecar",
    "image": "busybox:latest",
    "imagePullPolicy": "IfNotPresent",
    "command": ["/bin/sh", "-c", "sleep 10000"],
    "env": [
        {"name": TERMINATE_SIDECAR_ENV, "value": "true"},
        {"name": IGNORE_EXIT_CODE_ENV, "value": "true"},
    ],
}


def failing_main() -> Obj:
    main = copy.deepcopy(MAIN)
    main["command"] = ["/bin/sh", "-c", "exit 1"]
    return main


def native_job(ns: str, name: str, containers: list[Obj], restart: str, **spec: object) -> Obj:
    template: Obj = {"spec": {"containers": containers, "restartPolicy": restart}}
    labels = spec.pop("labels", None)
    if labels:
        template["metadata"] = {"labels": labels}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"namespace": ns, "name": name},
        "spec": {**spec, "template": template},
    }


def broadcast_job(ns: str, name: str, containers: list[Obj], restart: str) -> Obj:
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "BroadcastJob",
        "metadata": {"namespace": ns, "name": name},
        "spec": {
            "template": {"spec": {"containers": containers, "restartPolicy": restart}},
            "completionPolicy": {"type": "Always"},
        },
    }


async def get(cluster: Cluster, ns: str, resource: str, name: str) -> Obj:
    _, out = await cluster.kubectl("get", resource, name, "-n", ns, "-o", "json")
    return json.loads(out)


def has_condition(job: Obj, kind: str) -> bool:
    return any(c.get("type") == kind for c in (job.get("status") or {}).get("conditions") or [])


def job_condition(kind: str) -> Callable[[Cluster, str, str], Awaitable[bool]]:
    async def check(cluster: Cluster, ns: str, name: str) -> bool:
        return has_condition(await get(cluster, ns, "jobs.v1.batch", name), kind)

    return check


async def complete_or_pod_succeeded(cluster: Cluster, ns: str, name: str) -> bool:
    """The never-stopping sidecar's check: the Job completed, or its one pod Succeeded."""
    if has_condition(await get(cluster, ns, "jobs.v1.batch", name), "Complete"):
        return True
    _, out = await cluster.kubectl("get", "pods", "-n", ns, "-l", "with-sidecar-neverstop=true", "-o", "json")
    pods = json.loads(out)["items"]
    return len(pods) == 1 and (pods[0].get("status") or {}).get("phase") == "Succeeded"


def broadcast_phase(phase: str) -> Callable[[Cluster, str, str], Awaitable[bool]]:
    async def check(cluster: Cluster, ns: str, name: str) -> bool:
        return (await get(cluster, ns, BROADCASTJOB, name)).get("status", {}).get("phase") == phase

    return check


async def test_job_and_broadcast_job_with_sidecar(real_cluster: Cluster):
    """job and broadcast job with sidecar"""
    cluster = real_cluster
    rand = rand_string()
    ns = f"e2e-sidecarterminator-{rand[:6]}"
    await cluster.kubectl("create", "namespace", ns)
    cases: list[tuple[str, Callable[[str], Obj], Callable[[Cluster, str, str], Awaitable[bool]]]] = [
        (
            "native job, restartPolicy=Never",
            lambda name: native_job(ns, name, [copy.deepcopy(MAIN), copy.deepcopy(SIDECAR)], "Never"),
            job_condition("Complete"),
        ),
        (
            "native job, restartPolicy=Never, main succeeded, sidecar never stop",
            lambda name: native_job(
                ns,
                name,
                [copy.deepcopy(MAIN), copy.deepcopy(SIDECAR_NEVER_STOP)],
                "Never",
                labels={"with-sidecar-neverstop": "true"},
            ),
            complete_or_pod_succeeded,
        ),
        (
            "native job, restartPolicy=OnFailure, main failed",
            lambda name: native_job(
                ns, name, [failing_main(), copy.deepcopy(SIDECAR)], "OnFailure", backoffLimit=3
            ),
            job_condition("Failed"),
        ),
        (
            "native job, restartPolicy=OnFailure, main succeeded",
            lambda name: native_job(
                ns, name, [copy.deepcopy(MAIN), copy.deepcopy(SIDECAR)], "OnFailure", backoffLimit=3
            ),
            job_condition("Complete"),
        ),
        (
            "BroadcastJob, restartPolicy=Never",
            lambda name: broadcast_job(ns, name, [copy.deepcopy(MAIN), copy.deepcopy(SIDECAR)], "Never"),
            broadcast_phase("completed"),
        ),
        (
            "BroadcastJob, restartPolicy=OnFailure, main failed",
            lambda name: broadcast_job(ns, name, [failing_main(), copy.deepcopy(SIDECAR)], "OnFailure"),
            broadcast_phase("failed"),
        ),
        (
            "BroadcastJob, restartPolicy=OnFailure, main succeeded",
            lambda name: broadcast_job(ns, name, [copy.deepcopy(MAIN), copy.deepcopy(SIDECAR)], "OnFailure"),
            broadcast_phase("completed"),
        ),
    ]
    try:
        for i, (title, create, check) in enumerate(cases):
            name = f"job-{rand}-{i}"
            await cluster.kubectl("create", "-f", "-", stdin=json.dumps(create(name)))
            await until(
                lambda n=name, c=check: c(cluster, ns, n), bool, f"{title}: job {name} done", timeout=WAIT
            )
    except AssertionError as failure:
        _, pods = await cluster.kubectl("get", "pods", "-n", ns, "-o", "wide", check=False)
        failure.add_note(f"pods in {ns}:\n{pods}")
        raise
    finally:
        await cluster.kubectl("delete", "namespace", ns, "--ignore-not-found", "--wait=false", check=False)
