"""WorkloadSpread custom workloads followed after kruise-webhook became ready: a cache attached late
is outside the process-wide readiness gate, so a pod whose owner chain or target reaches it waits
for its first list (or is refused when it never comes) instead of being admitted from an empty
cache; `CustomWorkloadFollower` resolves the whitelisted kinds each time it is woken."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kruise.api.keys import CONFIG_WORKLOADSPREAD_WATCH_CUSTOM_WORKLOAD_WHITELIST as KEY
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED
from kruise.kube.resources import CRDS, ResourceRef
from kruise.kube.store import Store
from kruise.webhook.caches import StoreSpreads
from kruise.webhook.customworkloads import CustomWorkloadFollower
from kruise.webhook.handlers import workloadspread as wshandler
from kruise.webhook.handlers.pod import pod_create_handler
from tests.kit.custom_workloads import open_crd
from tests.kit.polling import until
from tests.unit.webhook.test_workloadspread_pods import new_pod, request, setup, workloadspread

GROUP = "demo.kruise-py.io"
SHARDS = ResourceRef(GROUP, "v1", "gameshards", True, "GameShard")
SHARD_REF = {"apiVersion": f"{GROUP}/v1", "kind": "GameShard", "name": "shard-0"}
OWNER = {
    "apiVersion": f"{GROUP}/v1",
    "kind": "GameSet",
    "name": "app",
    "uid": "gs",
    "controller": True,
}
SHARD = {**SHARD_REF, "metadata": {"name": "shard-0", "namespace": "ns", "ownerReferences": [OWNER]}}
WHITELIST = {
    "workloads": [
        {
            "group": GROUP,
            "version": "v1",
            "kind": "GameSet",
            "subResources": [{"group": GROUP, "version": "v1", "kind": "GameShard"}],
            "replicasPath": "spec.size",
        }
    ]
}


class Gate:
    """A late cache's `Freshness`: not current until `current` is set; counts who waits for it."""

    def __init__(self) -> None:
        self.current = asyncio.Event()
        self.waiters = 0

    def is_current(self) -> bool:
        return self.current.is_set()

    async def wait_current(self) -> None:
        self.waiters += 1
        await self.current.wait()


def shard_keeper(gate: Gate):
    """A keeper whose WorkloadSpread targets GameSet `app`; its pods' owner, a GameShard, is found
    through a store attached late."""
    _, source, keeper = setup(workloadspread(("a", 1), ("b", None), kind="GameSet", api=f"{GROUP}/v1"))
    keeper.configuration = lambda: {KEY: json.dumps(WHITELIST)}
    store = Store()
    source.attach_workload(GROUP, "GameShard", store, gate)
    return store, keeper


async def test_pod_waits_for_a_late_cache_then_is_placed_from_it() -> None:
    gate = Gate()
    store, keeper = shard_keeper(gate)
    handle = pod_create_handler(spreads=keeper)
    admission = asyncio.create_task(handle(request(new_pod("p1", SHARD_REF))))
    await until(lambda: gate.waiters > 0, message="the admission waits for the GameShard cache")
    assert not admission.done()
    # the first list: until now the shard was not in the cache, and reading it would have failed
    store.upsert(SHARD)
    gate.current.set()
    pod = (await admission).mutated
    assert json.loads(pod["metadata"]["annotations"][ANNOTATION_MATCHED]) == {"name": "ws", "subset": "a"}


async def test_pod_is_refused_when_a_late_cache_never_lists(monkeypatch) -> None:
    monkeypatch.setattr(wshandler, "LATE_CACHE_WAIT_SECONDS", 0.01)
    _, keeper = shard_keeper(Gate())
    decision = await pod_create_handler(spreads=keeper)(request(new_pod("p1", SHARD_REF)))
    assert not decision.allowed and decision.code == 500
    assert decision.message == f"the cache of GameShard.{GROUP} is not current"


def test_attached_at_start_without_freshness_reads_at_once() -> None:
    source = StoreSpreads(Store())
    source.attach_workload(GROUP, "GameShard", Store())
    assert source.workload(SHARD_REF, "ns") is None


class CrdClient:
    """Answers the CRD list `resource_for_kind` makes with what `crds` holds now."""

    def __init__(self) -> None:
        self.crds: list[dict[str, Any]] = []

    async def list(self, ref: ResourceRef, *args: Any, **kwargs: Any) -> dict[str, Any]:
        assert ref == CRDS
        return {"items": list(self.crds)}


async def test_follower_attaches_a_kind_once_its_crd_appears() -> None:
    client = CrdClient()
    source = StoreSpreads(Store())
    configuration: dict[str, str] = {}
    served: list[ResourceRef] = []

    async def is_served(ref: ResourceRef) -> bool:
        served.append(ref)
        return True

    follower = CustomWorkloadFollower(client, source, lambda: configuration, is_served)  # type: ignore[arg-type]
    attached: list[tuple[str, ResourceRef]] = []

    def cache_for(gvk, ref: ResourceRef) -> None:
        attached.append((gvk.kind, ref))
        source.attach_workload(gvk.group, gvk.kind, Store())

    await follower.follow(configuration, cache_for)  # no whitelist yet
    configuration[KEY] = json.dumps(WHITELIST)
    await follower.follow(configuration, cache_for)  # whitelisted, no CRD serves it yet
    assert attached == [] and served == []
    client.crds.append(open_crd(SHARDS))
    await follower.follow(configuration, cache_for)
    assert attached == [("GameShard", SHARDS)]
    await follower.follow(configuration, cache_for)  # followed already: nothing resolved again
    assert attached == [("GameShard", SHARDS)] and served == [SHARDS]


@pytest.mark.parametrize("bad", ["{", json.dumps({"workloads": [{"kind": "GameShard"}]})])
async def test_follower_skips_a_bad_whitelist(bad: str) -> None:
    source = StoreSpreads(Store())

    async def is_served(ref: ResourceRef) -> bool:
        raise AssertionError("nothing is resolved from a bad whitelist")

    follower = CustomWorkloadFollower(CrdClient(), source, dict, is_served)  # type: ignore[arg-type]
    await follower.follow({KEY: bad}, lambda gvk, ref: None)
    assert not source.follows(GROUP, "GameShard")
