"""CRD conversion webhooks through the emulator: a Widget stored at v1 and served at v1 and v2.

A test-local webhook (HTTPS, the test CA, reached through the Sandbox's service routing) moves
`spec.size` (v1) to `spec.dimensions.size` (v2) and back, and records every ConversionReview, so
each test can say which objects kube-apiserver would have sent, at which desired version.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson
import pytest
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

from kruise.sandbox.simulator.client import ApiError, Client
from tests.kit.webhook_server import Reply, make_certificates

GROUP = "conv.example.com"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
V1 = f"/apis/{GROUP}/v1/namespaces/default/widgets"
V2 = f"/apis/{GROUP}/v2/namespaces/default/widgets"
INT = {"type": "integer"}


def _version(name: str, spec: dict[str, Any], storage: bool) -> dict[str, Any]:
    return {
        "name": name,
        "served": True,
        "storage": storage,
        "subresources": {
            "status": {},
            "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
        },
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object", "properties": spec},
                    "status": {"type": "object", "properties": {"replicas": INT}},
                },
            }
        },
    }


def widget_crd(ca_bundle: str, strategy: str = "Webhook") -> dict[str, Any]:
    conversion: dict[str, Any] = {"strategy": strategy}
    if strategy == "Webhook":
        conversion["webhook"] = {
            "clientConfig": {
                "service": {"namespace": "kruise-system", "name": "hooks", "path": "/convert"},
                "caBundle": ca_bundle,
            },
            "conversionReviewVersions": ["v1"],
        }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                _version("v1", {"size": INT, "replicas": INT}, storage=True),
                _version(
                    "v2",
                    {"dimensions": {"type": "object", "properties": {"size": INT}}, "replicas": INT},
                    storage=False,
                ),
            ],
            "conversion": conversion,
        },
    }


def convert_widget(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    spec = out.setdefault("spec", {})
    if desired.endswith("/v2"):
        if "size" in spec:
            spec["dimensions"] = {"size": spec.pop("size")}
    elif "dimensions" in spec:
        spec["size"] = spec.pop("dimensions").get("size")
    out["apiVersion"] = desired
    return out


def review_reply(request: dict[str, Any], **response: Any) -> Reply:
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {"uid": request["uid"], **response},
    }
    return Reply(body=orjson.dumps(body))


def good_webhook(request: dict[str, Any]) -> Reply:
    desired = request["desiredAPIVersion"]
    return review_reply(
        request,
        convertedObjects=[convert_widget(o, desired) for o in request["objects"]],
        result={"status": "Success"},
    )


@pytest.fixture
async def widgets(sandbox, server, certificates):
    """The Widget CRD served; its conversion webhook is the test server (Service kruise-system/hooks)."""
    server.routes["/convert"] = good_webhook
    client = Client(sandbox.kubeconfig)
    await client.create(CRDS, widget_crd(certificates.ca_bundle))
    async with asyncio.timeout(10):
        while True:
            try:
                await client.list(V2)
                break
            except ApiError:
                await asyncio.sleep(0.02)
    server.received.clear()
    yield client
    await client.close()


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v2", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def reviews(server) -> list[dict[str, Any]]:
    return [r["request"] for r in server.received.get("/convert", [])]


def stored(sandbox, name: str) -> dict[str, Any]:
    obj = sandbox.server.store.get((GROUP, "widgets"), "default", name)
    assert obj is not None
    return obj


async def test_created_in_v2_is_stored_in_v1_and_read_in_both(sandbox, server, widgets):
    created = await widgets.create(V2, widget("a", dimensions={"size": 3}, replicas=1))
    assert created["apiVersion"] == f"{GROUP}/v2" and created["spec"]["dimensions"] == {"size": 3}
    assert stored(sandbox, "a")["apiVersion"] == f"{GROUP}/v1"
    assert stored(sandbox, "a")["spec"] == {"size": 3, "replicas": 1}
    # to storage, then the stored object back for the response: one object each
    assert [(r["desiredAPIVersion"], len(r["objects"])) for r in reviews(server)] == [
        (f"{GROUP}/v1", 1),
        (f"{GROUP}/v2", 1),
    ]
    assert reviews(server)[0]["objects"][0]["spec"] == {"dimensions": {"size": 3}, "replicas": 1}
    server.received.clear()
    got_v1 = await widgets.get(f"{V1}/a")
    assert got_v1["apiVersion"] == f"{GROUP}/v1" and got_v1["spec"]["size"] == 3
    assert reviews(server) == []  # the storage version is never sent
    got_v2 = await widgets.get(f"{V2}/a")
    assert got_v2["spec"] == {"dimensions": {"size": 3}, "replicas": 1}
    assert got_v2["metadata"] == got_v1["metadata"]


async def test_created_in_v1_is_read_in_v2(widgets):
    await widgets.create(V1, {**widget("b"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 7}})
    got = await widgets.get(f"{V2}/b")
    assert got["apiVersion"] == f"{GROUP}/v2" and got["spec"] == {"dimensions": {"size": 7}}


async def test_list_sends_the_page_in_one_review(server, widgets):
    for i in range(3):
        await widgets.create(V1, {**widget(f"w{i}"), "apiVersion": f"{GROUP}/v1", "spec": {"size": i}})
    server.received.clear()
    listed = await widgets.list(V2)
    assert listed["apiVersion"] == f"{GROUP}/v2"
    assert [(o["metadata"]["name"], o["spec"]["dimensions"]["size"]) for o in listed["items"]] == [
        ("w0", 0),
        ("w1", 1),
        ("w2", 2),
    ]
    assert [len(r["objects"]) for r in reviews(server)] == [3]
    server.received.clear()
    page = await widgets.list(V2, limit=2)
    assert len(page["items"]) == 2 and [len(r["objects"]) for r in reviews(server)] == [2]


async def test_watch_converts_initial_events_changes_and_bookmarks(widgets):
    await widgets.create(V1, {**widget("old"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1}})
    events: list[dict[str, Any]] = []
    bookmarked = asyncio.Event()

    async def watch() -> None:
        params = {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "10"}
        async for event in widgets.watch(V2, "", **params):
            events.append(event)
            if event["type"] == "BOOKMARK":
                bookmarked.set()
            if event["type"] == "MODIFIED":
                return

    task = asyncio.create_task(watch())
    async with asyncio.timeout(10):
        await bookmarked.wait()
    await widgets.create(V1, {**widget("new"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 2}})
    await widgets.patch(f"{V1}/new", {"spec": {"size": 5}})
    async with asyncio.timeout(10):
        await task
    seen = [(e["type"], e["object"]["apiVersion"], e["object"].get("spec")) for e in events]
    assert seen == [
        ("ADDED", f"{GROUP}/v2", {"dimensions": {"size": 1}}),
        ("BOOKMARK", f"{GROUP}/v2", None),
        ("ADDED", f"{GROUP}/v2", {"dimensions": {"size": 2}}),
        ("MODIFIED", f"{GROUP}/v2", {"dimensions": {"size": 5}}),
    ]


async def test_patch_applies_to_the_object_as_seen_at_the_request_version(sandbox, widgets):
    await widgets.create(V1, {**widget("p"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1, "replicas": 1}})
    merged = await widgets.patch(f"{V2}/p", {"spec": {"dimensions": {"size": 4}}})
    assert merged["apiVersion"] == f"{GROUP}/v2" and merged["spec"] == {
        "dimensions": {"size": 4},
        "replicas": 1,
    }
    ops = [{"op": "replace", "path": "/spec/dimensions/size", "value": 6}]
    patched = await widgets.patch(f"{V2}/p", ops, "application/json-patch+json")
    assert patched["spec"]["dimensions"] == {"size": 6}
    assert stored(sandbox, "p")["spec"] == {"size": 6, "replicas": 1}
    assert stored(sandbox, "p")["metadata"]["generation"] == 3
    applied = await widgets.request(
        "PATCH",
        f"{V2}/p",
        body={
            "apiVersion": f"{GROUP}/v2",
            "kind": "Widget",
            "metadata": {"name": "p"},
            "spec": {"replicas": 2},
        },
        params={"fieldManager": "tester", "force": "true"},
        content_type="application/apply-patch+yaml",
    )
    assert applied["spec"] == {"dimensions": {"size": 6}, "replicas": 2}
    assert stored(sandbox, "p")["spec"] == {"size": 6, "replicas": 2}


async def test_status_scale_and_delete_at_the_request_version(sandbox, widgets):
    created = await widgets.create(V2, widget("s", dimensions={"size": 1}, replicas=1))
    created["status"] = {"replicas": 1}
    status = await widgets.replace(f"{V2}/s/status", created)
    assert status["apiVersion"] == f"{GROUP}/v2" and status["status"] == {"replicas": 1}
    assert status["spec"]["dimensions"] == {"size": 1}
    scale = await widgets.get(f"{V2}/s/scale")
    assert scale["kind"] == "Scale" and scale["spec"]["replicas"] == 1 and scale["status"]["replicas"] == 1
    scale["spec"]["replicas"] = 3
    assert (await widgets.replace(f"{V2}/s/scale", scale))["spec"]["replicas"] == 3
    assert stored(sandbox, "s")["spec"] == {"size": 1, "replicas": 3}
    deleted = await widgets.delete(f"{V2}/s")
    assert deleted["apiVersion"] == f"{GROUP}/v2" and deleted["spec"]["dimensions"] == {"size": 1}


async def test_admission_webhooks_see_the_request_version(sandbox, server, certificates, widgets):
    server.routes["/check"] = lambda request: {"allowed": True}
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "widgets"},
        "webhooks": [
            {
                "name": "widgets.conv.example.com",
                "clientConfig": {
                    "service": {"namespace": "kruise-system", "name": "hooks", "path": "/check"},
                    "caBundle": certificates.ca_bundle,
                },
                "rules": [
                    {
                        "operations": ["CREATE", "UPDATE", "DELETE"],
                        "apiGroups": [GROUP],
                        "apiVersions": ["v2"],
                        "resources": ["widgets"],
                    }
                ],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
            }
        ],
    }
    await widgets.create("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", config)
    await widgets.create(V2, widget("adm", dimensions={"size": 1}))
    await widgets.patch(f"{V2}/adm", {"spec": {"dimensions": {"size": 2}}})
    await widgets.delete(f"{V2}/adm")
    seen = [
        (r["request"]["operation"], r["request"]["object"], r["request"]["oldObject"])
        for r in server.received["/check"]
    ]
    assert [op for op, _, _ in seen] == ["CREATE", "UPDATE", "DELETE"]
    assert seen[0][1]["spec"] == {"dimensions": {"size": 1}}
    assert seen[1][1]["spec"] == {"dimensions": {"size": 2}} and seen[1][2]["spec"] == {
        "dimensions": {"size": 1}
    }
    assert seen[2][2]["apiVersion"] == f"{GROUP}/v2" and seen[2][2]["spec"] == {"dimensions": {"size": 2}}


async def test_labels_and_annotations_from_the_webhook_are_kept_other_metadata_restored(
    sandbox, server, widgets
):
    def relabel(request: dict[str, Any]) -> Reply:
        converted = []
        for obj in request["objects"]:
            out = convert_widget(obj, request["desiredAPIVersion"])
            out["metadata"]["labels"] = {"converted": "yes"}
            out["metadata"]["finalizers"] = ["sneaky"]
            converted.append(out)
        return review_reply(request, convertedObjects=converted, result={"status": "Success"})

    await widgets.create(V1, {**widget("m"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1}})
    server.routes["/convert"] = relabel
    got = await widgets.get(f"{V2}/m")
    assert got["metadata"]["labels"] == {"converted": "yes"}
    assert "finalizers" not in got["metadata"]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (
            lambda r: review_reply(
                {**r, "uid": "other"}, convertedObjects=r["objects"], result={"status": "Success"}
            ),
            'failed: expected response.uid="{uid}", got "other"',
        ),
        (
            lambda r: review_reply(r, convertedObjects=[], result={"status": "Success"}),
            "returned 0 objects, expected 1",
        ),
        (
            lambda r: review_reply(r, result={"status": "Failure", "message": "size is not convertible"}),
            "failed: size is not convertible",
        ),
        (
            lambda r: review_reply(r, result={"status": "Failure"}),
            "failed: response.result.status was 'Failure', not 'Success'",
        ),
        (
            lambda r: review_reply(
                r,
                convertedObjects=[{**o, "apiVersion": f"{GROUP}/v1"} for o in r["objects"]],
                result={"status": "Success"},
            ),
            "returned invalid object at index 0: invalid groupVersion "
            f"(expected {GROUP}/v2, received {GROUP}/v1)",
        ),
        (
            lambda r: review_reply(
                r,
                convertedObjects=[
                    {**convert_widget(o, r["desiredAPIVersion"]), "metadata": {**o["metadata"], "name": "x"}}
                    for o in r["objects"]
                ],
                result={"status": "Success"},
            ),
            "returned invalid object: must have the same name: bad != x",
        ),
        (
            lambda r: Reply(status=500, body=b"boom"),
            'failed: an error on the server ("boom") has prevented the request from succeeding',
        ),
    ],
)
async def test_bad_answers_fail_the_read_as_kube_apiserver_does(sandbox, server, widgets, answer, message):
    await widgets.create(V1, {**widget("bad"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1}})
    server.routes["/convert"] = answer
    server.received.clear()
    with pytest.raises(ApiError) as failure:
        await widgets.get(f"{V2}/bad")
    uid = reviews(server)[0]["uid"]
    assert failure.value.status == 500 and failure.value.reason == "InternalError"
    prefix = f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind=Widget "
    assert failure.value.message == prefix + message.format(uid=uid)


async def test_wrong_count_in_a_list_fails_the_list(server, widgets):
    for name in ("l1", "l2"):
        await widgets.create(V1, {**widget(name), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1}})
    server.routes["/convert"] = lambda r: review_reply(
        r,
        convertedObjects=[convert_widget(r["objects"][0], r["desiredAPIVersion"])],
        result={"status": "Success"},
    )
    with pytest.raises(ApiError) as failure:
        await widgets.list(V2)
    assert failure.value.message == (
        f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind=WidgetList "
        "returned 1 objects, expected 2"
    )


async def test_webhook_down_fails_writes_and_reads_at_another_version(sandbox, widgets):
    await widgets.create(V1, {**widget("d"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1}})
    sandbox.service_addresses.pop(("kruise-system", "hooks", 443))
    url = "https://hooks.kruise-system.svc:443/convert?timeout=30s"
    with pytest.raises(ApiError) as failure:
        await widgets.get(f"{V2}/d")
    assert failure.value.status == 500
    assert failure.value.message == (
        f"Internal error occurred: conversion webhook for {GROUP}/v1, Kind=Widget failed: "
        f'Post "{url}": service "hooks" not found'
    )
    with pytest.raises(ApiError) as failure:
        await widgets.create(V2, widget("e", dimensions={"size": 1}))
    assert failure.value.message == (
        f"Internal error occurred: conversion webhook for {GROUP}/v2, Kind=Widget failed: "
        f'Post "{url}": service "hooks" not found'
    )
    assert sandbox.server.store.get((GROUP, "widgets"), "default", "e") is None
    assert (await widgets.get(f"{V1}/d"))["spec"] == {"size": 1}  # the storage version needs no webhook


async def test_untrusted_certificate_fails_the_conversion(sandbox, server, widgets):
    other_ca = make_certificates(["hooks.kruise-system.svc"]).ca_bundle
    crd = await widgets.get(f"{CRDS}/widgets.{GROUP}")
    await widgets.create(V1, {**widget("t"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1}})
    crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = other_ca
    await widgets.replace(f"{CRDS}/widgets.{GROUP}", crd)
    with pytest.raises(ApiError) as failure:
        await widgets.get(f"{V2}/t")
    assert failure.value.status == 500 and "conversion webhook for" in failure.value.message
    assert "certificate verify failed" in failure.value.message
    assert reviews(server) == []


async def test_strategy_none_only_rewrites_the_api_version(sandbox, server, certificates):
    client = Client(sandbox.kubeconfig)
    try:
        await client.create(CRDS, widget_crd(certificates.ca_bundle, strategy="None"))
        async with asyncio.timeout(10):
            while True:
                try:
                    await client.list(V2)
                    break
                except ApiError:
                    await asyncio.sleep(0.02)
        await client.create(V1, {**widget("n"), "apiVersion": f"{GROUP}/v1", "spec": {"size": 1}})
        got = await client.get(f"{V2}/n")
        assert got["apiVersion"] == f"{GROUP}/v2" and got["spec"] == {"size": 1}
        assert server.received.get("/convert") is None
    finally:
        await client.close()


async def test_kubernetes_asyncio_custom_objects_across_versions(sandbox, server, widgets):
    cfg = k8s.Configuration()
    await k8s_config.load_kube_config(config_file=str(sandbox.kubeconfig), client_configuration=cfg)
    async with k8s.ApiClient(cfg) as api:
        custom = k8s.CustomObjectsApi(api)
        created = await custom.create_namespaced_custom_object(
            GROUP, "v2", "default", "widgets", widget("ka", dimensions={"size": 2}, replicas=1)
        )
        assert created["apiVersion"] == f"{GROUP}/v2" and created["spec"]["dimensions"] == {"size": 2}
        at_v1 = await custom.get_namespaced_custom_object(GROUP, "v1", "default", "widgets", "ka")
        assert at_v1["spec"] == {"size": 2, "replicas": 1}
        patched = await custom.patch_namespaced_custom_object(
            GROUP, "v1", "default", "widgets", "ka", [{"op": "replace", "path": "/spec/size", "value": 9}]
        )
        assert patched["apiVersion"] == f"{GROUP}/v1" and patched["spec"]["size"] == 9
        listed = await custom.list_namespaced_custom_object(GROUP, "v2", "default", "widgets")
        assert [o["spec"]["dimensions"]["size"] for o in listed["items"]] == [9]
        server.routes["/convert"] = lambda r: Reply(status=500, body=b"down")
        with pytest.raises(k8s.ApiException) as failure:
            await custom.get_namespaced_custom_object(GROUP, "v2", "default", "widgets", "ka")
        assert failure.value.status == 500
        assert orjson.loads(failure.value.body)["reason"] == "InternalError"
