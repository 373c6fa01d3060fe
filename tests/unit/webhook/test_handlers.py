"""Deletion protection of built-ins and namespaces, and the pod readiness gate."""

from __future__ import annotations

import pytest
from webhook_testkit import apply_patch, post, review

FORBIDDEN = "forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection="
LABEL = "policy.kruise.io/delete-protection"


def _obj(name: str, label: str | None, **extra: object) -> dict:
    meta: dict = {"name": name, "labels": {LABEL: label} if label else {}}
    return {"metadata": meta, **extra}


@pytest.mark.parametrize(
    ("path", "group", "kind", "resource"),
    [
        ("/validate-apps-deployment", "apps", "Deployment", "deployments"),
        ("/validate-apps-replicaset", "apps", "ReplicaSet", "replicasets"),
        ("/validate-apps-statefulset", "apps", "StatefulSet", "statefulsets"),
    ],
)
@pytest.mark.parametrize(
    ("label", "replicas", "expected"),
    [
        ("Always", 0, FORBIDDEN + "Always"),
        ("Cascading", 2, FORBIDDEN + "Cascading and replicas 2>0"),
        ("Cascading", 0, None),
        ("Cascading", None, None),
        ("Other", 3, None),
        (None, 3, None),
    ],
)
async def test_builtin_workloads(client, path, group, kind, resource, label, replicas, expected):
    spec = {} if replicas is None else {"replicas": replicas}
    old = _obj("w", label, spec=spec)
    body = review("DELETE", group=group, version="v1", kind=kind, resource=resource, old=old)
    resp = await post(client, path, body)
    assert resp["allowed"] is (expected is None)
    if expected:
        assert resp["status"]["message"] == expected and resp["status"]["code"] == 403


async def test_terminating_objects_are_never_blocked(client):
    old = _obj("w", "Always", spec={"replicas": 1})
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    body = review("DELETE", group="apps", version="v1", kind="Deployment", resource="deployments", old=old)
    assert (await post(client, "/validate-apps-deployment", body))["allowed"] is True


@pytest.mark.parametrize(
    ("path", "resource"), [("/validate-service", "services"), ("/validate-ingress", "ingresses")]
)
async def test_service_and_ingress_honour_always_only(client, path, resource):
    for label, allowed in (("Always", False), ("Cascading", True)):
        body = review("DELETE", group="", version="v1", kind="X", resource=resource, old=_obj("s", label))
        assert (await post(client, path, body))["allowed"] is allowed


def _ns_review(label: str | None) -> dict:
    return review(
        "DELETE", group="", version="v1", kind="Namespace", resource="namespaces", old=_obj("team", label)
    )


async def test_namespace_protection(client, contents):
    resp = await post(client, "/validate-namespace", _ns_review("Always"))
    assert resp["status"]["message"] == FORBIDDEN + "Always"
    assert (await post(client, "/validate-namespace", _ns_review("Cascading")))["allowed"] is True
    contents.pvcs["team"] = 2
    resp = await post(client, "/validate-namespace", _ns_review("Cascading"))
    assert resp["status"]["message"] == FORBIDDEN + 'Cascading and "Bound" status pvc 2>0'
    contents.pods["team"] = 3
    resp = await post(client, "/validate-namespace", _ns_review("Cascading"))
    assert resp["status"]["message"] == FORBIDDEN + "Cascading and active pods 3>0"
    assert (await post(client, "/validate-namespace", _ns_review(None)))["allowed"] is True


async def test_crd_protection(client):
    def crd(label: str) -> dict:
        group, kind, res = "apiextensions.k8s.io", "CustomResourceDefinition", "customresourcedefinitions"
        return review("DELETE", group=group, version="v1", kind=kind, resource=res, old=_obj("a.b", label))

    resp = await post(client, "/validate-customresourcedefinition", crd("Always"))
    assert resp["status"]["message"] == FORBIDDEN + "Always"
    resp = await post(client, "/validate-customresourcedefinition", crd("Cascading"))
    assert resp["status"]["message"] == "feature-gate DeletionProtectionForCRDCascadingGate is not enabled"


def test_store_namespace_contents_counts_active_pods_and_bound_pvcs():
    from kruise.kube.store import STANDARD_INDEXERS, Store
    from kruise.webhook.caches import StoreNamespaceContents

    pods, pvcs = Store(STANDARD_INDEXERS), Store(STANDARD_INDEXERS)
    for i, (phase, deleting) in enumerate([("Running", False), ("Pending", False), ("Succeeded", False),
                                           ("Failed", False), ("Running", True)]):  # fmt: skip
        meta = {"name": f"p{i}", "namespace": "a", **({"deletionTimestamp": "x"} if deleting else {})}
        pods.upsert({"metadata": meta, "status": {"phase": phase}})
    pods.upsert({"metadata": {"name": "q", "namespace": "b"}, "status": {"phase": "Running"}})
    for i, phase in enumerate(["Bound", "Pending", "Bound"]):
        pvcs.upsert({"metadata": {"name": f"c{i}", "namespace": "a"}, "status": {"phase": phase}})
    contents = StoreNamespaceContents(pods, pvcs)
    assert (contents.active_pods("a"), contents.bound_pvcs("a"), contents.active_pods("c")) == (2, 2, 0)


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "default"},
    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
}


def _owned(api_version: str, controller: bool = True) -> dict:
    pod = {**POD, "metadata": {**POD["metadata"]}}
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": api_version, "kind": "CloneSet", "name": "cs", "uid": "u1", "controller": controller}
    ]
    return pod


@pytest.mark.parametrize(
    ("pod", "gated"),
    [(_owned("apps.kruise.io/v1alpha1"), True), (_owned("apps/v1"), False),
     (_owned("apps.kruise.io/v1alpha1", controller=False), False), (POD, False)],
)  # fmt: skip
async def test_pod_readiness_gate(client, pod, gated):
    body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=pod)
    resp = await post(client, "/mutate-pod", body)
    assert resp["allowed"] is True
    out = apply_patch(pod, resp)
    gates = out["spec"].get("readinessGates", [])
    assert gates == ([{"conditionType": "KruisePodReady"}] if gated else [])
    again = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=out)
    assert "patch" not in await post(client, "/mutate-pod", again)  # reinvocation adds nothing


async def test_dry_run_pod_create_is_answered_the_same(client):
    pod = _owned("apps.kruise.io/v1alpha1")
    body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj=pod, dry_run=True)
    resp = await post(client, "/mutate-pod", body)
    assert apply_patch(pod, resp)["spec"]["readinessGates"] == [{"conditionType": "KruisePodReady"}]
