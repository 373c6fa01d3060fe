"""Pod CREATE stamps the related-pub annotation when a PodUnavailableBudget covers the new pod."""

from __future__ import annotations

from kruise.webhook.admission import AdmissionRequest
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
