"""Conformance: kube-apiserver defaults the object a mutating webhook patched.

The webhook dispatcher decodes every patch result and runs the scheme's defaulter on it before the
next webhook, schema validation and PrepareForCreate. So a sidecar injected without
`fieldRef.apiVersion`, `terminationMessagePath` or `imagePullPolicy` is stored with them, exactly
as if the client had sent it, and later writes of the pod do not look like spec changes.
"""

from __future__ import annotations

import pytest
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

from kruise.sandbox.simulator.client import Client
from tests.kit.webhook_server import patch_response

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
PODS = "/api/v1/namespaces/default/pods"

SIDECAR = {
    "name": "sidecar",
    "image": "busybox:1.36",
    "command": ["sleep", "infinity"],
    "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
    "resources": {"requests": {"cpu": "10m"}},
}


def mutating(name, path, certificates):
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": f"{name}.kruise.io",
                "clientConfig": {
                    "service": {"namespace": "kruise-system", "name": "hooks", "path": path},
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
    }


def app_pod(name):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
    }


@pytest.fixture
async def client(sandbox):
    c = Client(sandbox.kubeconfig)
    yield c
    await c.close()


@pytest.fixture
async def injecting(server, certificates, client):
    """A webhook that injects SIDECAR in front of the app containers, as SidecarSet does."""
    server.routes["/inject"] = lambda req: patch_response(
        [{"op": "add", "path": "/spec/containers/0", "value": SIDECAR}]
    )
    await client.create(MUTATING, mutating("a-inject", "/inject", certificates))


async def test_injected_container_gets_the_defaults_a_sent_one_gets(injecting, client):
    stored = await client.get(f"{PODS}/{(await client.create(PODS, app_pod('web')))['metadata']['name']}")
    sidecar, main = stored["spec"]["containers"]
    assert (sidecar["name"], main["name"]) == ("sidecar", "main")
    assert sidecar["env"][0]["valueFrom"]["fieldRef"] == {"apiVersion": "v1", "fieldPath": "metadata.name"}
    assert sidecar["terminationMessagePath"] == "/dev/termination-log"
    assert sidecar["terminationMessagePolicy"] == "File"
    assert sidecar["imagePullPolicy"] == "IfNotPresent"
    # Every defaulted field of the sent container is there on the injected one too.
    assert set(main) - {"name", "image"} <= set(sidecar)
    # The webhook changed the pod, so the in-tree plugins ran again: the ServiceAccount plugin
    # mounted the pod's existing token volume into the injected container as well.
    assert sidecar["volumeMounts"] == main["volumeMounts"]
    [volume] = stored["spec"]["volumes"]
    assert volume["name"] == main["volumeMounts"][0]["name"] and volume["name"].startswith("kube-api-access-")


async def test_qos_class_is_computed_from_the_mutated_spec(injecting, client):
    """PrepareForCreate runs after mutating admission: the sidecar's request makes the pod Burstable."""
    stored = await client.create(PODS, app_pod("web"))
    assert stored["status"]["qosClass"] == "Burstable"


async def test_a_later_webhook_sees_the_defaulted_patch_result(injecting, server, certificates, client):
    server.routes["/observe"] = lambda req: {"allowed": True}
    await client.create(MUTATING, mutating("b-observe", "/observe", certificates))
    await client.create(PODS, app_pod("web"))
    (review,) = server.received["/observe"]
    sidecar = review["request"]["object"]["spec"]["containers"][0]
    assert sidecar["env"][0]["valueFrom"]["fieldRef"]["apiVersion"] == "v1"
    assert sidecar["terminationMessagePolicy"] == "File"


async def test_writes_after_injection_are_not_spec_changes(injecting, sandbox, client):
    """The symptom that hid the gap: every later update of an injected pod was refused as a spec
    change, because the update's own defaulting filled what the stored pod lacked."""
    await client.create(PODS, app_pod("web"))
    cfg = k8s.Configuration()
    await k8s_config.load_kube_config(config_file=str(sandbox.kubeconfig), client_configuration=cfg)
    async with k8s.ApiClient(cfg) as api:
        core = k8s.CoreV1Api(api)
        await core.patch_namespaced_pod("web", "default", {"metadata": {"labels": {"tier": "front"}}})
        pod = await core.read_namespaced_pod("web", "default")
        pod.metadata.annotations = {"touched": "yes"}
        replaced = await core.replace_namespaced_pod("web", "default", pod)
    assert replaced.metadata.labels["tier"] == "front"
    assert replaced.metadata.annotations == {"touched": "yes"}
    assert [c.name for c in replaced.spec.containers] == ["sidecar", "main"]


async def test_priority_follows_the_class_a_webhook_set(server, certificates, client):
    """The Priority plugin runs again after a webhook changed the pod: a webhook that sets
    `priorityClassName` and drops the `priority` the first pass resolved (OpenKruise's WorkloadSpread
    patch does) gets the new class's value, not 0 and not nothing."""
    await client.create(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 100,
        },
    )
    server.routes["/classify"] = lambda req: patch_response(
        [
            {"op": "add", "path": "/spec/priorityClassName", "value": "high"},
            {"op": "remove", "path": "/spec/priority"},
        ]
    )
    await client.create(MUTATING, mutating("a-classify", "/classify", certificates))
    stored = await client.create(PODS, app_pod("web"))
    assert (stored["spec"]["priorityClassName"], stored["spec"]["priority"]) == ("high", 100)
    assert stored["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
