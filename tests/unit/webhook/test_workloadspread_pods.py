"""WorkloadSpread on pod CREATE through the pod mutating handler: the pod gets its subset's affinity
and annotation, the WorkloadSpread status books it; replicas with stale caches racing over one
WorkloadSpread never place more pods in a subset than its maxReplicas."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, VERSION_IGNORED
from kruise.kube.resources import CLONESETS, REPLICASETS, WORKLOADSPREADS, ResourceRef
from kruise.kube.retry import Backoff
from kruise.kube.store import Store
from kruise.webhook.admission import AdmissionRequest
from kruise.webhook.caches import StoreSpreads
from kruise.webhook.handlers.pod import pod_create_handler
from kruise.webhook.handlers.workloadspread import SpreadKeeper
from tests.kit.client import RecordingClient
from tests.kit.informers import FakeInformer

ZONE = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["%s"]}]}


def zone(name: str) -> dict[str, Any]:
    return json.loads(json.dumps(ZONE) % name)


def workloadspread(
    *limits: tuple[str, Any], kind: str = "CloneSet", api: str = "apps.kruise.io/v1alpha1"
) -> dict[str, Any]:
    subsets = []
    for name, limit in limits:
        subset: dict[str, Any] = {"name": name, "requiredNodeSelectorTerm": zone(name)}
        if limit is not None:
            subset["maxReplicas"] = limit
        subsets.append(subset)
    return {
        "metadata": {"name": "ws", "namespace": "ns"},
        "spec": {"targetRef": {"apiVersion": api, "kind": kind, "name": "app"}, "subsets": subsets},
    }


def new_pod(name: str = "", owner: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"namespace": "ns", "labels": {"app": "x"}}
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = "app-"
    ref = owner or {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "app", "uid": "cs"}
    meta["ownerReferences"] = [{**ref, "controller": True}]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }


def request(pod: dict[str, Any], dry_run: bool = False) -> AdmissionRequest:
    return AdmissionRequest.model_validate(
        {
            "uid": "u",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "ns",
            "operation": "CREATE",
            "object": pod,
            "dryRun": dry_run,
        }
    )


class YieldingClient(RecordingClient):
    """Gives other tasks a turn before each call, as a real network round trip would."""

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return await super().get(*args, **kwargs)

    async def update(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return await super().update(*args, **kwargs)


def setup(
    ws: dict[str, Any], *workloads: tuple[ResourceRef, dict[str, Any]], client: RecordingClient | None = None
):
    client = client or RecordingClient()
    client.put(WORKLOADSPREADS, ws)
    informer = FakeInformer()
    client.sync(WORKLOADSPREADS, informer)
    source = StoreSpreads(informer.store)
    for ref, obj in workloads:
        store = Store()
        store.upsert(obj)
        source.attach_workload(ref.group, ref.kind, store)
    counter = itertools.count()
    keeper = SpreadKeeper(
        client,
        source,
        new_uid=lambda: f"gen-{next(counter)}",
        backoff=Backoff(steps=50, duration=0.0, jitter=0.0),
    )
    return client, source, keeper


def cloneset(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "app", "namespace": "ns"},
        "spec": {"replicas": replicas},
    }


def decision_pod(decision: Any) -> dict[str, Any]:
    return decision.mutated


async def test_pod_gets_subset_and_status_books_it() -> None:
    client, _, keeper = setup(workloadspread(("a", 1), ("b", None)))
    handle = pod_create_handler(spreads=keeper)
    first = decision_pod(await handle(request(new_pod("p1"))))
    terms = first["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [zone("a")]
    assert json.loads(first["metadata"]["annotations"][ANNOTATION_MATCHED]) == {"name": "ws", "subset": "a"}
    second = decision_pod(await handle(request(new_pod("p2"))))
    assert json.loads(second["metadata"]["annotations"][ANNOTATION_MATCHED])["subset"] == "b"
    books = client.object(WORKLOADSPREADS, "ws", "ns")["status"]["versionedSubsetStatuses"][VERSION_IGNORED]
    assert books[0]["missingReplicas"] == 0 and set(books[0]["creatingPods"]) == {"p1"}
    assert books[1]["missingReplicas"] == -1
    assert [c.verb for c in client.writes] == ["update"]


async def test_generate_name_pod_carries_generated_uid() -> None:
    client, _, keeper = setup(workloadspread(("a", 2), ("b", None)))
    out = decision_pod(await pod_create_handler(spreads=keeper)(request(new_pod())))
    assert json.loads(out["metadata"]["annotations"][ANNOTATION_MATCHED]) == {
        "name": "ws",
        "subset": "a",
        "uid": "gen-0",
    }
    books = client.object(WORKLOADSPREADS, "ws", "ns")["status"]["versionedSubsetStatuses"][VERSION_IGNORED]
    assert set(books[0]["creatingPods"]) == {"gen-0"}


async def test_percent_quota_reads_workload_replicas_from_cache() -> None:
    _, _, keeper = setup(workloadspread(("a", "50%"), ("b", "50%")), (CLONESETS, cloneset(2)))
    handle = pod_create_handler(spreads=keeper)
    subsets = []
    for i in range(3):
        decision = await handle(request(new_pod(f"p{i}")))
        annotations = ((decision.mutated or {}).get("metadata") or {}).get("annotations") or {}
        subsets.append(
            json.loads(annotations[ANNOTATION_MATCHED])["subset"]
            if ANNOTATION_MATCHED in annotations
            else None
        )
    assert subsets == ["a", "b", None]


async def test_deployment_pod_found_through_replicaset() -> None:
    rs = {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "app-abc", "namespace": "ns", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "app", "controller": True}]},
    }  # fmt: skip
    ws = workloadspread(("a", 1), ("b", None), kind="Deployment", api="apps/v1")
    client, _, keeper = setup(ws, (REPLICASETS, rs))
    pod = new_pod("p1", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "app-abc"})
    pod["metadata"]["labels"]["pod-template-hash"] = "abc"
    out = decision_pod(await pod_create_handler(spreads=keeper)(request(pod)))
    assert json.loads(out["metadata"]["annotations"][ANNOTATION_MATCHED])["subset"] == "a"
    status = client.object(WORKLOADSPREADS, "ws", "ns")["status"]
    assert list(status["versionedSubsetStatuses"]) == ["abc"]


async def test_replicaset_missing_from_cache_fails_admission() -> None:
    ws = workloadspread(("a", 1), kind="Deployment", api="apps/v1")
    _, _, keeper = setup(ws, (REPLICASETS, {"metadata": {"name": "other", "namespace": "ns"}}))
    pod = new_pod("p1", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "app-abc"})
    decision = await pod_create_handler(spreads=keeper)(request(pod))
    assert not decision.allowed and decision.code == 500
    assert "ReplicaSet ns/app-abc not found" in decision.message


async def test_dry_run_and_unrelated_pods_are_untouched() -> None:
    client, _, keeper = setup(workloadspread(("a", 1), ("b", None)))
    handle = pod_create_handler(spreads=keeper)
    for pod, dry_run in (
        (new_pod("p1"), True),
        (
            new_pod("p2", {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "other"}),
            False,
        ),
    ):
        mutated = (await handle(request(pod, dry_run=dry_run))).mutated or {}
        assert ANNOTATION_MATCHED not in (mutated.get("metadata") or {}).get("annotations", {})
        assert "affinity" not in (mutated.get("spec") or {})
    assert client.writes == []


async def test_racing_replicas_with_stale_caches_never_exceed_max_replicas() -> None:
    client = YieldingClient()
    ws = workloadspread(("a", 3), ("b", 2), ("c", 1))
    _, source, _ = setup(ws, client=client)
    # Three replicas share the apiserver but not their memory; each starts from the same cached copy.
    keepers = [
        SpreadKeeper(client, source, new_uid=lambda: "x", backoff=Backoff(steps=50, duration=0.0, jitter=0.0))
        for _ in range(3)
    ]
    handlers = [pod_create_handler(spreads=k) for k in keepers]
    decisions = await asyncio.gather(*(handlers[i % 3](request(new_pod(f"p{i}"))) for i in range(10)))
    assert all(d.allowed for d in decisions)
    placed: dict[str, int] = {}
    for d in decisions:
        annotations = ((d.mutated or {}).get("metadata") or {}).get("annotations") or {}
        if ANNOTATION_MATCHED in annotations:
            subset = json.loads(annotations[ANNOTATION_MATCHED])["subset"]
            placed[subset] = placed.get(subset, 0) + 1
    assert placed == {"a": 3, "b": 2, "c": 1}
    assert any(c.error is not None for c in client.calls), "the race should have produced conflicts"
    books = client.object(WORKLOADSPREADS, "ws", "ns")["status"]["versionedSubsetStatuses"][VERSION_IGNORED]
    assert [(b["missingReplicas"], len(b["creatingPods"])) for b in books] == [(0, 3), (0, 2), (0, 1)]
