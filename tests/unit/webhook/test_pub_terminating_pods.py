"""PodUnavailableBudget admission lets pods that are already terminating go (issue 11 bug 9).

Upstream counts a pod as protected only while it is running, Ready and not being deleted
(`IsRunningAndReady`), so a DELETE of a terminating pod never takes a slot. The namespace controller
(and the kubelet's final grace-0 delete) re-deletes terminating pods whose disruption record the
PUB controller has already dropped; with an exhausted budget those deletes were refused, so a
namespace holding a PUB never finished terminating.
"""

from __future__ import annotations

from kruise.kube.resources import PODUNAVAILABLEBUDGETS
from kruise.webhook.handlers.pub import BudgetKeeper
from tests.kit import RecordingClient

NS = "doomed"


def a_pub():
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": NS, "uid": "pub-uid", "resourceVersion": "5"},
        "spec": {"maxUnavailable": 1},
        # the budget is spent and the terminating pod's own record is gone (pods that are no longer
        # active drop out of disruptedPods)
        "status": {
            "desiredAvailable": 2,
            "currentAvailable": 2,
            "unavailableAllowed": 0,
            "disruptedPods": {},
        },
    }


def a_pod(name="web-0", *, terminating):
    meta = {"name": name, "namespace": NS, "annotations": {"kruise.io/related-pub": "web-pub"}}
    if terminating:
        meta["deletionTimestamp"] = "2026-11-22T23:00:00Z"
        meta["deletionGracePeriodSeconds"] = 30
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        # the kubelet has not reported the containers stopping yet: still Running and Ready
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


class Source:
    def __init__(self, pub):
        self._pub = pub

    def pub(self, namespace, name):
        return self._pub if (namespace, name) == (NS, "web-pub") else None

    def pod(self, namespace, name):
        return None

    def in_namespace(self, namespace):
        return [self._pub]


def keeper():
    client = RecordingClient()
    client.put(PODUNAVAILABLEBUDGETS, a_pub())
    client.clear()
    return client, BudgetKeeper(client, Source(a_pub()), backoff=0.0)


async def test_deleting_a_pod_that_is_already_terminating_is_allowed_without_a_slot():
    client, budget = keeper()
    for operation in ("DELETE", "EVICT"):
        decision = await budget.admit(a_pod(terminating=True), operation, dry_run=False)
        assert decision.allowed, (operation, decision.message)
    assert client.writes == []  # nothing recorded: the pod no longer counts as available


async def test_a_running_pod_is_still_refused_when_the_budget_is_spent():
    _, budget = keeper()
    decision = await budget.admit(a_pod(terminating=False), "DELETE", dry_run=False)
    assert not decision.allowed and decision.code == 403
    assert decision.message.endswith("pub unavailable allowed is negative")
