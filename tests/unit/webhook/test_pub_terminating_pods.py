"""PodUnavailableBudget admission lets pods that are already terminating go (issue 11 bug 9).

Upstream counts a pod as protected only while it is running, Ready and not being deleted
(`IsRunningAndReady`), so a DELETE of a terminating pod never takes a slot. The namespace controller
(and the kubelet's final grace-0 delete) re-deletes terminating pods whose disruption record the
PUB controller has already dropped; with an exhausted budget those deletes were refused, so a
namespace holding a PUB never finished terminating.
"""

from __future__ import annotations

from functools import partial

from kruise.kube.resources import PODUNAVAILABLEBUDGETS
from kruise.webhook.handlers.pub import BudgetKeeper
from tests.kit import RecordingClient
from tests.kit.pods import pod
from tests.kit.pubs import FakePubSource

NS = "doomed"
# a pod PUB web-pub protects; the kubelet has not reported its containers stopping: Running and Ready
protected_pod = partial(
    pod, "web-0", typed=True, namespace=NS, annotations={"kruise.io/related-pub": "web-pub"},
    containers=[{"name": "c", "image": "nginx"}], phase="Running", ready=True,
)  # fmt: skip


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


def keeper():
    client = RecordingClient()
    client.put(PODUNAVAILABLEBUDGETS, a_pub())
    client.clear()
    return client, BudgetKeeper(client, FakePubSource(a_pub()), backoff=0.0)


async def test_deleting_a_pod_that_is_already_terminating_is_allowed_without_a_slot():
    client, budget = keeper()
    for operation in ("DELETE", "EVICT"):
        decision = await budget.admit(protected_pod(deletion_grace=30), operation, dry_run=False)
        assert decision.allowed, (operation, decision.message)
    assert client.writes == []  # nothing recorded: the pod no longer counts as available


async def test_a_running_pod_is_still_refused_when_the_budget_is_spent():
    _, budget = keeper()
    decision = await budget.admit(protected_pod(), "DELETE", dry_run=False)
    assert not decision.allowed and decision.code == 403
    assert decision.message.endswith("pub unavailable allowed is negative")
