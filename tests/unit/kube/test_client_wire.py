"""The client's HTTP wire format, checked against a scripted aiohttp server on 127.0.0.1."""

import asyncio
import gc

import orjson
import pytest
import yaml
from aiohttp import web

from kruise.kube import errors
from kruise.kube.client import Client, PatchType, ServerVersion
from kruise.kube.resources import LEASES, PODS, ResourceRef
from tests.kit.fakeserver import served

CLONESETS = ResourceRef("apps.kruise.io", "v1alpha1", "clonesets", True, "CloneSet")


class Wire:
    def __init__(self):
        self.requests = []
        self.responses = []  # (status, body-bytes-or-dict) or a coroutine fn(request)

    async def handle(self, request: web.Request):
        body = await request.read()
        self.requests.append(
            {
                "method": request.method,
                "path": request.path,
                "query": list(request.query.items()),
                "ctype": request.headers.get("Content-Type"),
                "auth": request.headers.get("Authorization"),
                "ua": request.headers.get("User-Agent"),
                "body": orjson.loads(body) if body else None,
            }
        )
        answer = self.responses.pop(0) if self.responses else (200, {})
        if callable(answer):
            return await answer(request)
        status, payload = answer
        data = payload if isinstance(payload, bytes) else orjson.dumps(payload)
        return web.Response(status=status, body=data, content_type="application/json")


@pytest.fixture
async def wire(tmp_path):
    w = Wire()
    async with served(w.handle, tmp_path, token="secret-token") as kubeconfig:
        client = await Client.from_kubeconfig(kubeconfig, user_agent="kruise-manager/test", request_timeout=5)
        w.client = client
        yield w
        for release in RELEASE:
            release.set()
        RELEASE.clear()
        await client.close()


async def test_get_list_and_headers(wire):
    wire.responses = [(200, {"kind": "Pod", "metadata": {"name": "p"}}), (200, {"items": [], "metadata": {}})]
    pod = await wire.client.get(PODS, "p", "ns")
    assert pod["metadata"]["name"] == "p"
    await wire.client.list(
        PODS, "ns", label_selector={"app": "web", "tier": "fe"}, field_selector="spec.nodeName=n1", limit=5
    )
    first, second = wire.requests
    assert first["path"] == "/api/v1/namespaces/ns/pods/p" and first["auth"] == "Bearer secret-token"
    assert first["ua"] == "kruise-manager/test"
    assert second["query"] == [
        ("labelSelector", "app=web,tier=fe"),
        ("fieldSelector", "spec.nodeName=n1"),
        ("limit", "5"),
    ]


async def test_server_version_reads_the_version_endpoint(wire):
    wire.responses = [(200, {"major": "1", "minor": "31+", "gitVersion": "v1.31.4-gke.1200"})]
    version = await wire.client.server_version()
    assert version == ServerVersion(git_version="v1.31.4-gke.1200", major="1", minor="31+")
    assert [(r["method"], r["path"], r["query"]) for r in wire.requests] == [("GET", "/version", [])]


async def test_server_version_failure_is_typed(wire):
    wire.responses = [(403, {"kind": "Status", "reason": "Forbidden", "code": 403, "message": "no"})]
    with pytest.raises(errors.Forbidden):
        await wire.client.server_version()


async def test_list_all_follows_continue(wire):
    wire.responses = [
        (
            200,
            {
                "items": [{"metadata": {"name": "a"}}],
                "metadata": {"continue": "tok", "resourceVersion": "10"},
            },
        ),
        (200, {"items": [{"metadata": {"name": "b"}}], "metadata": {"resourceVersion": "10"}}),
    ]
    items, rv = await wire.client.list_all(PODS, page_size=1)
    assert [i["metadata"]["name"] for i in items] == ["a", "b"] and rv == "10"
    assert ("continue", "tok") in wire.requests[1]["query"]


async def test_list_all_maps_each_page_as_it_arrives(wire):
    """`each` has mapped the first page before the second is requested (an informer projects a page
    of pods and drops the full objects before reading the next)."""
    wire.responses = [
        (
            200,
            {"items": [{"metadata": {"name": "a"}}], "metadata": {"continue": "tok", "resourceVersion": "7"}},
        ),
        (200, {"items": [{"metadata": {"name": "b"}}], "metadata": {"resourceVersion": "7"}}),
    ]
    mapped_before_request: list[int] = []

    def each(obj: dict) -> dict:
        mapped_before_request.append(len(wire.requests))
        return {"name": obj["metadata"]["name"]}

    items, rv = await wire.client.list_all(PODS, page_size=1, each=each)
    assert items == [{"name": "a"}, {"name": "b"}] and rv == "7"
    assert mapped_before_request == [1, 2]


async def test_list_all_maps_pages_with_the_collector_paused_and_resumes_it(wire):
    """kruise.kube.gcpause: no collection while a page is decoded and projected."""
    enabled = gc.isenabled()
    gc.enable()
    wire.responses = [
        (
            200,
            {"items": [{"metadata": {"name": "a"}}], "metadata": {"continue": "t", "resourceVersion": "3"}},
        ),
        (200, {"items": [{"metadata": {"name": "b"}}], "metadata": {"resourceVersion": "3"}}),
    ]
    seen: list[bool] = []

    def each(obj: dict) -> str:
        seen.append(gc.isenabled())
        return obj["metadata"]["name"]

    try:
        items, rv = await wire.client.list_all(PODS, page_size=1, each=each)
        assert (items, rv, seen) == (["a", "b"], "3", [False, False])
        assert gc.isenabled()
    finally:
        (gc.enable if enabled else gc.disable)()


@pytest.mark.parametrize(
    ("ptype", "patch", "ctype"),
    [
        (PatchType.MERGE, {"spec": {"replicas": 3}}, "application/merge-patch+json"),
        (
            PatchType.JSON,
            [{"op": "replace", "path": "/spec/replicas", "value": 3}],
            "application/json-patch+json",
        ),
        (PatchType.STRATEGIC, {"spec": {"replicas": 3}}, "application/strategic-merge-patch+json"),
    ],
)
async def test_patch_content_types(wire, ptype, patch, ctype):
    await wire.client.patch(CLONESETS, "cs", patch, "ns", patch_type=ptype)
    req = wire.requests[0]
    assert (req["method"], req["ctype"], req["body"]) == ("PATCH", ctype, patch)
    assert req["path"] == "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs"


async def test_server_side_apply_and_dry_run(wire):
    await wire.client.patch(
        CLONESETS,
        "cs",
        {"apiVersion": "apps.kruise.io/v1alpha1"},
        "ns",
        patch_type=PatchType.APPLY,
        field_manager="kruise",
        force=True,
        dry_run=True,
    )
    req = wire.requests[0]
    assert req["ctype"] == "application/apply-patch+yaml"
    assert req["query"] == [("dryRun", "All"), ("fieldManager", "kruise"), ("force", "true")]
    with pytest.raises(ValueError, match="fieldManager: Required value"):
        await wire.client.patch(CLONESETS, "cs", {}, "ns", patch_type=PatchType.APPLY)
    with pytest.raises(ValueError, match="force: Forbidden"):
        await wire.client.patch(CLONESETS, "cs", {}, "ns", force=True)
    with pytest.raises(ValueError, match="must be a list"):
        await wire.client.patch(CLONESETS, "cs", {}, "ns", patch_type=PatchType.JSON)


async def test_create_update_status_delete_subresources(wire):
    body = {"metadata": {"name": "l", "namespace": "kruise-system", "resourceVersion": "3"}, "spec": {}}
    await wire.client.create(LEASES, body)
    await wire.client.update(LEASES, body)
    await wire.client.update_status(CLONESETS, {"metadata": {"name": "cs", "namespace": "ns"}, "status": {}})
    await wire.client.delete(
        PODS,
        "p",
        "ns",
        propagation_policy="Foreground",
        uid="u1",
        resource_version="9",
        grace_period_seconds=0,
    )
    await wire.client.evict("p", "ns")
    await wire.client.bind("p", "ns", "node-1")
    await wire.client.scale(CLONESETS, "cs", "ns", 4)
    methods_paths = [(r["method"], r["path"]) for r in wire.requests]
    assert methods_paths == [
        ("POST", "/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases"),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/l"),
        ("PUT", "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/status"),
        ("DELETE", "/api/v1/namespaces/ns/pods/p"),
        ("POST", "/api/v1/namespaces/ns/pods/p/eviction"),
        ("POST", "/api/v1/namespaces/ns/pods/p/binding"),
        ("PATCH", "/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets/cs/scale"),
    ]
    assert wire.requests[3]["body"] == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Foreground",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "u1", "resourceVersion": "9"},
    }
    assert wire.requests[4]["body"]["kind"] == "Eviction"
    assert wire.requests[5]["body"]["target"] == {"apiVersion": "v1", "kind": "Node", "name": "node-1"}
    with pytest.raises(ValueError, match=r"metadata\.namespace: Required value"):
        await wire.client.create(PODS, {"metadata": {"name": "p"}})
    with pytest.raises(ValueError, match=r"metadata\.namespace: Required value"):
        await wire.client.update(PODS, {"metadata": {"name": "p"}})
    with pytest.raises(ValueError, match="propagationPolicy: Unsupported value"):
        await wire.client.delete(PODS, "p", "ns", propagation_policy="Sometimes")


async def test_errors_are_typed(wire):
    wire.responses = [
        (404, {"kind": "Status", "reason": "NotFound", "code": 404, "message": 'pods "p" not found'}),
        (
            429,
            {
                "kind": "Status",
                "reason": "TooManyRequests",
                "code": 429,
                "message": "Cannot evict pod",
                "details": {"retryAfterSeconds": 2},
            },
        ),
        (502, b"bad gateway"),
    ]
    with pytest.raises(errors.NotFound, match='pods "p" not found'):
        await wire.client.get(PODS, "p", "ns")
    with pytest.raises(errors.TooManyRequests) as caught:
        await wire.client.evict("p", "ns")
    assert caught.value.retry_after == 2
    with pytest.raises(errors.ApiError) as caught:
        await wire.client.get(PODS, "p", "ns")
    assert caught.value.code == 502 and caught.value.message == "bad gateway"


RELEASE: list[asyncio.Event] = []


async def stream(request, lines, hold=False):
    resp = web.StreamResponse(headers={"Content-Type": "application/json"})
    await resp.prepare(request)
    for line in lines:
        await resp.write(orjson.dumps(line) + b"\n")
    if hold:
        release = asyncio.Event()
        RELEASE.append(release)
        await release.wait()
    return resp


async def test_watch_yields_events_and_raises_gone(wire):
    events = [
        {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "5"}}},
        {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}},
        {
            "type": "ERROR",
            "object": {
                "kind": "Status",
                "code": 410,
                "reason": "Expired",
                "message": "too old resource version: 1 (5)",
            },
        },
    ]
    wire.responses = [lambda r: stream(r, events)]
    seen = []
    with pytest.raises(errors.Gone, match="too old"):
        async for ev in wire.client.watch(PODS, "ns", resource_version="1", timeout_seconds=60):
            seen.append((ev.type, ev.object["metadata"]["resourceVersion"]))
    assert seen == [("ADDED", "5"), ("BOOKMARK", "9")]
    query = dict(wire.requests[0]["query"])
    assert query == {
        "watch": "true",
        "timeoutSeconds": "60",
        "allowWatchBookmarks": "true",
        "resourceVersion": "1",
    }


async def test_silent_watch_ends_at_read_timeout_instead_of_hanging(wire):
    wire.responses = [
        lambda r: stream(r, [{"type": "ADDED", "object": {"metadata": {"name": "a"}}}], hold=True)
    ]
    seen = []
    async with asyncio.timeout(10):
        async for ev in wire.client.watch(PODS, timeout_seconds=300, read_timeout=0.3):
            seen.append(ev.type)
    assert seen == ["ADDED"]


async def test_connection_refused_is_transport_error(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    async with await Client.from_kubeconfig(kubeconfig) as client:
        with pytest.raises(errors.TransportError):
            await client.get(PODS, "p", "ns")


async def test_requests_are_counted_by_code_and_method(wire):
    from kruise.kube.metrics import REST_CLIENT_REQUESTS

    def count(code, method):
        return REST_CLIENT_REQUESTS.labels(code, method, wire.client.host)._value.get()

    ok, missing = count("200", "GET"), count("404", "GET")
    wire.responses = [(200, {"metadata": {}}), (404, {"kind": "Status", "code": 404, "reason": "NotFound"})]
    await wire.client.get(PODS, "p", "ns")
    with pytest.raises(errors.NotFound):
        await wire.client.get(PODS, "q", "ns")
    assert count("200", "GET") == ok + 1 and count("404", "GET") == missing + 1


async def test_list_all_gives_other_tasks_turns_while_mapping_a_page(wire):
    """Projecting a page of 500 pods is a quarter second of synchronous work: other tasks on the loop (a
    lease renewal) run between slices of it, and the items still come out whole and in order."""
    names = [f"p{i:03d}" for i in range(250)]
    wire.responses = [
        (200, {"items": [{"metadata": {"name": n}} for n in names], "metadata": {"resourceVersion": "3"}})
    ]
    turns = 0

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    seen: list[int] = []

    def each(obj: dict) -> str:
        seen.append(turns)
        return obj["metadata"]["name"]

    task = asyncio.create_task(other())
    try:
        items, _ = await wire.client.list_all(PODS, each=each)
    finally:
        task.cancel()
    assert items == names
    assert seen[0] < seen[-1]
