"""kruise.kube against the sandbox API emulator over HTTPS: resourceVersions, watches, forced 410s."""

from __future__ import annotations

import asyncio
import time

import pytest
import structlog.testing

from kruise.kube import errors
from kruise.kube.client import Client, PatchType
from kruise.kube.controller import Controller, enqueue_owner
from kruise.kube.events import EventRecorder
from kruise.kube.informer import InformerOptions, SharedInformer
from kruise.kube.leaderelection import LeaderElectionConfig, LeaderElector
from kruise.kube.resources import CONFIGMAPS, EVENTS, LEASES, NAMESPACES, PODS, REPLICASETS
from kruise.kube.store import OWNER_UID_INDEX, DeletedFinalStateUnknown
from tests.kit import until

NS = "default"


@pytest.fixture
async def client(emulator):
    c = await Client.from_kubeconfig(
        emulator.kubeconfig, user_agent="kruise-manager/test", qps=1000, burst=1000
    )
    yield c
    await c.close()


def cm(name, **data):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NS},
        "data": data,
    }


async def test_client_crud_patch_and_errors(client):
    created = await client.create(CONFIGMAPS, cm("a", k="1"))
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    with pytest.raises(errors.AlreadyExists):
        await client.create(CONFIGMAPS, cm("a"))

    got = await client.get(CONFIGMAPS, "a", NS)
    updated = await client.update(CONFIGMAPS, {**got, "data": {"k": "2"}})
    with pytest.raises(errors.Conflict):
        await client.update(CONFIGMAPS, {**got, "data": {"k": "stale"}})

    merged = await client.patch(CONFIGMAPS, "a", {"data": {"m": "x"}}, NS, patch_type=PatchType.MERGE)
    assert merged["data"] == {"k": "2", "m": "x"}
    jsoned = await client.patch(
        CONFIGMAPS, "a", [{"op": "remove", "path": "/data/m"}], NS, patch_type=PatchType.JSON
    )
    assert jsoned["data"] == {"k": "2"}
    smp = await client.patch(
        CONFIGMAPS, "a", {"metadata": {"labels": {"app": "web"}}}, NS, patch_type=PatchType.STRATEGIC
    )
    assert smp["metadata"]["labels"] == {"app": "web"}
    applied = await client.patch(
        CONFIGMAPS,
        "b",
        cm("b", via="apply"),
        NS,
        patch_type=PatchType.APPLY,
        field_manager="kruise",
        force=True,
    )
    assert applied["data"] == {"via": "apply"}

    listed = await client.list(CONFIGMAPS, NS, label_selector={"app": "web"})
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]

    dry = await client.create(CONFIGMAPS, cm("dry"), dry_run=True)
    assert dry["metadata"]["name"] == "dry"
    with pytest.raises(errors.NotFound):
        await client.get(CONFIGMAPS, "dry", NS)

    with pytest.raises(errors.Conflict):
        await client.delete(CONFIGMAPS, "a", NS, uid="not-the-uid")
    await client.delete(CONFIGMAPS, "a", NS, uid=updated["metadata"]["uid"])
    with pytest.raises(errors.NotFound) as caught:
        await client.get(CONFIGMAPS, "a", NS)
    assert caught.value.message == 'configmaps "a" not found'

    with pytest.raises(errors.Invalid) as caught:
        await client.create(CONFIGMAPS, cm("Not_A_Valid_Name"))
    assert any(c.field == "metadata.name" for c in caught.value.causes)


class Log:
    def __init__(self, informer):
        self.events: list[tuple[str, str, str]] = []
        informer.add_event_handler(self.add, self.update, self.delete)

    def add(self, o):
        self.events.append(("add", o["metadata"]["name"], o["metadata"]["resourceVersion"]))

    def update(self, old, new):
        self.events.append(("update", new["metadata"]["name"], new["metadata"]["resourceVersion"]))

    def delete(self, o):
        kind = "tombstone" if isinstance(o, DeletedFinalStateUnknown) else "delete"
        obj = o.obj if isinstance(o, DeletedFinalStateUnknown) else o
        self.events.append((kind, obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))


async def test_informer_list_then_watch(client):
    await client.create(CONFIGMAPS, cm("pre"))
    informer = SharedInformer(client, CONFIGMAPS, NS)
    log = Log(informer)
    informer.start()
    assert await informer.wait_for_sync(10)
    # kube-root-ca.crt is in every namespace, as kube-controller-manager keeps it there
    assert [e[:2] for e in log.events] == [("add", "kube-root-ca.crt"), ("add", "pre")]
    a = await client.create(CONFIGMAPS, cm("a"))
    a2 = await client.patch(CONFIGMAPS, "a", {"data": {"x": "1"}}, NS)
    await client.delete(CONFIGMAPS, "pre", NS)
    await until(lambda: len(log.events) == 5)
    assert log.events[2:4] == [
        ("add", "a", a["metadata"]["resourceVersion"]),
        ("update", "a", a2["metadata"]["resourceVersion"]),
    ]
    assert log.events[4][:2] == ("delete", "pre")
    assert sorted(informer.store.keys()) == ["default/a", "default/kube-root-ca.crt"]
    assert "managedFields" not in informer.get("default/a")["metadata"]
    await informer.stop()


async def test_silent_watch_is_reopened_not_hung(client, monkeypatch):
    opened = 0
    watch = client.watch

    def counting_watch(*args, **kwargs):
        nonlocal opened
        opened += 1
        return watch(*args, **kwargs)

    monkeypatch.setattr(client, "watch", counting_watch)
    informer = SharedInformer(client, CONFIGMAPS, NS, options=InformerOptions(read_timeout=0.2))
    informer.start()
    await informer.wait_for_sync(10)
    # Nothing changes, so the watch is silent: the read timeout must re-open it from the same version.
    await until(lambda: opened >= 3)
    assert informer.relists == 0
    await client.create(CONFIGMAPS, cm("late"))
    await until(lambda: informer.get("default/late") is not None)
    await informer.stop()


async def test_informer_backs_off_through_server_errors_then_syncs(client, emulator):
    await client.create(CONFIGMAPS, cm("x"))
    emulator.server.fail_next(2, 500)
    informer = SharedInformer(client, CONFIGMAPS, NS, options=InformerOptions(backoff_initial=0.02))
    informer.start()
    assert await informer.wait_for_sync(10)
    assert sorted(informer.store.keys()) == ["default/kube-root-ca.crt", "default/x"]
    await informer.stop()


async def test_client_surfaces_throttling_as_too_many_requests(client, emulator):
    emulator.server.fail_next(1, 429)
    with pytest.raises(errors.TooManyRequests):
        await client.get(CONFIGMAPS, "anything", NS)


async def server_state(client):
    items, _ = await client.list_all(CONFIGMAPS, NS)
    return {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in items}


async def test_relist_after_gap_delivers_exact_difference(client):
    for name in ("keep", "change", "drop"):
        await client.create(CONFIGMAPS, cm(name))
    informer = SharedInformer(client, CONFIGMAPS, NS)
    log = Log(informer)
    informer.start()
    await informer.wait_for_sync(10)
    await informer.stop()
    log.events.clear()
    # Changes happen while the informer is not watching.
    await client.patch(CONFIGMAPS, "change", {"data": {"v": "2"}}, NS)
    await client.delete(CONFIGMAPS, "drop", NS)
    await client.create(CONFIGMAPS, cm("new"))
    informer.start()
    state = await server_state(client)
    await until(lambda: len(log.events) >= 3)
    # Events arrive in order: once a later sentinel is seen, no stray event can still be coming.
    await client.create(CONFIGMAPS, cm("sentinel"))
    await until(lambda: informer.get("default/sentinel") is not None)
    assert sorted(e[:2] for e in log.events) == [
        ("add", "new"),
        ("add", "sentinel"),
        ("tombstone", "drop"),
        ("update", "change"),
    ]
    state = await server_state(client)
    assert {
        k.split("/")[1]: v["metadata"]["resourceVersion"] for k, v in informer.store.snapshot().items()
    } == state
    await informer.stop()


async def test_forced_410_relists_without_missing_or_phantom_events(client, emulator, monkeypatch):
    names = [f"cm-{i}" for i in range(6)]
    for name in names:
        await client.create(CONFIGMAPS, cm(name))
    # The informer gets its own client whose requests we can hold, to open a gap deterministically.
    informer_client = await Client.from_kubeconfig(emulator.kubeconfig, qps=1000, burst=1000)
    try:
        await _gap_then_410(client, emulator, informer_client, monkeypatch)
    finally:
        await informer_client.close()


async def _gap_then_410(client, emulator, informer_client, monkeypatch):
    gate = asyncio.Event()
    gate.set()
    acquire = informer_client.limiter.acquire

    async def gated_acquire():
        await gate.wait()
        await acquire()

    monkeypatch.setattr(informer_client.limiter, "acquire", gated_acquire)
    informer = SharedInformer(informer_client, CONFIGMAPS, NS, options=InformerOptions(backoff_initial=0.05))
    log = Log(informer)
    informer.start()
    await informer.wait_for_sync(10)
    # A live watch is proven by seeing an object created after the list.
    await client.create(CONFIGMAPS, cm("live"))
    await until(lambda: informer.get("default/live") is not None)
    synced_at = len(log.events)
    # Cut the watch and hold the reconnect; change things; compact history so resuming is 410.
    gate.clear()
    emulator.server.drop_watches()
    await client.patch(CONFIGMAPS, "cm-0", {"data": {"v": "2"}}, NS)
    await client.delete(CONFIGMAPS, "cm-1", NS)
    await client.create(CONFIGMAPS, cm("cm-new"))
    emulator.server.compact_watch_history()
    state = await server_state(client)
    gate.set()

    def cache_state():
        return {
            k.split("/")[1]: v["metadata"]["resourceVersion"] for k, v in informer.store.snapshot().items()
        }

    await until(lambda: cache_state() == state)
    assert informer.relists == 1
    # Events arrive in order: once a later object is seen, no stray event can still be coming.
    await client.create(CONFIGMAPS, cm("after"))
    await until(lambda: "after" in cache_state())
    later = log.events[synced_at:]
    touched = {"cm-0", "cm-1", "cm-new", "after"}
    assert not [e for e in later if e[1] not in touched], "phantom events for untouched objects"
    assert [e[0] for e in later if e[1] == "cm-1"] == ["tombstone"]
    assert [e[0] for e in later if e[1] == "cm-new"] == ["add"]
    assert [e[0] for e in later if e[1] == "cm-0"] == ["update"]
    assert [e[0] for e in later if e[1] == "after"] == ["add"]
    await informer.stop()


async def test_controller_reconciles_owner_of_changed_pods(client):
    rs = await client.create(
        REPLICASETS,
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "web", "namespace": NS},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                },
            },
        },
    )
    pods = SharedInformer(client, PODS, NS)
    seen: dict[str, int] = {}
    reconciled = asyncio.Event()

    async def reconcile(key):
        owner = await client.get(REPLICASETS, key.split("/")[1], NS)
        count = len(pods.by_index(OWNER_UID_INDEX, owner["metadata"]["uid"]))
        seen[key] = count
        await client.patch(
            REPLICASETS, "web", {"metadata": {"annotations": {"observed-pods": str(count)}}}, NS
        )
        if count == 2:
            reconciled.set()

    ctrl = Controller("it-owner", reconcile, workers=2)
    ctrl.watch(pods, enqueue_owner("ReplicaSet", "apps"))
    pods.start()
    await pods.wait_for_sync(10)
    ctrl.start()
    owner_ref = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "web",
        "uid": rs["metadata"]["uid"],
        "controller": True,
    }
    for i in range(2):
        await client.create(
            PODS,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"web-{i}", "namespace": NS, "ownerReferences": [owner_ref]},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        )
    await asyncio.wait_for(reconciled.wait(), 10)
    assert set(seen) == {"default/web"}
    got = await client.get(REPLICASETS, "web", NS)
    assert got["metadata"]["annotations"]["observed-pods"] == "2"
    await ctrl.stop()
    await pods.stop()


FAST = {"lease_duration": 1.0, "renew_deadline": 0.6, "retry_period": 0.1, "namespace": NS}


async def test_competing_electors_failover_within_one_lease(client):
    a = LeaderElector(client, LeaderElectionConfig(identity="a", release_on_cancel=False, **FAST))
    b = LeaderElector(client, LeaderElectionConfig(identity="b", **FAST))
    ta = asyncio.ensure_future(a.run())
    await asyncio.wait_for(a.started_leading.wait(), 10)
    tb = asyncio.ensure_future(b.run())
    await until(lambda: b.observed_holder == "a")  # b has tried, and found the lease held
    assert not b.is_leader()
    # "Kill" the leader: it stops renewing and does not release.
    ta.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ta
    killed = time.monotonic()
    await asyncio.wait_for(b.started_leading.wait(), 10)
    took = time.monotonic() - killed
    # Safety: b waits for the lease to expire, counted from the last renew it saw (at most one
    # renew interval plus one of its own polls before the kill) ...
    assert took >= FAST["lease_duration"] - FAST["retry_period"] * 3.2 - 0.1
    # ... and liveness: it does take over (the bounded wait above; how soon depends on the
    # machine's load, so it is not asserted as a time).
    lease = await client.get(LEASES, "kruise-manager", NS)
    assert lease["spec"]["holderIdentity"] == "b"
    assert lease["spec"]["leaseTransitions"] == 1
    assert lease["spec"]["renewTime"].endswith("Z") and len(lease["spec"]["renewTime"]) == 27
    tb.cancel()
    with pytest.raises(asyncio.CancelledError):
        await tb
    released = await client.get(LEASES, "kruise-manager", NS)
    assert not released["spec"].get("holderIdentity")
    assert released["spec"]["leaseDurationSeconds"] == 1


async def test_event_recorder_creates_then_counts(client):
    target = await client.create(CONFIGMAPS, cm("evented"))
    target = {**target, "kind": "ConfigMap", "apiVersion": "v1"}
    recorder = EventRecorder(client, "it-controller")
    recorder.event(target, "Normal", "Synced", "all good")
    recorder.event(target, "Normal", "Synced", "all good")
    await recorder.flush()
    events = await client.list(EVENTS, NS, field_selector="involvedObject.name=evented")
    [event] = events["items"]
    assert (
        event["count"] == 2
        and event["reason"] == "Synced"
        and event["source"]["component"] == "it-controller"
    )
    assert event["involvedObject"]["uid"] == target["metadata"]["uid"]
    await recorder.stop()


async def test_creates_in_a_terminating_namespace_get_the_lifecycle_403_and_the_recorder_stays_quiet(
    client,
):
    """kube-apiserver's NamespaceLifecycle plugin refuses creates in a Terminating namespace with a
    403 whose one cause is NamespaceTerminating (named before generateName is expanded); the event
    recorder treats that as client-go does: one try, no retry, nothing logged above debug."""
    await client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "going"}})
    held = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "held", "namespace": "going", "finalizers": ["example.com/hold"]},
    }
    await client.create(CONFIGMAPS, held)
    await client.delete(NAMESPACES, "going")
    await until(
        lambda: _phase(client, "going"),
        timeout=10.0,
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "web-", "namespace": "going"},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }
    with pytest.raises(errors.Forbidden) as refused:
        await client.create(PODS, pod)
    exc = refused.value
    assert exc.code == 403 and errors.is_namespace_terminating(exc)
    assert exc.message == (
        'pods "web-" is forbidden: unable to create new content in namespace going '
        "because it is being terminated"
    )
    assert exc.details == {
        "name": "web-",
        "group": "",
        "kind": "pods",
        "causes": [
            {
                "reason": "NamespaceTerminating",
                "message": "namespace going is being terminated",
                "field": "metadata.namespace",
            }
        ],
    }
    target = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "going", "uid": "u"},
    }
    recorder = EventRecorder(client, "it-controller")
    with structlog.testing.capture_logs() as logged:
        recorder.event(target, "Warning", "FailedCreate", "Error creating: forbidden")
        await asyncio.wait_for(recorder.flush(), 10)
    await recorder.stop()
    assert [e for e in logged if e["log_level"] in ("warning", "error")] == []
    # Release the namespace so nothing lingers.
    await client.patch(CONFIGMAPS, "held", {"metadata": {"finalizers": None}}, "going")


async def _phase(client, name: str) -> bool:
    ns = await client.get(NAMESPACES, name)
    return (ns.get("status") or {}).get("phase") == "Terminating"
