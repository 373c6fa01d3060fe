"""Advanced StatefulSet under a PodUnavailableBudget, as upstream: the controller asks no budget
itself (upstream's rolling update carries ``todo validate in-place for pub``); kruise-webhook's
``/validate-pod`` guards the controller's pod writes like anyone else's. A recreate rollout's pod
DELETE is refused (PodUnavailableBudgetDeleteGate), so the rollout holds; an in-place rollout is not
held (PodUnavailableBudgetUpdateGate only weighs ready pods, and the in-place writer turns the pod
unready before its UPDATE, as upstream).
"""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.errors import Forbidden
from kruise.kube.resources import ADVANCED_STATEFULSETS, PODS, PODUNAVAILABLEBUDGETS
from kruise.manager.controllers import podunavailablebudget, statefulset
from tests.integration.manager.test_statefulset_controller import (
    NS,
    events_of,
    manifest,
    new_image,
    pods_of,
    settled,
    update_spec,
)

RELATED_PUB = "kruise.io/related-pub"


@pytest.fixture
def controller_setups():
    return [statefulset.SETUP, podunavailablebudget.SETUP]


@pytest.fixture
def webhook_feature_gates() -> str:
    return "PodUnavailableBudgetUpdateGate=true,PodUnavailableBudgetDeleteGate=true"


@pytest.fixture
def feature_gates():
    return FeatureGates({"PodUnavailableBudgetUpdateGate": True}, env={})


async def guarded_set(cluster, **spec) -> None:
    """A PUB allowing no unavailable pod, then a two-pod set whose pods the webhook ties to it."""
    pub = {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "web", "namespace": NS},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 0},
    }
    await cluster.client.create(PODUNAVAILABLEBUDGETS, pub)
    await cluster.client.create(
        ADVANCED_STATEFULSETS, manifest(replicas=2, podManagementPolicy="Parallel", **spec)
    )
    await settled(cluster, "web", 2)
    pods = await pods_of(cluster, "web")
    assert all(p["metadata"]["annotations"].get(RELATED_PUB) == "web" for p in pods.values())
    await cluster.until(
        lambda: cluster.client.get(PODUNAVAILABLEBUDGETS, "web", NS),
        lambda p: (
            (p.get("status") or {}).get("desiredAvailable") == 2
            and (p.get("status") or {}).get("currentAvailable") == 2
        ),
    )


async def test_budget_of_zero_holds_a_recreate_rollout(kruise_cluster, webhook):
    await guarded_set(kruise_cluster)
    await update_spec(kruise_cluster, "web", new_image("nginx:1.26"))
    events = await kruise_cluster.until(
        lambda: events_of(kruise_cluster, "web"),
        lambda evs: any(e["reason"] == "FailedDelete" for e in evs),
    )
    failed = next(e for e in events if e["reason"] == "FailedDelete")
    assert failed["type"] == "Warning"
    assert failed["message"].startswith("delete Pod web-1 in StatefulSet web failed error: ")
    pods = await pods_of(kruise_cluster, "web")
    assert sorted(p["spec"]["containers"][0]["image"] for p in pods.values()) == ["nginx:alpine"] * 2
    sts = await kruise_cluster.client.get(ADVANCED_STATEFULSETS, "web", NS)
    assert (sts.get("status") or {}).get("updatedReplicas") == 0

    # the budget allows one: the rollout proceeds, one pod at a time
    pub = await kruise_cluster.client.get(PODUNAVAILABLEBUDGETS, "web", NS)
    pub["spec"]["maxUnavailable"] = 1
    await kruise_cluster.client.update(PODUNAVAILABLEBUDGETS, pub)
    await settled(kruise_cluster, "web", 2, timeout=90, updatedReplicas=2)


async def test_budget_of_zero_does_not_hold_an_in_place_rollout(kruise_cluster, webhook):
    """The gate is live (a bare image UPDATE of a ready pod is refused), yet the set's in-place
    rollout completes: upstream's ``updateCondition`` writes ``InPlaceUpdateReady=False`` and
    recomputes ``Ready`` on pods/status first, so the pod UPDATE that follows reaches the webhook
    with an unready old pod, which takes no slot of the budget."""
    await guarded_set(
        kruise_cluster, updateStrategy={"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}
    )
    pod = (await pods_of(kruise_cluster, "web"))["web-0"]
    pod["spec"]["containers"][0]["image"] = "nginx:1.25"
    with pytest.raises(Forbidden, match="pub unavailable allowed is negative"):
        await kruise_cluster.client.update(PODS, pod)

    await update_spec(kruise_cluster, "web", new_image("nginx:1.26"))
    await settled(kruise_cluster, "web", 2, updatedReplicas=2, updatedReadyReplicas=2)
    pods = await pods_of(kruise_cluster, "web")
    assert sorted(p["spec"]["containers"][0]["image"] for p in pods.values()) == ["nginx:1.26"] * 2
    reasons = [e["reason"] for e in await events_of(kruise_cluster, "web")]
    assert reasons.count("SuccessfulUpdatePodInPlace") == 2
    assert "FailedUpdatePodInPlace" not in reasons
    pub = await kruise_cluster.client.get(PODUNAVAILABLEBUDGETS, "web", NS)
    assert not (pub.get("status") or {}).get("unavailablePods")
