"""A CRD change ends the open watches of its custom resource only when kube-apiserver would.

apiextensions-apiserver rebuilds a CRD's serving storage when the CRD's spec or
status.acceptedNames changes: open watches end cleanly and a resume from before the change is
410 Gone, so clients re-list against the new definition. Status-only updates (conditions,
storedVersions) leave the storage and its watches alone.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from kruise.kube.client import Client as KubeClient
from kruise.kube.informer import InformerOptions, SharedInformer
from kruise.kube.resources import ResourceRef
from kruise.sandbox.simulator.client import ApiError, Client
from tests.integration.sandbox.apiserver.conftest import CRDS, GROUP, gadget_crd, served
from tests.kit import until

NAME = f"gadgets.{GROUP}"
V1 = f"/apis/{GROUP}/v1/namespaces/default/gadgets"
V2 = f"/apis/{GROUP}/v2/namespaces/default/gadgets"


@pytest.fixture
async def client(emulator):
    c = Client(emulator.kubeconfig)
    await c.create(CRDS, gadget_crd())
    await served(c, V1)
    yield c
    await c.close()


def gadget(name: str, version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Gadget", "metadata": {"name": name}}


async def add_v2_as_storage(client: Client) -> dict[str, Any]:
    """A spec change: v2 joins and becomes the storage version (read-modify-write, again on 409)."""
    for _ in range(20):
        crd = await client.get(f"{CRDS}/{NAME}")
        v1 = crd["spec"]["versions"][0]
        crd["spec"]["versions"] = [{**copy.deepcopy(v1), "name": "v2"}, {**v1, "storage": False}]
        try:
            return await client.replace(f"{CRDS}/{NAME}", crd)
        except ApiError as err:
            if err.status != 409:
                raise
    raise AssertionError("20 conflicting CRD writes in a row")


async def next_event(events) -> dict[str, Any] | None:
    """The watch's next event, or None when the server ended the stream."""
    async with asyncio.timeout(10):
        return await anext(events, None)


async def test_spec_change_ends_watch_and_new_watch_sees_new_definition(client):
    listed = await client.list(V1)
    events = client.watch(V1, listed["metadata"]["resourceVersion"])
    await client.create(V1, gadget("before"))
    assert (await next_event(events))["object"]["metadata"]["name"] == "before"

    await add_v2_as_storage(client)
    assert await next_event(events) is None  # ended without an ERROR event

    with pytest.raises(ApiError) as gone:
        async for _ in client.watch(V1, listed["metadata"]["resourceVersion"]):
            pass
    assert gone.value.status == 410

    await served(client, V2)
    relisted = await client.list(V2)
    assert [g["apiVersion"] for g in relisted["items"]] == [f"{GROUP}/v2"]
    fresh = client.watch(V2, relisted["metadata"]["resourceVersion"])
    await client.create(V1, gadget("after"))
    seen = await next_event(fresh)
    assert seen["type"] == "ADDED"
    assert (seen["object"]["metadata"]["name"], seen["object"]["apiVersion"]) == ("after", f"{GROUP}/v2")
    await fresh.aclose()


async def test_status_only_update_keeps_watch_open(client):
    await add_v2_as_storage(client)
    await served(client, V2)
    crd = await until(
        lambda: _established(client), message="the establishing controller's write after the spec change"
    )
    assert crd["status"]["storedVersions"] == ["v1", "v2"]
    listed = await client.list(V2)
    events = client.watch(V2, listed["metadata"]["resourceVersion"])

    crd["status"]["storedVersions"] = ["v2"]
    crd["status"]["conditions"] = [c for c in crd["status"]["conditions"] if c["type"] != "NamesAccepted"]
    trimmed = await client.replace(f"{CRDS}/{NAME}/status", crd)
    assert trimmed["status"]["storedVersions"] == ["v2"]

    await client.create(V2, gadget("still-watched", "v2"))
    seen = await next_event(events)
    assert seen is not None and seen["object"]["metadata"]["name"] == "still-watched"
    await events.aclose()


async def _established(client: Client) -> dict[str, Any] | None:
    crd = await client.get(f"{CRDS}/{NAME}")
    conditions = {c["type"]: c["status"] for c in crd["status"].get("conditions") or []}
    return crd if conditions.get("Established") == "True" else None


async def test_informer_relists_across_redefinition_without_losing_events(client, emulator, monkeypatch):
    for name in ("g-0", "g-1", "g-2"):
        await client.create(V1, gadget(name))
    kube = await KubeClient.from_kubeconfig(emulator.kubeconfig, qps=1000, burst=1000)
    try:
        await _redefine_under_informer(client, kube, monkeypatch)
    finally:
        await kube.close()


async def _redefine_under_informer(client: Client, kube: KubeClient, monkeypatch) -> None:
    # Hold the informer's requests once its watch is live, so the change lands while it is away.
    gate = asyncio.Event()
    gate.set()
    acquire = kube.limiter.acquire

    async def gated_acquire():
        await gate.wait()
        await acquire()

    monkeypatch.setattr(kube.limiter, "acquire", gated_acquire)
    ref = ResourceRef(GROUP, "v1", "gadgets", kind="Gadget")
    informer = SharedInformer(kube, ref, "default", options=InformerOptions(backoff_initial=0.05))
    events: list[tuple[str, str]] = []
    informer.add_event_handler(
        lambda o: events.append(("add", o["metadata"]["name"])),
        lambda old, new: events.append(("update", new["metadata"]["name"])),
        lambda o: events.append(("delete", "deleted")),
    )
    informer.start()
    await informer.wait_for_sync(10)
    await client.create(V1, gadget("live"))
    await until(lambda: informer.get("default/live") is not None)
    synced_at = len(events)

    gate.clear()
    await add_v2_as_storage(client)
    await client.patch(f"{V1}/g-0", {"spec": {"v": 2}})
    await client.create(V1, gadget("g-new"))
    state = {
        g["metadata"]["name"]: g["metadata"]["resourceVersion"] for g in (await client.list(V1))["items"]
    }
    gate.set()

    def cached() -> dict[str, str]:
        return {
            k.split("/")[1]: v["metadata"]["resourceVersion"] for k, v in informer.store.snapshot().items()
        }

    await until(lambda: cached() == state)
    assert informer.relists == 1
    assert events[synced_at:] in (
        [("update", "g-0"), ("add", "g-new")],
        [("add", "g-new"), ("update", "g-0")],
    )
    await informer.stop()
