"""Pod CREATE stamps the related-pub annotation when a PodUnavailableBudget covers the new pod."""

from __future__ import annotations

from kruise.kube.store import Store
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.caches import StorePubs
from kruise.webhook.handlers.pod import pod_create_handler

PUB = {
    "metadata": {"name": "web-pub", "namespace": "ns"},
    "spec": {"selector": {"matchLabels": {"app": "web"}}},
}


def review(labels):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }
    return AdmissionRequest.model_validate(
        {
            "uid": "1",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "ns",
            "operation": "CREATE",
            "object": pod,
        }
    )


async def test_covered_pod_gets_both_annotations():
    handler = pod_create_handler(pubs_in_namespace=lambda ns: [PUB] if ns == "ns" else [])
    decision = await handler(review({"app": "web"}))
    annotations = decision.mutated["metadata"]["annotations"]
    assert annotations == {"kruise.io/related-pub": "web-pub", "pub.kruise.io/related-pub": "web-pub"}


async def test_uncovered_pod_is_left_alone():
    handler = pod_create_handler(pubs_in_namespace=lambda ns: [PUB])
    decision = await handler(review({"app": "db"}))
    assert decision.allowed and decision.mutated is None


def replicaset(name, owners):
    return {"metadata": {"name": name, "namespace": "ns", "ownerReferences": owners}}


DEPLOYMENT_REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}


def test_store_resolves_a_deployment_replicaset_and_nothing_else():
    replicasets = Store()
    replicasets.upsert(replicaset("web-1", [DEPLOYMENT_REF]))
    replicasets.upsert(replicaset("bare", []))
    pubs = StorePubs(Store(), Store(), replicasets)
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "controller": True}
    assert pubs.workload_of({**rs, "name": "web-1"}, "ns") == DEPLOYMENT_REF
    assert pubs.workload_of({**rs, "name": "bare"}, "ns") == {**rs, "name": "bare"}
    assert pubs.workload_of({**rs, "name": "not-cached"}, "ns") is None
    clone = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}
    assert pubs.workload_of(clone, "ns") == clone


async def test_deployment_pod_is_stamped_at_creation():
    """kruise-webhook finds a Deployment-targeted PUB through the new pod's ReplicaSet, as upstream's
    pod mutating webhook does, so an eviction right after creation is already checked."""
    replicasets = Store()
    replicasets.upsert(replicaset("web-1", [DEPLOYMENT_REF]))
    budget = {
        "metadata": {"name": "web-pub", "namespace": "ns"},
        "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    }
    pubs = StorePubs(Store(), Store(), replicasets)
    handler = pod_create_handler(pubs_in_namespace=lambda ns: [budget], pub_workload_of=pubs.workload_of)
    req = review({"app": "other"})
    req.object["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "controller": True, "uid": "u"}
    ]
    decision = await handler(req)
    assert decision.mutated["metadata"]["annotations"]["kruise.io/related-pub"] == "web-pub"
