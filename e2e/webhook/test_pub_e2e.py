"""PodUnavailableBudget end to end: kruise-manager keeps the budget, kruise-webhook enforces it on
evictions and deletions the apiserver sends it — driven by real kubectl."""

from __future__ import annotations

import asyncio
import json

from harness import Cluster

NS = "default"
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "pub-web", "namespace": NS},
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "pub-web"}},
        "template": {
            "metadata": {"labels": {"app": "pub-web"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:alpine",
                        # an evicted pod's replacement stays unready for a while (120 cluster seconds,
                        # 6 s at speed 20): without it the sandbox readies the replacement before the
                        # second eviction arrives, and that eviction is then rightly allowed
                        "readinessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 120},
                    }
                ]
            },
        },
    },
}
PUB = {
    "apiVersion": "policy.kruise.io/v1alpha1",
    "kind": "PodUnavailableBudget",
    "metadata": {"name": "pub-web", "namespace": NS},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "pub-web"},
        "maxUnavailable": 1,
    },
}


async def pods(cluster: Cluster) -> list[dict]:
    _, out = await cluster.kubectl("get", "pods", "-n", NS, "-l", "app=pub-web", "-o", "json")
    return [p for p in json.loads(out)["items"] if not p["metadata"].get("deletionTimestamp")]


async def evict(cluster: Cluster, pod: str) -> tuple[int, str]:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": NS}}
    return await cluster.kubectl(
        "create", "--raw", f"/api/v1/namespaces/{NS}/pods/{pod}/eviction", "-f", "-",
        stdin=json.dumps(body), check=False,
    )  # fmt: skip


async def test_evictions_beyond_the_budget_are_refused(kruise_sandbox: Cluster):
    cluster = kruise_sandbox
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(DEPLOYMENT))
    await cluster.kubectl("rollout", "status", "deployment/pub-web", "-n", NS, "--timeout=90s")
    await cluster.kubectl("apply", "-f", "-", stdin=json.dumps(PUB))
    await cluster.kubectl(
        "wait", "podunavailablebudgets.policy.kruise.io/pub-web", "-n", NS,
        "--for=jsonpath={.status.unavailableAllowed}=1", "--timeout=60s",
    )  # fmt: skip
    _, out = await cluster.kubectl("get", "pub", "pub-web", "-n", NS)
    assert "pub-web" in out

    # every pod carries the related-pub annotation before the webhook can find its budget
    async def annotated() -> bool:
        return all(
            p["metadata"].get("annotations", {}).get("kruise.io/related-pub") for p in await pods(cluster)
        )

    async with asyncio.timeout(60):
        while not await annotated():  # noqa: ASYNC110 - kubectl polls
            await asyncio.sleep(0.2)
    first, second = sorted(p["metadata"]["name"] for p in await pods(cluster))[:2]

    code, out = await evict(cluster, first)
    assert code == 0, out
    code, out = await evict(cluster, second)
    assert code != 0
    assert 'admission webhook "vpodeviction.kb.io" denied the request' in out
    assert (
        'podunavailablebudget.policy.kruise.io "pub-web" is forbidden: pub unavailable allowed is negative'
        in out
    )
    code, out = await cluster.kubectl("delete", "pod", second, "-n", NS, "--wait=false", check=False)
    assert code != 0 and 'admission webhook "vpod.kb.io" denied the request' in out

    # once the evicted pod is replaced and Ready, the budget has room again
    await cluster.kubectl(
        "wait", "podunavailablebudgets.policy.kruise.io/pub-web", "-n", NS,
        "--for=jsonpath={.status.unavailableAllowed}=1", "--timeout=90s",
    )  # fmt: skip
    code, out = await evict(cluster, second)
    assert code == 0, out
    _, events = await cluster.kubectl(
        "get",
        "events",
        "-n",
        NS,
        "--field-selector",
        f"involvedObject.name={second},reason=PubPreventPodDeletion",
    )
    assert "openkruise pub prevents pod deletion" in events
