"""`tests.kit.RecordingClient`: records every call and keeps apiserver-like state behind it."""

from __future__ import annotations

import pytest

from kruise.kube.client import PatchType
from kruise.kube.errors import AlreadyExists, Conflict, Invalid, NotFound, TooManyRequests, TransportError
from kruise.kube.resources import CLONESETS, CONFIGMAPS, NODEIMAGES, PODS
from tests.kit import FakeInformer, RecordingClient
from tests.kit.pods import pod


def configmap(name="cm", namespace="default", **data):
    return {"metadata": {"name": name, "namespace": namespace}, "data": data}


def web_pod(name="p", namespace="default"):
    """A ready web pod with a main and a side container."""
    return pod(
        name,
        namespace=namespace,
        labels={"app": "web"},
        containers=[{"name": "main", "image": "nginx:1"}, {"name": "side", "image": "s:1"}],
        phase="Running",
        ready=True,
    )


async def test_create_fills_server_fields_and_a_get_sees_it():
    client = RecordingClient()
    created = await client.create(CONFIGMAPS, configmap(x="1"))
    meta = created["metadata"]
    assert meta["namespace"] == "default" and meta["uid"] and meta["resourceVersion"]
    assert meta["creationTimestamp"] == "2026-11-22T23:00:00Z" and meta["generation"] == 1
    assert created["kind"] == "ConfigMap" and created["apiVersion"] == "v1"
    assert await client.get(CONFIGMAPS, "cm", "default") == created
    assert [(c.verb, c.resource, c.key) for c in client.calls] == [
        ("create", CONFIGMAPS, "default/cm"),
        ("get", CONFIGMAPS, "default/cm"),
    ]
    assert client.calls[0].body == configmap(x="1")  # what was sent, not what was stored
    assert [c.verb for c in client.writes] == ["create"]


async def test_generate_name_and_cluster_scoped_objects():
    client = RecordingClient()
    made = await client.create(PODS, {"metadata": {"generateName": "web-", "namespace": "ns"}, "spec": {}})
    assert made["metadata"]["name"].startswith("web-") and len(made["metadata"]["name"]) > 4
    image = await client.create(NODEIMAGES, {"metadata": {"name": "node-1"}, "spec": {}})
    assert "namespace" not in image["metadata"]
    assert client.calls[-1].namespace is None and client.calls[-1].key == "node-1"


async def test_create_of_an_existing_object_is_already_exists_and_recorded_as_failed():
    client = RecordingClient()
    client.put(CONFIGMAPS, configmap())
    with pytest.raises(AlreadyExists, match='configmaps "cm" already exists'):
        await client.create(CONFIGMAPS, configmap())
    (call,) = client.calls
    assert call.verb == "create" and not call.succeeded and isinstance(call.error, AlreadyExists)


async def test_missing_objects_are_not_found_for_every_verb():
    client = RecordingClient()
    with pytest.raises(NotFound):
        await client.get(PODS, "p", "default")
    with pytest.raises(NotFound):
        await client.patch(PODS, "p", {"metadata": {"labels": {"a": "b"}}}, "default")
    with pytest.raises(NotFound):
        await client.update(PODS, web_pod())
    with pytest.raises(NotFound, match=r'^pods "p" not found$'):
        await client.delete(PODS, "p", "default")
    assert [c.verb for c in client.calls] == ["get", "patch", "update", "delete"]


async def test_update_with_a_stale_resource_version_is_a_conflict():
    client = RecordingClient()
    created = await client.create(CONFIGMAPS, configmap(x="1"))
    fresh = {**created, "data": {"x": "2"}}
    updated = await client.update(CONFIGMAPS, fresh)
    assert updated["data"] == {"x": "2"}
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    with pytest.raises(Conflict, match="the object has been modified"):
        await client.update(CONFIGMAPS, {**created, "data": {"x": "3"}})
    assert client.object(CONFIGMAPS, "cm", "default")["data"] == {"x": "2"}


async def test_main_resource_ignores_status_and_status_subresource_ignores_the_rest():
    client = RecordingClient()
    client.put(PODS, web_pod())
    current = await client.get(PODS, "p", "default")
    changed = {**current, "spec": {"containers": []}, "status": {"phase": "Failed"}}
    after_main = await client.update(PODS, changed)
    assert after_main["spec"] == {"containers": []} and after_main["status"]["phase"] == "Running"
    assert after_main["metadata"]["generation"] == 2  # the spec changed
    after_status = await client.update_status(PODS, {**after_main, "spec": {}, "status": {"phase": "Failed"}})
    assert after_status["spec"] == {"containers": []} and after_status["status"] == {"phase": "Failed"}
    assert client.calls[-1].subresource == "status"


async def test_patch_flavours_use_the_emulator_semantics():
    client = RecordingClient()
    client.put(PODS, web_pod())
    merged = await client.patch(PODS, "p", {"metadata": {"labels": {"app": None, "tier": "fe"}}}, "default")
    assert merged["metadata"]["labels"] == {"tier": "fe"}
    strategic = await client.patch(
        PODS, "p", {"spec": {"containers": [{"name": "side", "image": "s:2"}]}}, "default",
        patch_type=PatchType.STRATEGIC,
    )  # fmt: skip
    assert [c["image"] for c in strategic["spec"]["containers"]] == ["nginx:1", "s:2"]
    jsonp = await client.patch(
        PODS, "p", [{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"}], "default",
        patch_type=PatchType.JSON,
    )  # fmt: skip
    assert jsonp["spec"]["containers"][0]["image"] == "nginx:2"
    status = await client.patch(
        PODS, "p", {"status": {"conditions": [{"type": "Ready", "status": "False"}]}, "spec": {"x": 1}},
        "default", patch_type=PatchType.STRATEGIC, subresource="status",
    )  # fmt: skip
    assert (
        status["status"]["conditions"] == [{"type": "Ready", "status": "False"}] and "x" not in status["spec"]
    )
    call = client.calls[-1]
    assert call.patch_type is PatchType.STRATEGIC and call.subresource == "status"
    assert call.body["status"]["conditions"][0]["status"] == "False"


async def test_a_failing_json_patch_test_op_is_invalid():
    client = RecordingClient()
    client.put(PODS, web_pod())
    with pytest.raises(Invalid):
        await client.patch(
            PODS, "p", [{"op": "test", "path": "/metadata/labels/app", "value": "db"}], "default",
            patch_type=PatchType.JSON,
        )  # fmt: skip


async def test_patch_carrying_a_resource_version_is_a_precondition():
    client = RecordingClient()
    client.put(CONFIGMAPS, configmap())
    with pytest.raises(Conflict):
        await client.patch(CONFIGMAPS, "cm", {"metadata": {"resourceVersion": "999"}, "data": {}}, "default")


async def test_delete_preconditions_and_finalizers():
    client = RecordingClient()
    client.put(CONFIGMAPS, configmap("plain"))
    keep = configmap("kept")
    keep["metadata"]["finalizers"] = ["example.com/hold"]
    client.put(CONFIGMAPS, keep)
    with pytest.raises(Conflict, match="Precondition failed: UID in precondition: nope"):
        await client.delete(CONFIGMAPS, "plain", "default", uid="nope")
    await client.delete(CONFIGMAPS, "plain", "default", propagation_policy="Background")
    assert client.object(CONFIGMAPS, "plain", "default") is None
    assert client.calls[-1].options == {"propagation_policy": "Background"}

    terminating = await client.delete(CONFIGMAPS, "kept", "default")
    assert terminating["metadata"]["deletionTimestamp"]
    await client.patch(CONFIGMAPS, "kept", {"metadata": {"finalizers": None}}, "default")
    assert client.object(CONFIGMAPS, "kept", "default") is None


async def test_fail_next_raises_once_for_the_named_object_only():
    client = RecordingClient()
    client.put(PODS, web_pod("a"), web_pod("b"))
    client.fail_next("patch", PODS, "a", "default", error=Conflict)
    with pytest.raises(Conflict, match="injected by fail_next"):
        await client.patch(PODS, "a", {"metadata": {"labels": {"x": "1"}}}, "default")
    await client.patch(PODS, "b", {"metadata": {"labels": {"x": "1"}}}, "default")
    await client.patch(PODS, "a", {"metadata": {"labels": {"x": "1"}}}, "default")
    assert [(c.name, c.succeeded) for c in client.calls_to("patch", PODS)] == [
        ("a", False),
        ("b", True),
        ("a", True),
    ]
    assert client.object(PODS, "a", "default")["metadata"]["labels"]["x"] == "1"


async def test_fail_next_any_verb_several_times_with_an_error_instance():
    client = RecordingClient()
    client.put(NODEIMAGES, {"metadata": {"name": "n1"}})
    throttled = TooManyRequests("slow down")
    client.fail_next("*", NODEIMAGES, "n1", error=throttled, times=2)
    with pytest.raises(TooManyRequests):
        await client.get(NODEIMAGES, "n1")
    with pytest.raises(TooManyRequests):
        await client.delete(NODEIMAGES, "n1")
    await client.delete(NODEIMAGES, "n1")
    assert client.objects(NODEIMAGES) == []


async def test_fail_next_without_a_count_fails_every_call_from_now_on():
    client = RecordingClient()
    client.put(NODEIMAGES, {"metadata": {"name": "n1"}})
    client.fail_next("*", NODEIMAGES, "n1", error=TransportError("connection refused"), times=None)
    for _ in range(3):
        with pytest.raises(TransportError, match="connection refused"):
            await client.get(NODEIMAGES, "n1")
    with pytest.raises(TransportError):
        await client.delete(NODEIMAGES, "n1")
    assert client.object(NODEIMAGES, "n1") is not None
    assert [c.succeeded for c in client.calls] == [False] * 4


async def test_fail_next_not_found_even_though_the_object_exists():
    client = RecordingClient()
    client.put(CLONESETS, {"metadata": {"name": "web", "namespace": "default"}})
    client.fail_next("get", CLONESETS, "web", "default", error=NotFound)
    with pytest.raises(NotFound):
        await client.get(CLONESETS, "web", "default")
    assert (await client.get(CLONESETS, "web", "default"))["metadata"]["name"] == "web"


async def test_sync_mirrors_writes_into_an_informer():
    client = RecordingClient()
    informer = FakeInformer()
    client.put(CONFIGMAPS, configmap("seeded"))
    client.sync(CONFIGMAPS, informer)
    assert informer.get("default/seeded") is not None
    await client.create(CONFIGMAPS, configmap("new", x="1"))
    await client.patch(CONFIGMAPS, "new", {"data": {"x": "2"}}, "default")
    assert informer.get("default/new")["data"] == {"x": "2"}
    await client.delete(CONFIGMAPS, "seeded", "default")
    assert informer.get("default/seeded") is None
    informer.assert_unmodified()


async def test_returned_objects_are_private_copies():
    client = RecordingClient()
    got = await client.create(CONFIGMAPS, configmap(x="1"))
    got["data"]["x"] = "edited"
    assert client.object(CONFIGMAPS, "cm", "default")["data"] == {"x": "1"}


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda c: c.get(PODS, "p"), r"^namespace: Required value"),
        (lambda c: c.get(NODEIMAGES, "n", "default"), r"^namespace: .* is cluster-scoped"),
        (lambda c: c.create(PODS, {"metadata": {"name": "p"}}), r"^metadata\.namespace: Required value"),
        (lambda c: c.create(NODEIMAGES, {"metadata": {}}), r"^metadata\.name: Required value"),
        (lambda c: c.patch(PODS, "p", {}, "d", patch_type=PatchType.JSON), r"^patch: a JSON patch"),
        (lambda c: c.patch(PODS, "p", {}, "d", patch_type=PatchType.APPLY), r"^patch_type: "),
    ],
)
async def test_misuse_is_a_clear_error_naming_the_field(call, error):
    with pytest.raises(ValueError, match=error):
        await call(RecordingClient())


def test_fail_next_checks_its_arguments():
    client = RecordingClient()
    with pytest.raises(ValueError, match=r'^verb: Unsupported value: "put"'):
        client.fail_next("put", PODS, "p", "default")
    with pytest.raises(ValueError, match=r"^times: must be >= 1"):
        client.fail_next("get", PODS, "p", "default", times=0)
