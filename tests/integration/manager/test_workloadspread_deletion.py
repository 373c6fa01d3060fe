"""WorkloadSpread bookkeeping of pod deletions and evictions on the emulator, through the live
kruise-webhook's `/validate-pod` (registered for pod DELETE and pods/eviction CREATE).

The first test runs no WorkloadSpread controller, so the status holds the webhook's books alone:
concurrent DELETEs (one pod deleted twice at once), an eviction and dry runs must leave exactly one
`deletingPods` entry and one freed slot per pod really let go. The second runs the CloneSet and
WorkloadSpread controllers: after pods of full subsets are deleted and evicted, the replacements
land within the subsets' limits and the controller clears the bookings once the pods are gone."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, VERSION_IGNORED, MatchedSpread
from kruise.kube.errors import ApiError
from kruise.kube.resources import CLONESETS, PODS, WORKLOADSPREADS
from kruise.manager.controllers import cloneset, workloadspread
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of
from tests.integration.manager.test_workloadspread_controller import spread, subset
from tests.kit.pods import controller_ref, pod

pytestmark = pytest.mark.asyncio
CTL = {"controller": True}


def matched_pod(name: str, subset_name: str = "subset-a") -> dict[str, Any]:
    """A pod as a workload's controller would leave it: controlled, annotated with its subset (its
    owner kind is one the creation webhook does not follow, so it is admitted as written)."""
    return pod(
        name,
        namespace=NS,
        labels={"app": "loose"},
        annotations={ANNOTATION_MATCHED: MatchedSpread("ws-demo", subset_name).to_json()},
        owner=controller_ref("Batch", "b", uid="u-b", api_version="example.com/v1"),
        containers=[{"name": "c", "image": "nginx"}],
        typed=True,
    )


async def nothing() -> None:
    """A fetch for `until` when the predicate looks at the webhook's own cache."""


async def evict(client: Any, name: str, *, dry_run: bool = False) -> None:
    body: dict[str, Any] = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}
    if dry_run:
        body["deleteOptions"] = {"dryRun": ["All"]}
    await client.request("POST", PODS.path(NS, name) + "/eviction", body=body)


class TestWebhookBooksAlone:
    @pytest.fixture
    def controller_setups(self):
        return []

    async def test_concurrent_deletes_and_eviction_each_free_one_slot(self, kruise_cluster, webhook):
        client = kruise_cluster.client
        ws = spread()
        ws["spec"]["subsets"][1]["maxReplicas"] = 3
        await client.create(WORKLOADSPREADS, ws, NS)
        for i in range(5):
            await client.create(PODS, matched_pod(f"p{i}"), NS)
        cached = webhook.factory.informer(PODS).store

        def all_cached(_: Any) -> bool:
            return all(cached.get_by_name(NS, f"p{i}") is not None for i in range(5))

        await kruise_cluster.until(nothing, all_cached, timeout=30)

        async def delete(name: str) -> None:
            with contextlib.suppress(ApiError):  # the second delete of p0 may find it gone
                await client.delete(PODS, name, NS)

        await asyncio.gather(delete("p0"), delete("p0"), delete("p1"), delete("p2"))
        await evict(client, "p3")
        await client.delete(PODS, "p4", NS, dry_run=True)
        await evict(client, "p4", dry_run=True)

        books = (await client.get(WORKLOADSPREADS, "ws-demo", NS))["status"]["versionedSubsetStatuses"]
        a, b = books[VERSION_IGNORED]
        assert sorted(a["deletingPods"]) == ["p0", "p1", "p2", "p3"]
        assert a["missingReplicas"] == 2 + 4  # the fresh quota plus one per pod let go
        assert b == {"name": "subset-b", "replicas": 0, "missingReplicas": 3}
        assert (await client.get(PODS, "p4", NS))["metadata"]["name"] == "p4"


class TestWithControllers:
    @pytest.fixture
    def controller_setups(self):
        return [cloneset.SETUP, workloadspread.SETUP]

    async def test_deleted_and_evicted_pods_are_replaced_within_limits_and_books_cleared(
        self,
        kruise_cluster,
        webhook,
    ):
        client = kruise_cluster.client
        ws = spread()
        ws["spec"]["subsets"][1]["maxReplicas"] = 3
        await client.create(WORKLOADSPREADS, ws, NS)
        await client.create(CLONESETS, manifest("web", replicas=5), NS)

        def placed(pods: list[dict[str, Any]]) -> bool:
            return len(pods) == 5 and all(
                ANNOTATION_MATCHED in (p["metadata"].get("annotations") or {}) for p in pods
            )

        pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "web"), placed, timeout=60)
        in_a = [p["metadata"]["name"] for p in pods if subset(p) == "subset-a"]
        in_b = [p["metadata"]["name"] for p in pods if subset(p) == "subset-b"]
        assert (len(in_a), len(in_b)) == (2, 3)
        cached = webhook.factory.informer(PODS).store
        await kruise_cluster.until(nothing, lambda _: cached.get_by_name(NS, in_b[0]) is not None, timeout=30)

        async def status() -> dict[str, Any]:
            return (await client.get(WORKLOADSPREADS, "ws-demo", NS)).get("status") or {}

        def settled(s: dict[str, Any]) -> bool:
            overall = s.get("subsetStatuses") or []
            versioned = (s.get("versionedSubsetStatuses") or {}).get(VERSION_IGNORED) or []
            return all(
                [(x["name"], x["replicas"], x["missingReplicas"]) for x in statuses]
                == [("subset-a", 2, 0), ("subset-b", 3, 0)]
                and not any(x.get("deletingPods") or x.get("creatingPods") for x in statuses)
                for statuses in (overall, versioned)
            )

        # As upstream, a pod still in its subset's creatingPods (created, not yet seen by the
        # controller) frees no slot when deleted; so let go of pods only once the books confirm them.
        await kruise_cluster.until(status, settled, timeout=60)
        await asyncio.gather(*(client.delete(PODS, n, NS) for n in in_a), evict(client, in_b[0]))

        await kruise_cluster.until(status, settled, timeout=90)
        left = await pods_of(kruise_cluster, "web")
        names = {p["metadata"]["name"] for p in left}
        assert not names & {*in_a, in_b[0]}
        assert sorted(subset(p) for p in left) == ["subset-a"] * 2 + ["subset-b"] * 3
