"""Conformance: `kubectl apply` of a pod that received an injected sidecar.

kubectl's three-way strategic merge patch names only the manifest's containers in
`$setElementOrder/containers`. kube-apiserver keeps a server-only item (the injected sidecar) where
it was among them, so re-applying the manifest — or changing its image or labels, as SidecarSet's
canary example does — succeeds and leaves the sidecar in place.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

from kruise.sandbox.simulator.client import Client
from kruise.sandbox.up import find_kubectl
from tests.kit.webhook_server import patch_response

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
PODS = "/api/v1/namespaces/default/pods"
SIDECAR = {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "infinity"]}


def manifest(image="nginx:1.25", **labels):
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", **labels}},
            "spec": {"containers": [{"name": "main", "image": image}]},
        }
    )


async def kubectl(sandbox, *args, stdin=None):
    process = await asyncio.create_subprocess_exec(
        find_kubectl(),
        "--kubeconfig",
        str(sandbox.kubeconfig),
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else None,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await process.communicate(stdin.encode() if stdin is not None else None)
    return process.returncode, out.decode()


@pytest.fixture
async def client(sandbox, server, certificates):
    """A client, with a webhook injecting SIDECAR in front of every created pod's containers."""
    c = Client(sandbox.kubeconfig)
    server.routes["/inject"] = lambda req: patch_response(
        [{"op": "add", "path": "/spec/containers/0", "value": SIDECAR}]
    )
    await c.create(
        MUTATING,
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "inject"},
            "webhooks": [
                {
                    "name": "inject.kruise.io",
                    "clientConfig": {
                        "service": {"namespace": "kruise-system", "name": "hooks", "path": "/inject"},
                        "caBundle": certificates.ca_bundle,
                    },
                    "rules": [
                        {
                            "operations": ["CREATE"],
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "resources": ["pods"],
                        }
                    ],
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                }
            ],
        },
    )
    yield c
    await c.close()


def names(pod):
    return [c["name"] for c in pod["spec"]["containers"]]


async def test_kubectl_apply_keeps_the_injected_sidecar_in_place(sandbox, client):
    code, out = await kubectl(sandbox, "apply", "-f", "-", stdin=manifest())
    assert code == 0, out
    created = await client.get(f"{PODS}/web")
    assert names(created) == ["sidecar", "main"]

    # The same manifest again: kubectl sends only `$setElementOrder/containers: [main]` (the live
    # list has the sidecar in front), which changes nothing, so not even the resourceVersion.
    code, out = await kubectl(sandbox, "apply", "-f", "-", stdin=manifest())
    assert code == 0, out
    again = await client.get(f"{PODS}/web")
    assert again["spec"] == created["spec"]
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]

    code, out = await kubectl(sandbox, "apply", "-f", "-", stdin=manifest("nginx:1.26", canary="true"))
    assert code == 0, out
    assert "pod/web configured" in out
    pod = await client.get(f"{PODS}/web")
    assert names(pod) == ["sidecar", "main"]
    assert [c["image"] for c in pod["spec"]["containers"]] == ["busybox:1.36", "nginx:1.26"]
    assert pod["metadata"]["labels"]["canary"] == "true"


async def test_strategic_patch_with_element_order_through_kubernetes_asyncio(sandbox, client):
    await client.create(PODS, json.loads(manifest()))
    cfg = k8s.Configuration()
    await k8s_config.load_kube_config(config_file=str(sandbox.kubeconfig), client_configuration=cfg)
    async with k8s.ApiClient(cfg) as api:
        patched = await k8s.CoreV1Api(api).patch_namespaced_pod(
            "web",
            "default",
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "main"}],
                    "containers": [{"name": "main", "image": "nginx:1.27"}],
                }
            },
            _content_type="application/strategic-merge-patch+json",
        )
    assert [c.name for c in patched.spec.containers] == ["sidecar", "main"]
    assert patched.spec.containers[1].image == "nginx:1.27"
