"""Webhook admission through the emulator's request pipeline, seen by real clients."""

from __future__ import annotations

import asyncio
import json

import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from kruise.sandbox.up import find_kubectl
from tests.kit.pods import pod
from tests.kit.webhook_server import patch_response

VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
PODS = "/api/v1/namespaces/default/pods"


def configuration(kind, name, hook_name, certificates, path, resources, ops=("CREATE",), **extra):
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": hook_name,
                "clientConfig": {
                    "service": {"namespace": "kruise-system", "name": "hooks", "path": path},
                    "caBundle": certificates.ca_bundle,
                },
                "rules": [
                    {
                        "operations": list(ops),
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": list(resources),
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                **extra,
            }
        ],
    }


def web_pod(name):
    """A web pod to create through a namespaced path."""
    return pod(
        name,
        namespace=None,
        labels={"app": "web"},
        containers=[{"name": "main", "image": "nginx:1.25"}],
        typed=True,
    )


@pytest.fixture
async def client(sandbox):
    c = Client(sandbox.kubeconfig)
    yield c
    await c.close()


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


async def test_created_pod_is_mutated_with_warning(sandbox, server, certificates, client):
    server.routes["/inject"] = lambda req: patch_response(
        [{"op": "add", "path": "/metadata/labels/injected", "value": "true"}], warnings=["sidecar injected"]
    )
    await client.create(
        MUTATING,
        configuration(
            "MutatingWebhookConfiguration", "inject", "inject.kruise.io", certificates, "/inject", ["pods"]
        ),
    )
    code, out = await kubectl(sandbox, "run", "web", "--image=nginx:1.25", "-n", "default")
    assert code == 0, out
    assert "Warning: sidecar injected" in out
    stored = await client.get(f"{PODS}/web")
    assert stored["metadata"]["labels"]["injected"] == "true"
    (review,) = server.received["/inject"]
    assert review["request"]["object"]["spec"]["restartPolicy"] == "Always", "defaults precede mutation"


async def test_eviction_is_refused_with_the_apiserver_message(sandbox, server, certificates, client):
    server.routes["/pub"] = lambda req: {
        "allowed": False,
        "status": {"code": 429, "reason": "TooManyRequests", "message": "pub web has no unavailable budget"},
    }
    await client.create(PODS, web_pod("web"))
    await client.create(
        VALIDATING,
        configuration(
            "ValidatingWebhookConfiguration", "pub", "pub.kruise.io", certificates, "/pub", ["pods/eviction"]
        ),
    )
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "web", "namespace": "default"},
    }
    with pytest.raises(ApiError) as caught:
        await client.create(f"{PODS}/web/eviction", eviction)
    assert caught.value.status == 429
    assert (
        caught.value.message
        == 'admission webhook "pub.kruise.io" denied the request: pub web has no unavailable budget'
    )
    (review,) = server.received["/pub"]
    request = review["request"]
    assert (request["subResource"], request["kind"]["kind"], request["name"]) == (
        "eviction",
        "Eviction",
        "web",
    )
    await client.get(f"{PODS}/web")  # still there


async def test_denial_reaches_kubectl(sandbox, server, certificates, client):
    server.routes["/deny"] = lambda req: {"allowed": False, "status": {"message": "configmaps are frozen"}}
    await client.create(
        VALIDATING,
        configuration(
            "ValidatingWebhookConfiguration", "deny", "deny.kruise.io", certificates, "/deny", ["configmaps"]
        ),
    )
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"},
        "data": {"a": "b"},
    }
    code, out = await kubectl(sandbox, "apply", "-f", "-", stdin=json.dumps(cm))
    assert code != 0
    assert 'admission webhook "deny.kruise.io" denied the request: configmaps are frozen' in out


async def test_unreachable_webhook_fails_closed_or_is_ignored(sandbox, server, certificates, client):
    broken = configuration(
        "ValidatingWebhookConfiguration", "gone", "gone.kruise.io", certificates, "/", ["configmaps"]
    )
    broken["webhooks"][0]["clientConfig"]["service"]["name"] = "absent"
    await client.create(VALIDATING, broken)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}}
    with pytest.raises(ApiError) as caught:
        await client.create("/api/v1/namespaces/default/configmaps", cm)
    assert caught.value.status == 500
    assert caught.value.message.startswith('Internal error occurred: failed calling webhook "gone.kruise.io"')
    broken["webhooks"][0]["failurePolicy"] = "Ignore"
    current = await client.get(f"{VALIDATING}/gone")
    broken["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    await client.replace(f"{VALIDATING}/gone", broken)
    await client.create("/api/v1/namespaces/default/configmaps", cm)


async def test_dry_run_reaches_the_webhook_and_persists_nothing(sandbox, server, certificates, client):
    server.routes["/seen"] = lambda req: {"allowed": True}
    await client.create(
        VALIDATING,
        configuration(
            "ValidatingWebhookConfiguration", "seen", "seen.kruise.io", certificates, "/seen", ["pods"]
        ),
    )
    await client.request("POST", PODS, body=web_pod("dry"), params={"dryRun": "All"})
    (review,) = server.received["/seen"]
    assert review["request"]["dryRun"] is True
    with pytest.raises(ApiError) as caught:
        await client.get(f"{PODS}/dry")
    assert caught.value.not_found
