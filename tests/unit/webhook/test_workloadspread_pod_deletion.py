"""WorkloadSpread on pod DELETE and `pods/eviction` CREATE through `/validate-pod`, as upstream's
pod validating webhook: the pod goes into its subset's `deletingPods` with one more missing replica;
dry runs, subresource deletes and pods WorkloadSpread does not count book nothing; an eviction reads
its pod from the webhook's cache; replicas with stale caches racing over the same subset lose no
deletion and count none twice."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kruise.api.features import FeatureGates
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, VERSION_IGNORED, MatchedSpread
from kruise.kube.resources import WORKLOADSPREADS
from kruise.kube.retry import Backoff
from kruise.kube.store import Store
from kruise.webhook import paths, registry
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.caches import StorePodsAndNodes, StorePubs
from kruise.webhook.handlers.pub import BudgetKeeper
from kruise.webhook.handlers.workloadspread import SpreadKeeper
from tests.kit.webhook import context
from tests.unit.webhook.test_workloadspread_pods import YieldingClient, setup, workloadspread

API = "apps.kruise.io/v1alpha1"
BACKOFF = Backoff(steps=50, duration=0.0, jitter=0.0)


def booked_spread(missing: int = 0) -> dict[str, Any]:
    """Subset a (max 3) full with three running pods, subset b unlimited."""
    ws = workloadspread(("a", 3), ("b", None))
    ws["status"] = {
        "versionedSubsetStatuses": {
            VERSION_IGNORED: [
                {"name": "a", "replicas": 3, "missingReplicas": missing},
                {"name": "b", "replicas": 0, "missingReplicas": -1},
            ]
        }
    }
    return ws


def running_pod(name: str, subset: str = "a") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "annotations": {ANNOTATION_MATCHED: MatchedSpread("ws", subset).to_json()},
            "ownerReferences": [
                {
                    "apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "CloneSet",
                    "name": "app",
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": [{"name": "c", "image": "x"}]},
        "status": {"phase": "Running"},
    }


def delete_review(pod: dict[str, Any], *, dry_run: bool = False, sub: str = "") -> AdmissionRequest:
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"}
    if dry_run:
        options["dryRun"] = ["All"]
    return AdmissionRequest.model_validate(
        {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "subResource": sub,
            "namespace": "ns",
            "name": pod["metadata"]["name"],
            "operation": "DELETE",
            "oldObject": pod,
            "options": options,
            "dryRun": dry_run,
        }
    )


def eviction_review(name: str, *, dry_run: bool = False) -> AdmissionRequest:
    eviction: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": "ns"},
    }
    if dry_run:
        eviction["deleteOptions"] = {"dryRun": ["All"]}
    return AdmissionRequest.model_validate(
        {
            "uid": "u",
            "kind": {"group": "policy", "version": "v1", "kind": "Eviction"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "subResource": "eviction",
            "namespace": "ns",
            "name": name,
            "operation": "CREATE",
            "object": eviction,
        }
    )


def validate_pod(keeper: SpreadKeeper, pods: Store, gates: FeatureGates | None = None):
    gates = gates or FeatureGates(env={})
    budgets = BudgetKeeper(keeper.client, StorePubs(pods))
    objects = StorePodsAndNodes(pods, Store())
    return registry.routes(context(gates=gates, budgets=budgets, objects=objects, spreads=keeper)).get(
        paths.POD_VALIDATE
    )


def subset_books(client: Any, index: int = 0) -> dict[str, Any]:
    ws = client.object(WORKLOADSPREADS, "ws", "ns")
    return ws["status"]["versionedSubsetStatuses"][VERSION_IGNORED][index]


async def test_delete_books_pod_into_deleting_pods() -> None:
    client, _, keeper = setup(booked_spread())
    handle = validate_pod(keeper, Store())
    decision = await handle(delete_review(running_pod("p1")))
    assert decision.allowed
    books = subset_books(client)
    assert set(books["deletingPods"]) == {"p1"} and books["missingReplicas"] == 1
    assert [c.verb for c in client.writes] == ["update"]


async def test_delete_twice_books_once() -> None:
    client, _, keeper = setup(booked_spread())
    handle = validate_pod(keeper, Store())
    for _ in range(2):
        assert (await handle(delete_review(running_pod("p1")))).allowed
    assert subset_books(client)["missingReplicas"] == 1
    assert len(client.writes) == 1


async def test_eviction_books_the_cached_pod() -> None:
    client, _, keeper = setup(booked_spread())
    pods = Store()
    pods.upsert(running_pod("p2"))
    decision = await validate_pod(keeper, pods)(eviction_review("p2"))
    assert decision.allowed
    books = subset_books(client)
    assert set(books["deletingPods"]) == {"p2"} and books["missingReplicas"] == 1


async def test_eviction_of_a_pod_not_in_the_cache_is_refused_as_upstream() -> None:
    client, _, keeper = setup(booked_spread())
    decision = await validate_pod(keeper, Store())(eviction_review("ghost"))
    assert not decision.allowed and decision.code == 400
    assert decision.message == 'pods "ghost" not found'
    assert client.writes == []


async def test_dry_runs_book_nothing() -> None:
    client, _, keeper = setup(booked_spread())
    pods = Store()
    pods.upsert(running_pod("p2"))
    handle = validate_pod(keeper, pods)
    assert (await handle(delete_review(running_pod("p1"), dry_run=True))).allowed
    assert (await handle(eviction_review("p2", dry_run=True))).allowed
    assert client.writes == []


async def test_requests_that_book_nothing() -> None:
    client, _, keeper = setup(booked_spread())
    handle = validate_pod(keeper, Store())
    finished = running_pod("p3")
    finished["status"]["phase"] = "Succeeded"
    plain = running_pod("p4")
    plain["metadata"].pop("annotations")
    other_ws = running_pod("p5")
    other_ws["metadata"]["annotations"][ANNOTATION_MATCHED] = MatchedSpread("gone", "a").to_json()
    unlimited = running_pod("p6", subset="b")
    for review in (
        delete_review(finished),
        delete_review(plain),
        delete_review(other_ws),
        delete_review(unlimited),
        delete_review(running_pod("p7"), sub="status"),
    ):
        assert (await handle(review)).allowed
    assert client.writes == []


async def test_status_write_that_keeps_failing_refuses_with_400() -> None:
    client, _, keeper = setup(booked_spread())
    keeper.backoff = Backoff(steps=2, duration=0.0, jitter=0.0)
    client.fail_next("update", WORKLOADSPREADS, "ws", "ns", times=2)
    decision = await validate_pod(keeper, Store())(delete_review(running_pod("p1")))
    assert not decision.allowed and decision.code == 400


async def test_route_served_for_workloadspread_alone_and_not_without_its_gate() -> None:
    _, _, keeper = setup(booked_spread())
    objects = StorePodsAndNodes(Store(), Store())
    only_ws = FeatureGates({"PodUnavailableBudgetDeleteGate": False}, env={})
    assert paths.POD_VALIDATE in registry.routes(context(gates=only_ws, objects=objects, spreads=keeper))
    neither = FeatureGates({"PodUnavailableBudgetDeleteGate": False, "WorkloadSpread": False}, env={})
    assert paths.POD_VALIDATE not in registry.routes(context(gates=neither, objects=objects, spreads=keeper))


async def test_racing_replicas_with_stale_caches_count_every_deletion_once() -> None:
    client = YieldingClient()
    _, source, _ = setup(booked_spread(), client=client)
    keepers = [SpreadKeeper(client, source, backoff=BACKOFF) for _ in range(3)]
    handlers = [validate_pod(k, Store()) for k in keepers]
    # p0..p2 deleted by two replicas each (a DELETE racing a retry), p3..p5 once
    names = [f"p{i}" for i in range(3)] * 2 + [f"p{i}" for i in range(3, 6)]
    decisions = await asyncio.gather(
        *(handlers[i % 3](delete_review(copy.deepcopy(running_pod(n)))) for i, n in enumerate(names))
    )
    assert all(d.allowed for d in decisions)
    assert any(c.error is not None for c in client.calls), "the race should have produced conflicts"
    books = subset_books(client)
    assert set(books["deletingPods"]) == {f"p{i}" for i in range(6)}
    assert books["missingReplicas"] == 6
