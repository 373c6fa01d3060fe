"""Pulls from the sandbox's private registry on real nodes (`kruise sandbox up --runtime containerd`).

`registry.kruise-sandbox.test/private/busybox:latest` is served by a registry that asks for basic
auth (kruise / sandbox-private). A `kubernetes.io/dockerconfigjson` Secret made with `kubectl create
secret docker-registry` carries those credentials:
- an ImagePullJob naming it in `spec.pullSecrets` is pulled by node-1's kruise-daemon through CRI
  with them, read from kruise-manager's copy of the Secret in kruise-daemon-config (deleted once the
  job completed), as upstream: the job succeeds, and the image is then in node-1's containerd (a pod with
  `imagePullPolicy: Never` starts from it there); the same job without the Secret fails on node-2
  with the registry's `401 Unauthorized` in the NodeImage status and the job's event;
- a pod with `imagePullSecrets` is pulled by the kubelet with the Secret's credentials and runs; the
  same pod without them stays in ErrImagePull with the registry's answer.
"""

from __future__ import annotations

import json

import pytest
from harness import Cluster, until

pytestmark = [pytest.mark.e2e, pytest.mark.containerd, pytest.mark.slow, pytest.mark.timeout(600)]
SANDBOX_ARGS = ("--feature-gates", "ImagePullJobGate=true")

REGISTRY = "registry.kruise-sandbox.test"
IMAGE = f"{REGISTRY}/private/busybox:latest"
REPOSITORY = f"{REGISTRY}/private/busybox"
SECRET = "private-registry"
UNAUTHORIZED = "401 Unauthorized"
DAEMON_NS = "kruise-daemon-config"


def pull_job(name: str, node: str, secrets: list[str]) -> str:
    spec = {
        "image": IMAGE,
        "parallelism": 1,
        "selector": {"names": [node]},
        "completionPolicy": {"type": "Always"},
        "pullPolicy": {"backoffLimit": 0, "timeoutSeconds": 60},
    }
    if secrets:
        spec["pullSecrets"] = secrets
    job = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    return json.dumps(job)


def private_pod(name: str, node: str, *, policy: str, secrets: list[str]) -> str:
    spec: dict = {
        "nodeName": node,
        "terminationGracePeriodSeconds": 1,
        "containers": [
            {
                "name": "app",
                "image": IMAGE,
                "imagePullPolicy": policy,
                "command": ["sh", "-c", f"echo {name} runs the private image; exec sleep 3600"],
            }
        ],
    }
    if secrets:
        spec["imagePullSecrets"] = [{"name": s} for s in secrets]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
    return json.dumps(pod)


async def get(cluster: Cluster, *what: str) -> dict:
    _, out = await cluster.kubectl("get", *what, "-o", "json")
    return json.loads(out)


def tag_status(node_image: dict) -> dict:
    statuses = (node_image.get("status") or {}).get("imageStatuses") or {}
    tags = (statuses.get(REPOSITORY) or {}).get("tags") or []
    return next((t for t in tags if t.get("tag") == "latest"), {})


def waiting(pod: dict) -> dict:
    statuses = pod["status"].get("containerStatuses") or [{}]
    return statuses[0].get("state", {}).get("waiting") or {}


async def copies_of(cluster: Cluster, source: str) -> list[str]:
    """Names of the Secrets in kruise-daemon-config copied from `source` (namespace/name)."""
    listed = await get(cluster, "secrets", "-n", DAEMON_NS)
    return [
        s["metadata"]["name"]
        for s in listed["items"]
        if (s["metadata"].get("annotations") or {}).get("imagepulljobs.kruise.io/source-key") == source
    ]


async def events_of(cluster: Cluster, name: str) -> str:
    _, out = await cluster.kubectl(
        "get",
        "events",
        "--field-selector",
        f"involvedObject.name={name}",
        "-o",
        "jsonpath={.items[*].message}",
    )
    return out


async def test_image_pull_job_with_pull_secrets(real_cluster: Cluster) -> None:
    cluster = real_cluster
    try:
        await cluster.kubectl(
            "create", "secret", "docker-registry", SECRET, f"--docker-server={REGISTRY}",
            "--docker-username=kruise", "--docker-password=sandbox-private",
        )  # fmt: skip
        # without the Secret: the registry refuses node-2's kruise-daemon
        await cluster.kubectl("apply", "-f", "-", stdin=pull_job("private-no-secret", "node-2", []))
        await cluster.kubectl(
            "wait", "imagepulljob/private-no-secret", "--for=jsonpath={.status.failed}=1", "--timeout=120s"
        )
        failed = await get(cluster, "imagepulljob", "private-no-secret")
        assert failed["status"]["failedNodes"] == ["node-2"]
        assert failed["status"]["succeeded"] == 0 and failed["status"].get("completionTime")
        node2 = await until(
            lambda: get(cluster, "nodeimage", "node-2"),
            lambda image: tag_status(image).get("phase") == "Failed",
            "node-2's NodeImage reports the failed pull",
        )
        assert UNAUTHORIZED in tag_status(node2)["message"], tag_status(node2)
        reported = await until(
            lambda: events_of(cluster, "private-no-secret"),
            lambda text: UNAUTHORIZED in text,
            "PullImageFailed event on the job",
        )
        assert IMAGE in reported

        # with it: node-1's kruise-daemon pulls with the credentials, and the image is in its containerd
        await cluster.kubectl("apply", "-f", "-", stdin=pull_job("private-with-secret", "node-1", [SECRET]))
        await cluster.kubectl(
            "wait",
            "imagepulljob/private-with-secret",
            "--for=jsonpath={.status.succeeded}=1",
            "--timeout=120s",
        )
        done = await get(cluster, "imagepulljob", "private-with-secret")
        assert done["status"]["failed"] == 0 and not done["status"].get("failedNodes")
        node1 = await get(cluster, "nodeimage", "node-1")
        assert tag_status(node1)["phase"] == "Succeeded", tag_status(node1)
        # as upstream: the daemon was pointed at kruise-manager's copy in kruise-daemon-config, not at
        # the Secret in default, and the copy is deleted once the job that referenced it completed
        (ref,) = node1["spec"]["images"][REPOSITORY]["pullSecrets"]
        assert ref["namespace"] == DAEMON_NS and ref["name"].startswith(f"{SECRET}-"), ref
        await until(
            lambda: copies_of(cluster, f"default/{SECRET}"),
            lambda names: names == [],
            "the completed job's pull secret copy is deleted",
        )
        assert tag_status(node1)["imageID"].startswith("sha256:"), tag_status(node1)
        await cluster.kubectl(
            "apply", "-f", "-", stdin=private_pod("private-present", "node-1", policy="Never", secrets=[])
        )
        await cluster.kubectl("wait", "pod/private-present", "--for=condition=Ready", "--timeout=120s")
        assert "already present on machine" in await events_of(cluster, "private-present")
        _, out = await cluster.kubectl("logs", "private-present")
        assert out == "private-present runs the private image\n", out
    finally:
        for what in (
            ("pod", "private-present"),
            ("imagepulljob", "private-no-secret", "private-with-secret"),
            ("secret", SECRET),
        ):
            await cluster.kubectl("delete", *what, "--ignore-not-found", "--wait=true", "--timeout=120s")


async def test_pod_image_pull_secrets_reach_the_runtime(real_cluster: Cluster) -> None:
    cluster = real_cluster
    try:
        await cluster.kubectl(
            "create", "secret", "docker-registry", SECRET, f"--docker-server={REGISTRY}",
            "--docker-username=kruise", "--docker-password=sandbox-private",
        )  # fmt: skip
        for name, secrets in (("private-with-secret", [SECRET]), ("private-no-secret", [])):
            pod = private_pod(name, "node-2", policy="Always", secrets=secrets)
            await cluster.kubectl("apply", "-f", "-", stdin=pod)
        await cluster.kubectl("wait", "pod/private-with-secret", "--for=condition=Ready", "--timeout=120s")
        _, out = await cluster.kubectl("logs", "private-with-secret")
        assert out == "private-with-secret runs the private image\n", out
        assert "Successfully pulled image" in await events_of(cluster, "private-with-secret")

        refused = await until(
            lambda: get(cluster, "pod", "private-no-secret"),
            lambda pod: waiting(pod).get("reason") in ("ErrImagePull", "ImagePullBackOff"),
            "private-no-secret cannot pull",
        )
        assert UNAUTHORIZED in waiting(refused).get("message", ""), waiting(refused)
        assert refused["status"]["phase"] == "Pending"
    finally:
        await cluster.kubectl(
            "delete", "pod", "private-with-secret", "private-no-secret", "--ignore-not-found", "--wait=true",
            "--timeout=120s",
        )  # fmt: skip
        await cluster.kubectl("delete", "secret", SECRET, "--ignore-not-found")
