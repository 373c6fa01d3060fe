"""API semantics through kubernetes-asyncio and raw HTTP: concurrency, watch resume and 410,
bookmarks, pagination, subresources, deletion propagation and fault injection."""

from __future__ import annotations

import asyncio
import json
import ssl

import httpx
import pytest
from kubernetes_asyncio import client, config, watch
from kubernetes_asyncio.client.exceptions import ApiException

from kruise.sandbox.apiserver.listpages import ListSnapshots

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture
async def api(emulator):
    cfg = client.Configuration()
    await config.load_kube_config(config_file=str(emulator.kubeconfig), client_configuration=cfg)
    async with client.ApiClient(cfg) as api_client:
        yield api_client


def cm(name, **data):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def until(predicate, timeout=10.0):
    """Poll a server-side condition (GC runs asynchronously, like the real controller) with a deadline."""
    async with asyncio.timeout(timeout):
        while True:
            if await predicate():
                return
            await asyncio.sleep(0.02)


async def test_crud_conflicts_and_status_bodies(api):
    core = client.CoreV1Api(api)
    created = await core.create_namespaced_config_map("default", cm("a", x="1"))
    assert created.metadata.uid and created.metadata.resource_version
    with pytest.raises(ApiException) as exc:
        await core.create_namespaced_config_map("default", cm("a"))
    assert exc.value.status == 409 and '"reason":"AlreadyExists"' in exc.value.body.replace(" ", "")
    stale = cm("a", x="2")
    stale["metadata"]["resourceVersion"] = "1"
    with pytest.raises(ApiException) as exc:
        await core.replace_namespaced_config_map("a", "default", stale)
    assert exc.value.status == 409
    assert "the object has been modified; please apply your changes to the latest version" in exc.value.body
    with pytest.raises(ApiException) as exc:
        await core.read_namespaced_config_map("nope", "default")
    assert exc.value.status == 404 and 'configmaps \\"nope\\" not found' in exc.value.body
    with pytest.raises(ApiException) as exc:
        await core.create_namespaced_config_map("missing-ns", cm("b"))
    assert exc.value.status == 404 and 'namespaces \\"missing-ns\\" not found' in exc.value.body
    gen = await core.create_namespaced_config_map("default", {"metadata": {"generateName": "gen-"}})
    assert gen.metadata.name.startswith("gen-") and len(gen.metadata.name) == 9
    dry = await core.create_namespaced_config_map("default", cm("dry"), dry_run="All")
    assert dry.metadata.name == "dry"
    with pytest.raises(ApiException):
        await core.read_namespaced_config_map("dry", "default")


async def test_watch_resume_bookmark_and_410_relist(api, emulator):
    core = client.CoreV1Api(api)
    listed = await core.list_namespaced_config_map("default")
    rv = listed.metadata.resource_version
    await core.create_namespaced_config_map("default", cm("w1"))
    await core.patch_namespaced_config_map("w1", "default", {"data": {"k": "v"}})
    seen = []
    async with watch.Watch() as w:
        async for event in w.stream(
            core.list_namespaced_config_map,
            "default",
            resource_version=rv,
            timeout_seconds=1,
            allow_watch_bookmarks=True,
        ):
            seen.append((event["type"], event["raw_object"]["metadata"].get("name")))
    assert seen[:2] == [("ADDED", "w1"), ("MODIFIED", "w1")]
    assert seen[-1][0] == "BOOKMARK"
    emulator.server.compact_watch_history()
    await core.create_namespaced_config_map("default", cm("w2"))
    with pytest.raises(ApiException) as exc:
        async with watch.Watch() as w:
            async for _ in w.stream(
                core.list_namespaced_config_map, "default", resource_version=rv, timeout_seconds=1
            ):
                pass
    assert exc.value.status == 410
    relisted = await core.list_namespaced_config_map("default")
    assert {i.metadata.name for i in relisted.items} >= {"w1", "w2"}


async def test_watch_label_transitions_and_drop(api, emulator):
    core = client.CoreV1Api(api)
    await core.create_namespaced_config_map("default", cm("t"))
    events = []

    async def consume():
        async with watch.Watch() as w:
            async for event in w.stream(
                core.list_namespaced_config_map, "default", label_selector="sel=yes", timeout_seconds=5
            ):
                events.append(event["type"])
                if len(events) == 2:
                    emulator.server.drop_watches()

    task = asyncio.create_task(consume())
    await until(lambda: _watching(emulator))
    await core.patch_namespaced_config_map("t", "default", {"metadata": {"labels": {"sel": "yes"}}})
    await core.patch_namespaced_config_map("t", "default", {"metadata": {"labels": {"sel": "no"}}})
    await asyncio.wait_for(task, 10)
    assert events == ["ADDED", "DELETED"]


async def _watching(emulator) -> bool:
    return bool(emulator.server._watch_responses)


def raw_client(emulator) -> httpx.AsyncClient:
    ctx = ssl.create_default_context(cadata=emulator.server.ca_pem.decode())
    return httpx.AsyncClient(
        base_url=emulator.url, verify=ctx, headers={"Authorization": f"Bearer {emulator.server.token}"}
    )


async def test_pagination_and_table(api, emulator):
    core = client.CoreV1Api(api)
    for i in range(5):
        await core.create_namespaced_config_map("default", cm(f"p{i}"))
    names, token = [], None
    while True:
        page = await core.list_namespaced_config_map("default", limit=2, _continue=token)
        names += [i.metadata.name for i in page.items]
        token = page.metadata._continue
        if not token:
            break
    # every namespace also holds kube-controller-manager's kube-root-ca.crt, listed in name order
    assert names == ["kube-root-ca.crt", *[f"p{i}" for i in range(5)]]
    async with raw_client(emulator) as http:
        table = (await http.get("/api/v1/namespaces/default/configmaps", headers={"Accept": TABLE})).json()
        smp = await http.patch(
            "/api/v1/namespaces/default/configmaps/p0",
            content=b"{}",
            headers={"Content-Type": "application/xml"},
        )
        assert smp.status_code == 415 and smp.json()["reason"] == "UnsupportedMediaType"
        unauth = await http.get("/api/v1/namespaces", headers={"Authorization": "Bearer wrong"})
        assert unauth.status_code == 401
    assert table["kind"] == "Table" and [c["name"] for c in table["columnDefinitions"]] == [
        "Name",
        "Data",
        "Age",
    ]


async def test_later_pages_are_the_first_pages_snapshot(api, emulator):
    """As kube-apiserver serves a continue token from etcd at the list's revision: an object written
    after the first page shows in a later page as it was, a new one not at all, and the token keeps the
    list's resourceVersion."""
    core = client.CoreV1Api(api)
    for i in range(4):
        await core.create_namespaced_config_map("default", cm(f"s{i}", v="old"))
    first = await core.list_namespaced_config_map("default", limit=2)
    assert [i.metadata.name for i in first.items] == ["kube-root-ca.crt", "s0"]
    await core.patch_namespaced_config_map("s2", "default", {"data": {"v": "new"}})
    await core.create_namespaced_config_map("default", cm("s1a"))
    await core.delete_namespaced_config_map("s3", "default")
    rest = await core.list_namespaced_config_map("default", _continue=first.metadata._continue)
    assert [(i.metadata.name, i.data["v"]) for i in rest.items] == [
        ("s1", "old"),
        ("s2", "old"),
        ("s3", "old"),
    ]
    assert rest.metadata.resource_version == first.metadata.resource_version and not rest.metadata._continue
    now = await core.list_namespaced_config_map("default")
    assert [i.metadata.name for i in now.items] == ["kube-root-ca.crt", "s0", "s1", "s1a", "s2"]


async def test_a_token_whose_snapshot_is_gone_resumes_from_its_key(api, emulator):
    """An evicted snapshot (or an emulator restarted under the client) falls back to the live store
    after the token's key, with the same selectors."""
    core = client.CoreV1Api(api)
    for i in range(5):
        body = cm(f"k{i}")
        body["metadata"]["labels"] = {"pick": "yes" if i % 2 == 0 else "no"}
        await core.create_namespaced_config_map("default", body)
    first = await core.list_namespaced_config_map("default", label_selector="pick=yes", limit=1)
    assert [i.metadata.name for i in first.items] == ["k0"]
    emulator.server.list_snapshots = ListSnapshots()
    names, token = [], first.metadata._continue
    while token:
        page = await core.list_namespaced_config_map(
            "default", label_selector="pick=yes", limit=1, _continue=token
        )
        names += [i.metadata.name for i in page.items]
        token = page.metadata._continue
        assert page.metadata.resource_version == first.metadata.resource_version
    assert names == ["k2", "k4"]
    assert page.metadata.remaining_item_count is None


async def test_fault_injection_returns_status(api, emulator):
    core = client.CoreV1Api(api)
    emulator.server.fail_next(2, 429)
    for _ in range(2):
        with pytest.raises(ApiException) as exc:
            await core.list_namespaced_config_map("default")
        assert exc.value.status == 429 and exc.value.headers["Retry-After"] == "1"
    await core.list_namespaced_config_map("default")


async def test_scale_binding_eviction_and_graceful_pod_delete(api):
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    deploy = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    await apps.create_namespaced_deployment("default", deploy)
    scale = await apps.read_namespaced_deployment_scale("d", "default")
    assert scale.spec.replicas == 1 and scale.status.selector == "a=b"
    await apps.patch_namespaced_deployment_scale("d", "default", {"spec": {"replicas": 3}})
    assert (await apps.read_namespaced_deployment("d", "default")).metadata.generation == 2
    pod = {
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "x:1"}]},
    }
    await core.create_namespaced_pod("default", pod)
    # Binding and eviction answer with a Status, as real; the generated models cannot parse it.
    binding = {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    resp = await core.create_namespaced_binding("default", binding, _preload_content=False)
    assert resp.status == 201
    bound = await core.read_namespaced_pod("p", "default")
    assert bound.spec.node_name == "n1"
    await core.create_namespaced_pod_eviction(
        "p", "default", {"metadata": {"name": "p"}}, _preload_content=False
    )
    terminating = await core.read_namespaced_pod("p", "default")
    assert (
        terminating.metadata.deletion_timestamp and terminating.metadata.deletion_grace_period_seconds == 30
    )
    await core.delete_namespaced_pod("p", "default", grace_period_seconds=0)
    with pytest.raises(ApiException):
        await core.read_namespaced_pod("p", "default")


async def test_owner_gc_foreground_and_orphan(api):
    core = client.CoreV1Api(api)
    owner = await core.create_namespaced_config_map("default", cm("owner"))
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner.metadata.uid,
        "blockOwnerDeletion": True,
    }
    for name in ("dep1", "dep2"):
        body = cm(name)
        body["metadata"]["ownerReferences"] = [ref]
        await core.create_namespaced_config_map("default", body)
    await core.delete_namespaced_config_map("owner", "default", propagation_policy="Orphan")

    async def names():
        return {i.metadata.name for i in (await core.list_namespaced_config_map("default")).items}

    await until(lambda: _gone(names, "owner"))
    dep = await core.read_namespaced_config_map("dep1", "default")
    assert not dep.metadata.owner_references
    owner2 = await core.create_namespaced_config_map("default", cm("owner2"))
    ref2 = {**ref, "name": "owner2", "uid": owner2.metadata.uid}
    await core.patch_namespaced_config_map("dep1", "default", {"metadata": {"ownerReferences": [ref2]}})
    resp = await core.delete_namespaced_config_map(
        "owner2", "default", propagation_policy="Foreground", _preload_content=False
    )
    marked = await resp.json()
    assert (
        marked["metadata"]["finalizers"] == ["foregroundDeletion"] and marked["metadata"]["deletionTimestamp"]
    )
    await until(lambda: _gone(names, "owner2", "dep1"))
    body = cm("dep3")
    owner3 = await core.create_namespaced_config_map("default", cm("owner3"))
    body["metadata"]["ownerReferences"] = [{**ref, "name": "owner3", "uid": owner3.metadata.uid}]
    await core.create_namespaced_config_map("default", body)
    await core.delete_namespaced_config_map("owner3", "default")
    await until(lambda: _gone(names, "owner3", "dep3"))
    assert "dep2" in await names()


async def test_gc_collects_a_dependent_whose_owner_is_already_gone(api):
    """An owner reference written after its owner was deleted (a controller re-owning a PVC to a pod
    that finished terminating meanwhile) dangles: kube's GC deletes the dependent when no owner of it
    remains, and only drops the dangling reference when another owner is alive."""
    core = client.CoreV1Api(api)
    gone = await core.create_namespaced_config_map("default", cm("gone-owner"))
    alive = await core.create_namespaced_config_map("default", cm("alive-owner"))
    for name in ("orphaned", "half-owned"):
        await core.create_namespaced_config_map("default", cm(name))
    await core.delete_namespaced_config_map("gone-owner", "default")

    async def names():
        return {i.metadata.name for i in (await core.list_namespaced_config_map("default")).items}

    await until(lambda: _gone(names, "gone-owner"))
    dangling = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone-owner", "uid": gone.metadata.uid}
    solid = {"apiVersion": "v1", "kind": "ConfigMap", "name": "alive-owner", "uid": alive.metadata.uid}
    unserved = {"apiVersion": "example.com/v1", "kind": "Batch", "name": "b", "uid": "u-unserved"}
    await core.create_namespaced_config_map(
        "default",
        {**cm("unserved-owned"), "metadata": {"name": "unserved-owned", "ownerReferences": [unserved]}},
    )
    await core.patch_namespaced_config_map(
        "orphaned", "default", {"metadata": {"ownerReferences": [dangling]}}
    )
    await core.patch_namespaced_config_map(
        "half-owned", "default", {"metadata": {"ownerReferences": [dangling, solid]}}
    )
    await until(lambda: _gone(names, "orphaned"))

    async def dangling_dropped() -> bool:
        dep = await core.read_namespaced_config_map("half-owned", "default")
        return [r.uid for r in dep.metadata.owner_references or []] == [alive.metadata.uid]

    await until(dangling_dropped)
    # an owner of a kind nobody serves cannot be looked up: kube's GC leaves its dependent alone
    assert "unserved-owned" in await names()


async def _gone(names, *which) -> bool:
    return not (set(which) & await names())


async def test_generation_status_split_preconditions_and_deletecollection(api, emulator):
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    deploy = {
        "metadata": {"name": "g"},
        "spec": {
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
        "status": {"replicas": 7},
    }
    created = await apps.create_namespaced_deployment("default", deploy)
    assert created.metadata.generation == 1 and not (created.status and created.status.replicas)
    labelled = await apps.patch_namespaced_deployment(
        "g", "default", {"metadata": {"labels": {"x": "y"}}, "status": {"replicas": 9}}
    )
    assert labelled.metadata.generation == 1 and not (labelled.status and labelled.status.replicas)
    status = await apps.patch_namespaced_deployment_status(
        "g", "default", {"status": {"replicas": 2}, "spec": {"replicas": 5}}
    )
    assert status.status.replicas == 2 and status.spec.replicas == 1
    smp = await apps.patch_namespaced_deployment(
        "g",
        "default",
        {"spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}},
    )
    assert [c.name for c in smp.spec.template.spec.containers] == [
        "c",
        "side",
    ] and smp.metadata.generation == 2
    for name in ("k1", "k2", "other"):
        body = cm(name)
        body["metadata"]["labels"] = {"kill": "yes" if name != "other" else "no"}
        await core.create_namespaced_config_map("default", body)
    k1 = await core.read_namespaced_config_map("k1", "default")
    with pytest.raises(ApiException) as exc:
        await core.delete_namespaced_config_map("k1", "default", body={"preconditions": {"uid": "wrong"}})
    # rest.BeforeDelete's text, which names the kind, not the resource
    assert exc.value.status == 409 and json.loads(exc.value.body)["message"] == (
        'Operation cannot be fulfilled on ConfigMap "k1": the UID in the precondition (wrong) does not match '
        f"the UID in record ({k1.metadata.uid}). The object might have been deleted and then recreated"
    )
    with pytest.raises(ApiException) as exc:
        await core.delete_namespaced_config_map(
            "k1", "default", body={"preconditions": {"resourceVersion": "1"}}
        )
    assert exc.value.status == 409
    await core.delete_namespaced_config_map("k1", "default", body={"preconditions": {"uid": k1.metadata.uid}})
    await core.delete_collection_namespaced_config_map("default", label_selector="kill=yes")
    left = {i.metadata.name for i in (await core.list_namespaced_config_map("default")).items}
    assert "other" in left and not left & {"k1", "k2"}
