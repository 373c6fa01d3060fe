"""PodUnavailableBudget: the controller's status against the simulator, and the webhook's budget
keeper taking slots from it (the keeper is called directly here; e2e goes through the apiserver)."""

from __future__ import annotations

import pytest

from kruise.kube.resources import DEPLOYMENTS, PODS, PODUNAVAILABLEBUDGETS
from kruise.manager.controllers.podunavailablebudget import SETUP
from kruise.webhook.caches import StorePubs
from kruise.webhook.handlers.pub import BudgetKeeper

NS = "default"


@pytest.fixture
def controller_setups():
    return [SETUP]


def deployment(replicas: int) -> dict:
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }


def pub(**spec) -> dict:
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": NS},
        "spec": spec,
    }


async def status_of(cluster) -> dict:
    return (await cluster.client.get(PODUNAVAILABLEBUDGETS, "web-pub", NS)).get("status") or {}


@pytest.mark.parametrize(
    "spec",
    [
        {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxUnavailable": 1},
        {"selector": {"matchLabels": {"app": "web"}}, "minAvailable": "75%"},
    ],
    ids=["targetRef-maxUnavailable", "selector-minAvailable"],
)
async def test_status_and_budget(kruise_cluster, spec):
    client = kruise_cluster.client
    await client.create(DEPLOYMENTS, deployment(4))
    await client.create(PODUNAVAILABLEBUDGETS, pub(**spec))
    status = await kruise_cluster.until(
        lambda: status_of(kruise_cluster), lambda s: s.get("currentAvailable") == 4, timeout=30
    )
    assert status["totalReplicas"] == 4
    assert status["desiredAvailable"] == 3
    assert status["unavailableAllowed"] == 1
    pods = await kruise_cluster.until(
        lambda: client.list(PODS, NS, label_selector={"app": "web"}),
        lambda listing: all(
            p["metadata"].get("annotations", {}).get("kruise.io/related-pub") == "web-pub"
            for p in listing["items"]
        ),
    )
    first, second = pods["items"][:2]

    informers = kruise_cluster.context.informers
    keeper = BudgetKeeper(
        client,
        StorePubs(informers.informer(PODS).store, informers.informer(PODUNAVAILABLEBUDGETS).store),
        backoff=0.01,
    )
    assert (await keeper.admit(first, "EVICT", dry_run=True)).allowed
    assert (
        "disruptedPods" not in await status_of(kruise_cluster)
        or not (await status_of(kruise_cluster))["disruptedPods"]
    )
    assert (await keeper.admit(first, "EVICT", dry_run=False)).allowed
    recorded = await status_of(kruise_cluster)
    assert first["metadata"]["name"] in recorded["disruptedPods"]
    assert recorded["unavailableAllowed"] == 0
    refused = await keeper.admit(second, "DELETE", dry_run=False)
    assert not refused.allowed and refused.code == 403
    assert refused.message == (
        'podunavailablebudget.policy.kruise.io "web-pub" is forbidden: pub unavailable allowed is negative'
    )
    # the recorded pod itself may go ahead again (its deletion is already counted)
    assert (await keeper.admit(first, "DELETE", dry_run=False)).allowed


async def test_deleting_the_recorded_pod_clears_its_record(kruise_cluster):
    client = kruise_cluster.client
    await client.create(DEPLOYMENTS, deployment(3))
    await client.create(
        PODUNAVAILABLEBUDGETS,
        pub(targetRef={"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, maxUnavailable=1),
    )
    await kruise_cluster.until(lambda: status_of(kruise_cluster), lambda s: s.get("unavailableAllowed") == 1)
    listing = await kruise_cluster.until(
        lambda: client.list(PODS, NS, label_selector={"app": "web"}),
        lambda li: (
            li["items"]
            and all("kruise.io/related-pub" in p["metadata"].get("annotations", {}) for p in li["items"])
        ),
    )
    victim = listing["items"][0]
    informers = kruise_cluster.context.informers
    keeper = BudgetKeeper(
        client, StorePubs(informers.informer(PODS).store, informers.informer(PODUNAVAILABLEBUDGETS).store)
    )
    assert (await keeper.admit(victim, "DELETE", dry_run=False)).allowed
    await client.delete(PODS, victim["metadata"]["name"], NS)
    # the pod is gone and replaced: the record disappears and the budget comes back
    status = await kruise_cluster.until(
        lambda: status_of(kruise_cluster),
        lambda s: (
            not s.get("disruptedPods") and s.get("unavailableAllowed") == 1 and s.get("currentAvailable") == 3
        ),
    )
    assert status["desiredAvailable"] == 2
