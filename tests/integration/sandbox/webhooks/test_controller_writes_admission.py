"""The garbage collector's and the namespace controller's writes pass admission, as on a real cluster.

kube-controller-manager's controllers are API clients: a real HTTPS webhook sees their deletes and
patches with their service accounts in userInfo, and can refuse them (the write is then retried; a
namespace stays Terminating while its content cannot be deleted).
"""

from __future__ import annotations

import pytest

from kruise.sandbox.simulator.client import ApiError, Client
from tests.kit.pods import pod
from tests.kit.polling import until

VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
GC_USER = "system:serviceaccount:kube-system:generic-garbage-collector"
NS_USER = "system:serviceaccount:kube-system:namespace-controller"


def hook(certificates, name, path, resources, ops):
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
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
                        "operations": list(ops),
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": list(resources),
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }


def configmap(name, namespace="default"):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}


def child_pod(name, namespace="default", owner=None):
    """An nginx pod, owned (not controlled) by the ConfigMap `owner` if given."""
    ref = None
    if owner is not None:
        meta = owner["metadata"]
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": meta["name"], "uid": meta["uid"]}
    return pod(
        name, namespace=namespace, owner=ref, containers=[{"name": "main", "image": "nginx:1.25"}], typed=True
    )


@pytest.fixture
async def client(sandbox):
    c = Client(sandbox.kubeconfig)
    yield c
    await c.close()


async def gone(client, path):
    try:
        await client.get(path)
    except ApiError as exc:
        return exc.not_found
    return False


def requests_by(server, path, username):
    return [
        r["request"]
        for r in server.received.get(path, [])
        if r["request"]["userInfo"]["username"] == username
    ]


async def test_gc_pod_delete_passes_admission_and_a_refusal_holds_it(sandbox, server, certificates, client):
    refusing = {"on": True}
    server.routes["/pods"] = lambda req: (
        {"allowed": False, "status": {"message": "pod is protected"}}
        if refusing["on"] and req["userInfo"]["username"] == GC_USER
        else {"allowed": True}
    )
    await client.create(VALIDATING, hook(certificates, "pods", "/pods", ["pods"], ["DELETE"]))
    owner = await client.create("/api/v1/namespaces/default/configmaps", configmap("owner"))
    await client.create("/api/v1/namespaces/default/pods", child_pod("child", owner=owner))

    await client.delete("/api/v1/namespaces/default/configmaps/owner")
    await until(lambda: len(requests_by(server, "/pods", GC_USER)) >= 2, message="GC delete retried")
    await client.get("/api/v1/namespaces/default/pods/child")  # refused: still there

    refusing["on"] = False
    await until(lambda: gone(client, "/api/v1/namespaces/default/pods/child"))
    request = requests_by(server, "/pods", GC_USER)[-1]
    assert (request["operation"], request["name"], request["namespace"]) == ("DELETE", "child", "default")
    assert request["userInfo"]["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:kube-system",
        "system:authenticated",
    ]
    assert request["options"]["propagationPolicy"] == "Background"
    assert request["options"]["preconditions"]["uid"] == request["oldObject"]["metadata"]["uid"]


async def test_orphaning_patch_is_an_update_by_the_gc(sandbox, server, certificates, client):
    server.routes["/updates"] = lambda req: {"allowed": True}
    await client.create(VALIDATING, hook(certificates, "updates", "/updates", ["pods"], ["UPDATE"]))
    owner = await client.create("/api/v1/namespaces/default/configmaps", configmap("owner"))
    await client.create("/api/v1/namespaces/default/pods", child_pod("child", owner=owner))

    await client.request(
        "DELETE", "/api/v1/namespaces/default/configmaps/owner", params={"propagationPolicy": "Orphan"}
    )
    await until(lambda: gone(client, "/api/v1/namespaces/default/configmaps/owner"))
    child = await client.get("/api/v1/namespaces/default/pods/child")
    assert "ownerReferences" not in child["metadata"]
    (request,) = requests_by(server, "/updates", GC_USER)
    assert request["operation"] == "UPDATE"
    assert request["oldObject"]["metadata"]["ownerReferences"][0]["uid"] == owner["metadata"]["uid"]
    assert "ownerReferences" not in request["object"]["metadata"]


async def test_namespace_stays_terminating_while_a_webhook_refuses_its_content(
    sandbox, server, certificates, client
):
    refusing = {"on": True}
    server.routes["/content"] = lambda req: (
        {"allowed": False, "status": {"message": "keep the pod"}}
        if refusing["on"] and req["kind"]["kind"] == "Pod"
        else {"allowed": True}
    )
    server.routes["/finalize"] = lambda req: {"allowed": True}
    await client.create(
        VALIDATING, hook(certificates, "content", "/content", ["pods", "configmaps"], ["DELETE"])
    )
    await client.create(
        VALIDATING, hook(certificates, "finalize", "/finalize", ["namespaces/finalize"], ["UPDATE"])
    )
    await client.create(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}
    )
    await client.create("/api/v1/namespaces/doomed/configmaps", configmap("settings", "doomed"))
    await client.create("/api/v1/namespaces/doomed/pods", child_pod("web", "doomed"))

    await client.delete("/api/v1/namespaces/doomed")
    await until(
        lambda: len([r for r in requests_by(server, "/content", NS_USER) if r["name"] == "web"]) >= 2,
        message="namespace controller retried the refused pod delete",
    )
    namespace = await client.get("/api/v1/namespaces/doomed")
    assert namespace["status"]["phase"] == "Terminating"
    await client.get("/api/v1/namespaces/doomed/pods/web")
    assert await gone(client, "/api/v1/namespaces/doomed/configmaps/settings"), "the others are deleted"
    assert "/finalize" not in server.received

    refusing["on"] = False
    await until(lambda: gone(client, "/api/v1/namespaces/doomed"))
    deleted = {(r["kind"]["kind"], r["name"]) for r in requests_by(server, "/content", NS_USER)}
    assert {("Pod", "web"), ("ConfigMap", "settings"), ("ConfigMap", "kube-root-ca.crt")} <= deleted
    (finalize,) = requests_by(server, "/finalize", NS_USER)
    assert (finalize["operation"], finalize["subResource"], finalize["name"]) == (
        "UPDATE",
        "finalize",
        "doomed",
    )
    assert finalize["oldObject"]["spec"]["finalizers"] == ["kubernetes"]
    assert "finalizers" not in finalize["object"]["spec"]
