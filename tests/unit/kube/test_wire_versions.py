"""Talking storage versions on the wire (`kruise.kube.wire`): the client against a server that stores the
seven kinds of API set 1.9 at v1beta1 and cannot convert (every v1alpha1 request of them fails), so a
request that would need `/convert` shows up as a failure here.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kruise.api.apisets import API_SET_1_9, API_SET_2_0, kinds
from kruise.api.conversion import convert
from kruise.api.crdgen import build_crd
from kruise.kube import errors
from kruise.kube.client import Client, PatchType
from kruise.kube.resources import (
    ADVANCED_CRONJOBS,
    ADVANCED_DAEMONSETS,
    ADVANCED_STATEFULSETS,
    BROADCASTJOBS,
    CLONESETS,
    EPHEMERALJOBS,
    IMAGELISTPULLJOBS,
    IMAGEPULLJOBS,
    NODEIMAGES,
    SIDECARSETS,
    ResourceRef,
)
from kruise.kube.wire import WireVersions, from_wire, to_wire
from kruise.kube.wirepatch import merge_patch
from tests.kit.fakeserver import served
from tests.unit.api.conftest import load_seed_objects
from tests.unit.api.test_conversion_roundtrip import objects

SEVEN = (
    ADVANCED_DAEMONSETS,
    SIDECARSETS,
    BROADCASTJOBS,
    ADVANCED_CRONJOBS,
    IMAGEPULLJOBS,
    IMAGELISTPULLJOBS,
    NODEIMAGES,
)
TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [{"name": "m", "image": "nginx"}]}}
PULL = {"image": "nginx:1.25", "parallelism": 2, "completionPolicy": {"type": "Always"}}


def _meta(ref: ResourceRef, name: str, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, **extra}
    if ref.namespaced:
        meta["namespace"] = "ns"
    return meta


def sample(ref: ResourceRef) -> dict[str, Any]:
    """A v1alpha1 object of each kind, with the fields its conversion moves."""
    head = {"apiVersion": ref.api_version, "kind": ref.kind}
    if ref is ADVANCED_DAEMONSETS:
        annotations = {"daemonset.kruise.io/progressive-create-pod": "true", "note": "x"}
        return head | {
            "metadata": _meta(ref, "ads", annotations=annotations),
            "spec": {
                "selector": {"matchLabels": {"app": "a"}},
                "template": TEMPLATE,
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"rollingUpdateType": "Surging"},
                },
            },
            "status": {"daemonSetHash": "abc", "numberReady": 1},
        }
    if ref is SIDECARSETS:
        labels = {"apps.kruise.io/sidecarset-custom-version": "v2"}
        return head | {
            "metadata": _meta(ref, "sc", labels=labels),
            "spec": {
                "namespace": "team-a",
                "selector": {"matchLabels": {"app": "a"}},
                "containers": [{"name": "side", "image": "busybox"}],
            },
        }
    if ref is BROADCASTJOBS:
        return head | {
            "metadata": _meta(ref, "bcj"),
            "spec": {"template": TEMPLATE, "completionPolicy": {"type": "Always"}},
        }
    if ref is ADVANCED_CRONJOBS:
        return head | {
            "metadata": _meta(ref, "acj"),
            "spec": {
                "schedule": "*/1 * * * *",
                "template": {"broadcastJobTemplate": {"spec": {"template": TEMPLATE}}},
            },
        }
    if ref is IMAGEPULLJOBS:
        return head | {"metadata": _meta(ref, "ipj"), "spec": PULL}
    if ref is IMAGELISTPULLJOBS:
        spec = {**PULL, "images": ["nginx:1.25", "busybox:1.36"]}
        del spec["image"]
        return head | {"metadata": _meta(ref, "ilpj"), "spec": spec}
    assert ref is NODEIMAGES
    return head | {
        "metadata": _meta(ref, "node-1"),
        "spec": {"images": {"nginx": {"tags": [{"tag": "1.25", "version": 1}]}}},
    }


def crds(api_set: str) -> list[dict[str, Any]]:
    return [build_crd(info) for info in kinds(api_set)]


# ---- which version to talk ---------------------------------------------------------------------


def test_on_1_9_the_seven_kinds_are_talked_at_v1beta1() -> None:
    wire = WireVersions.from_crds(crds(API_SET_1_9))
    for ref in SEVEN:
        assert wire.wire_ref(ref) == ResourceRef(ref.group, "v1beta1", ref.plural, ref.namespaced, ref.kind)
    # code already talks storage for these, and EphemeralJob has one version only
    assert wire.wire_ref(CLONESETS) is None
    assert wire.wire_ref(ADVANCED_STATEFULSETS) is None
    assert wire.wire_ref(EPHEMERALJOBS) is None


def test_on_2_0_every_kind_is_talked_at_code_version() -> None:
    wire = WireVersions.from_crds(crds(API_SET_2_0))
    for ref in (*SEVEN, CLONESETS, ADVANCED_STATEFULSETS, EPHEMERALJOBS):
        assert wire.wire_ref(ref) is None


def test_an_unserved_storage_version_is_not_talked() -> None:
    crd = next(c for c in crds(API_SET_1_9) if c["metadata"]["name"] == "daemonsets.apps.kruise.io")
    for version in crd["spec"]["versions"]:
        if version["storage"]:
            version["served"] = False
    assert WireVersions.from_crds([crd]).wire_ref(ADVANCED_DAEMONSETS) is None


# ---- pure conversion at the boundary -----------------------------------------------------------


@pytest.mark.parametrize("ref", SEVEN, ids=lambda r: r.kind)
def test_samples_round_trip_through_the_wire_version(ref: ResourceRef) -> None:
    wire = WireVersions.from_crds(crds(API_SET_1_9)).wire_ref(ref)
    assert wire is not None
    seeds = [o for o in load_seed_objects() if o["kind"] == ref.kind and o["apiVersion"] == ref.api_version]
    for obj in [sample(ref), *seeds]:
        sent = to_wire(obj, wire)
        assert sent["apiVersion"] == "apps.kruise.io/v1beta1"
        assert from_wire(sent, wire, ref) == obj


@pytest.mark.parametrize("ref", SEVEN, ids=lambda r: r.kind)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_objects_round_trip_both_ways(ref: ResourceRef, data: st.DataObject) -> None:
    """Code's objects survive the way out and back; and a stored object read and written back unchanged
    (a controller's read-modify-write of other fields) reaches storage exactly as it was."""
    wire = ResourceRef(ref.group, "v1beta1", ref.plural, ref.namespaced, ref.kind)
    alpha = data.draw(objects(ref.kind, "v1alpha1"))
    assert from_wire(to_wire(alpha, wire), wire, ref) == alpha
    stored = data.draw(objects(ref.kind, "v1beta1"))
    assert to_wire(from_wire(stored, wire, ref), wire) == stored


def test_list_items_without_apiversion_are_converted_as_the_wire_kind() -> None:
    wire = ResourceRef("apps.kruise.io", "v1beta1", "daemonsets", True, "DaemonSet")
    stored = to_wire(sample(ADVANCED_DAEMONSETS), wire)
    bare = {k: v for k, v in stored.items() if k not in ("apiVersion", "kind")}
    assert from_wire(bare, wire, ADVANCED_DAEMONSETS) == sample(ADVANCED_DAEMONSETS)


# ---- merge patch (RFC 7386 appendix A) ---------------------------------------------------------

RFC7386 = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC7386)
def test_merge_patch_follows_rfc_7386(target: Any, patch: Any, result: Any) -> None:
    before = copy.deepcopy(target)
    assert merge_patch(target, patch) == result
    assert target == before


# ---- the client against a server that cannot convert -------------------------------------------


class StorageServer:
    """Stores objects at v1beta1 for the seven kinds; a v1alpha1 request of them is a 500 (no webhook)."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.rv = 0
        self.requests: list[tuple[str, str]] = []
        self.conflicts = 0  # PUTs to refuse with a 409 before storing
        self.refuse_crds = False  # answer the CRD list with 403, as without RBAC

    def _bump(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        return obj

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append((request.method, request.path))
        # apis, group, version, [namespaces, ns], plural, [name, [subresource]]
        parts = request.path.strip("/").split("/")
        if parts[:2] == ["apis", "apiextensions.k8s.io"] and self.refuse_crds:
            return _status(403, "Forbidden", "forbidden")
        if parts[:2] == ["apis", "apiextensions.k8s.io"]:
            return _json(200, {"kind": "CustomResourceDefinitionList", "items": crds(API_SET_1_9)})
        version = parts[2]
        if version != "v1beta1":
            return _status(500, "InternalError", "conversion webhook for apps.kruise.io failed: no endpoints")
        rest = parts[5:] if parts[3] == "namespaces" else parts[3:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else None)
        prefix = "/".join(parts[:3] + ([parts[3], parts[4]] if parts[3] == "namespaces" else []) + [plural])
        body = orjson.loads(await request.read() or b"null")
        if request.method == "GET" and name is None:
            items = [
                {k: v for k, v in o.items() if k not in ("apiVersion", "kind")}
                for key, o in self.objects.items()
                if key.startswith(prefix + "/")
            ]
            if request.query.get("watch") == "true":
                return await self._watch(request, items)
            return _json(200, {"apiVersion": "apps.kruise.io/v1beta1", "items": items, "metadata": {}})
        key = f"{prefix}/{name or body['metadata']['name']}"
        if request.method == "POST":
            if body["apiVersion"] != "apps.kruise.io/v1beta1":
                return _status(400, "BadRequest", f"wrong apiVersion {body['apiVersion']}")
            self.objects[key] = self._bump(body)
            return _json(201, body)
        current = self.objects.get(key)
        if current is None:
            return _status(404, "NotFound", "not found")
        if request.method == "GET":
            return _json(200, current)
        if request.method == "DELETE":
            del self.objects[key]
            return _json(200, current)
        if request.method == "PUT":
            assert body["apiVersion"] == "apps.kruise.io/v1beta1", body
            stale = body["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]
            if self.conflicts or stale:
                self.conflicts = max(0, self.conflicts - 1)
                self._bump(current)  # someone else wrote in between
                return _status(409, "Conflict", "the object has been modified")
            if rest[-1] == "status":
                stored = {**current, "status": body.get("status")}
            else:
                stored = {**body, "status": current.get("status")}
            self.objects[key] = self._bump(copy.deepcopy(stored))
            return _json(200, self.objects[key])
        return _status(405, "MethodNotAllowed", request.method)

    async def _watch(self, request: web.Request, items: list[dict[str, Any]]) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        for item in items:
            event = {"type": "ADDED", "object": {"apiVersion": "apps.kruise.io/v1beta1", **item}}
            await response.write(orjson.dumps(event) + b"\n")
        bookmark = {"apiVersion": "apps.kruise.io/v1beta1", "metadata": {"resourceVersion": "99"}}
        await response.write(orjson.dumps({"type": "BOOKMARK", "object": bookmark}) + b"\n")
        await response.write_eof()
        return response


def _json(status: int, body: Any) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json")


def _status(code: int, reason: str, message: str) -> web.Response:
    return _json(code, {"kind": "Status", "code": code, "reason": reason, "message": message})


@pytest.fixture
async def server(tmp_path):
    storage = StorageServer()
    async with served(storage.handle, tmp_path) as kubeconfig:
        client = await Client.from_kubeconfig(kubeconfig, request_timeout=5)
        storage.client = client  # type: ignore[attr-defined]
        yield storage
        await client.close()


def _without_rv(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"].pop("resourceVersion", None)
    return out


async def test_without_wire_versions_the_seven_kinds_need_conversion(server) -> None:
    with pytest.raises(errors.InternalError):
        await server.client.create(ADVANCED_DAEMONSETS, sample(ADVANCED_DAEMONSETS))


@pytest.mark.parametrize("ref", SEVEN, ids=lambda r: r.kind)
async def test_every_request_of_the_seven_kinds_goes_out_at_v1beta1(server, ref: ResourceRef) -> None:
    client: Client = server.client
    client.wire = await client.read_wire_versions()
    obj = sample(ref)
    name, namespace = obj["metadata"]["name"], obj["metadata"].get("namespace")

    created = await client.create(ref, obj)
    assert _without_rv(created) == obj
    got = await client.get(ref, name, namespace)
    assert got == created
    listing = await client.list(ref, namespace)
    assert listing["apiVersion"] == ref.api_version and listing["items"] == [created]

    events = [e async for e in client.watch(ref, namespace, timeout_seconds=5)]
    assert [e.type for e in events] == ["ADDED", "BOOKMARK"]
    assert events[0].object == created

    changed = copy.deepcopy(got)
    changed["metadata"].setdefault("labels", {})["touched"] = "yes"
    updated = await client.update(ref, changed)
    assert updated["metadata"]["labels"]["touched"] == "yes" and updated["apiVersion"] == ref.api_version

    with_status = {**updated, "status": {"observedGeneration": 3}}
    status_written = await client.update_status(ref, with_status)
    assert status_written["status"]["observedGeneration"] == 3

    merged = await client.patch(ref, name, {"metadata": {"labels": {"merged": "1"}}}, namespace)
    assert merged["metadata"]["labels"] == {**updated["metadata"]["labels"], "merged": "1"}
    status_patch = {"status": {"observedGeneration": 4}}
    status_merged = await client.patch(ref, name, status_patch, namespace, subresource="status")
    assert status_merged["status"]["observedGeneration"] == 4
    ops = [{"op": "remove", "path": "/metadata/labels/merged"}]
    jsoned = await client.patch(ref, name, ops, namespace, patch_type=PatchType.JSON)
    assert "merged" not in jsoned["metadata"]["labels"]
    expected = copy.deepcopy(obj)
    expected["metadata"].setdefault("labels", {})["touched"] = "yes"
    expected["status"] = {"observedGeneration": 4}  # update_status replaced the status, the patch merged
    assert _without_rv(jsoned) == expected

    deleted = await client.delete(ref, name, namespace)
    assert _without_rv(deleted) == expected

    stored = list(server.objects.values())
    assert stored == []
    kind_paths = [path for _, path in server.requests if f"/{ref.plural}" in path]
    assert kind_paths and all("/v1beta1/" in path for path in kind_paths)


async def test_a_patch_retries_a_conflict_unless_it_pins_the_resource_version(server) -> None:
    client: Client = server.client
    client.wire = await client.read_wire_versions()
    created = await client.create(BROADCASTJOBS, sample(BROADCASTJOBS))
    server.conflicts = 2
    patched = await client.patch(BROADCASTJOBS, "bcj", {"spec": {"parallelism": 3}}, "ns")
    assert patched["spec"]["parallelism"] == 3
    stale = created["metadata"]["resourceVersion"]
    pinned = {"metadata": {"resourceVersion": stale}, "spec": {"parallelism": 4}}
    with pytest.raises(errors.Conflict):
        await client.patch(BROADCASTJOBS, "bcj", pinned, "ns")
    failing_test = [{"op": "test", "path": "/spec/parallelism", "value": 9}]
    with pytest.raises(errors.Invalid):
        await client.patch(BROADCASTJOBS, "bcj", failing_test, "ns", patch_type=PatchType.JSON)


async def test_a_patch_that_changes_nothing_writes_nothing(server) -> None:
    client: Client = server.client
    client.wire = await client.read_wire_versions()
    created = await client.create(BROADCASTJOBS, sample(BROADCASTJOBS))
    writes = len(server.requests)
    same = await client.patch(BROADCASTJOBS, "bcj", {"spec": {"completionPolicy": {"type": "Always"}}}, "ns")
    assert same == created
    assert [m for m, _ in server.requests[writes:]] == ["GET"]


async def test_unreadable_crds_leave_code_versions_on_the_wire(server) -> None:
    server.refuse_crds = True
    wire = await server.client.read_wire_versions()
    assert wire.wire_ref(ADVANCED_DAEMONSETS) is None


async def test_a_derived_client_talks_the_same_versions(server) -> None:
    client: Client = server.client
    client.wire = await client.read_wire_versions()
    derived = client.derive(user_agent="other")
    try:
        created = await derived.create(NODEIMAGES, sample(NODEIMAGES))
        assert created["apiVersion"] == "apps.kruise.io/v1alpha1"
    finally:
        await derived.close()


def test_conversion_functions_are_the_webhooks() -> None:
    """The boundary uses the very function `/convert` answers with (webhook.conversion imports it)."""
    obj = sample(ADVANCED_DAEMONSETS)
    wire = ResourceRef("apps.kruise.io", "v1beta1", "daemonsets", True, "DaemonSet")
    assert to_wire(obj, wire) == convert(obj, "apps.kruise.io/v1beta1")
