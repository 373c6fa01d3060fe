"""PodUnavailableBudget admission under write conflicts (issue 28, scenario 7).

Several kruise-webhook replicas take slots of one budget at once; each slot is an optimistic PUB status
write. A conflict means another replica wrote first: the request re-reads the PUB and decides again on
the fresh status, so it never takes a slot the other write already took. When every retry conflicts the
request is refused (fail closed) with upstream's answer: a 403 carrying the Timeout error's text.
"""

from __future__ import annotations

from functools import partial

from kruise.kube.resources import PODUNAVAILABLEBUDGETS
from kruise.webhook.handlers.pub import CONFLICT_RETRIES, BudgetKeeper
from tests.kit import RecordingClient
from tests.kit.pods import pod
from tests.kit.pubs import FakePubSource

NS = "shop"
# a running, Ready pod that PUB web-pub protects
protected_pod = partial(
    pod, typed=True, namespace=NS, annotations={"kruise.io/related-pub": "web-pub"},
    containers=[{"name": "c", "image": "nginx"}], phase="Running", ready=True,
)  # fmt: skip


def a_pub(allowed: int, disrupted: dict[str, str] | None = None, rv: str = "5"):
    return {
        "apiVersion": "policy.kruise.io/v1alpha1",
        "kind": "PodUnavailableBudget",
        "metadata": {"name": "web-pub", "namespace": NS, "uid": "pub-uid", "resourceVersion": rv},
        "spec": {"maxUnavailable": 1},
        "status": {
            "desiredAvailable": 3,
            "currentAvailable": 3 + allowed,
            "unavailableAllowed": allowed,
            "disruptedPods": disrupted or {},
        },
    }


async def test_a_conflict_rereads_the_pub_and_refuses_the_slot_another_replica_took():
    client = RecordingClient()
    # the stored PUB: another replica already took the last slot for web-9
    client.put(PODUNAVAILABLEBUDGETS, a_pub(0, {"web-9": "2026-12-07T12:00:00Z"}, rv="6"))
    stale = a_pub(1)  # this replica's cache still shows one slot
    keeper = BudgetKeeper(client, FakePubSource(stale), backoff=0.0)

    decision = await keeper.admit(protected_pod("web-0"), "EVICT", dry_run=False)

    assert not decision.allowed
    assert decision.code == 403
    assert "pub unavailable allowed is negative" in decision.message
    stored = client.object(PODUNAVAILABLEBUDGETS, "web-pub", NS)
    assert stored["status"]["unavailableAllowed"] == 0
    assert set(stored["status"]["disruptedPods"]) == {"web-9"}


async def test_a_conflict_then_room_takes_the_slot_on_the_fresh_status():
    client = RecordingClient()
    client.put(PODUNAVAILABLEBUDGETS, a_pub(2, {"web-9": "2026-12-07T12:00:00Z"}, rv="6"))
    keeper = BudgetKeeper(client, FakePubSource(a_pub(3)), backoff=0.0)

    decision = await keeper.admit(protected_pod("web-0"), "EVICT", dry_run=False)

    assert decision.allowed, decision.message
    stored = client.object(PODUNAVAILABLEBUDGETS, "web-pub", NS)
    assert stored["status"]["unavailableAllowed"] == 1  # the fresh 2, not the cached 3, minus one
    assert set(stored["status"]["disruptedPods"]) == {"web-9", "web-0"}


async def test_conflicts_on_every_retry_refuse_the_request_as_upstream():
    client = RecordingClient()
    client.put(PODUNAVAILABLEBUDGETS, a_pub(2))
    client.fail_next("update", PODUNAVAILABLEBUDGETS, "web-pub", NS, times=CONFLICT_RETRIES + 1)
    keeper = BudgetKeeper(client, FakePubSource(a_pub(2)), backoff=0.0)

    decision = await keeper.admit(protected_pod("web-0"), "DELETE", dry_run=False)

    assert not decision.allowed
    assert decision.code == 403
    assert decision.message == "Timeout: couldn't update PodUnavailableBudget web-pub due to conflicts"
    stored = client.object(PODUNAVAILABLEBUDGETS, "web-pub", NS)
    assert stored["status"]["unavailableAllowed"] == 2 and stored["status"]["disruptedPods"] == {}
