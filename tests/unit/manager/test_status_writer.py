"""The one status writer: skip when equal, clear dropped fields, merge patch, and the conflict rule."""

from __future__ import annotations

import pytest

from kruise.kube.errors import Conflict
from kruise.kube.resources import EPHEMERALJOBS, RESOURCEDISTRIBUTIONS
from kruise.manager.writers.status import StatusWriter, Written, status_patch
from tests.kit.client import RecordingClient


def _job(status: dict[str, object]) -> dict[str, object]:
    return {"metadata": {"name": "job", "namespace": "default"}, "spec": {}, "status": status}


def _stored(client: RecordingClient) -> dict[str, object]:
    stored = client.object(EPHEMERALJOBS, "job", "default")
    assert stored is not None
    return stored


def test_dropped_fields_are_sent_as_null() -> None:
    assert status_patch({"a": 1, "b": 2}, {"a": 3}) == {"status": {"a": 3, "b": None}}


def test_dropped_entries_of_nested_maps_are_sent_as_null() -> None:
    old = {"podStates": {"web-0": {"node": "a"}, "web-1": {"node": "b"}}, "list": [1, 2]}
    new = {"podStates": {"web-0": {"node": "c"}}, "list": [1]}
    assert status_patch(old, new) == {
        "status": {"podStates": {"web-0": {"node": "c"}, "web-1": None}, "list": [1]}
    }


async def test_an_equal_status_is_not_written() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running"}))
    job = _stored(client)
    written = await StatusWriter(client, EPHEMERALJOBS).write(job, {"phase": "Running"})
    assert written.outcome is Written.UNCHANGED
    assert client.writes == []


async def test_the_new_status_replaces_the_old_one_by_merge_patch() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running", "message": "old"}))
    written = await StatusWriter(client, EPHEMERALJOBS).write(_stored(client), {"phase": "Succeeded"})
    assert written.outcome is Written.WRITTEN
    assert written.obj is not None and written.obj["status"] == {"phase": "Succeeded"}
    [call] = client.writes
    assert (call.verb, call.subresource, call.body) == (
        "patch",
        "status",
        {"status": {"phase": "Succeeded", "message": None}},
    )
    assert _stored(client)["status"] == {"phase": "Succeeded"}


async def test_cluster_scoped_objects_are_written_too() -> None:
    client = RecordingClient()
    client.put(RESOURCEDISTRIBUTIONS, {"metadata": {"name": "rd"}, "spec": {}})
    rd = client.object(RESOURCEDISTRIBUTIONS, "rd")
    assert rd is not None
    written = await StatusWriter(client, RESOURCEDISTRIBUTIONS).write(rd, {"desired": 2})
    assert written.outcome is Written.WRITTEN
    assert (client.object(RESOURCEDISTRIBUTIONS, "rd") or {})["status"] == {"desired": 2}


async def test_a_deleted_object_has_no_status_left_to_write() -> None:
    client = RecordingClient()
    written = await StatusWriter(client, EPHEMERALJOBS).write(_job({}), {"phase": "Running"})
    assert written.outcome is Written.GONE


async def test_without_still_wanted_the_patch_carries_no_resource_version() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running"}))
    stale = _stored(client)
    client.put(EPHEMERALJOBS, {**_stored(client), "metadata": {**stale["metadata"], "resourceVersion": "99"}})
    written = await StatusWriter(client, EPHEMERALJOBS).write(stale, {"phase": "Failed"})
    assert written.outcome is Written.WRITTEN


async def test_still_wanted_rechecks_the_fresh_object_after_a_conflict() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running"}))
    cached = _stored(client)
    client.fail_next("patch", EPHEMERALJOBS, "job", "default", error=Conflict)
    written = await StatusWriter(client, EPHEMERALJOBS).write(
        cached, {"phase": "Failed"}, still_wanted=lambda fresh: True
    )
    assert written.outcome is Written.WRITTEN
    patches = client.calls_to("patch", EPHEMERALJOBS)
    assert [c.succeeded for c in patches] == [False, True]
    assert all(c.body["metadata"]["resourceVersion"] for c in patches)
    assert _stored(client)["status"] == {"phase": "Failed"}


async def test_a_fresh_object_that_refuses_the_status_keeps_its_own() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running"}))
    cached = _stored(client)
    client.fail_next("patch", EPHEMERALJOBS, "job", "default", error=Conflict)
    written = await StatusWriter(client, EPHEMERALJOBS).write(
        cached, {"phase": "Failed"}, still_wanted=lambda fresh: False
    )
    assert written.outcome is Written.UNCHANGED
    assert _stored(client)["status"] == {"phase": "Running"}


async def test_a_conditional_write_leaves_a_conflict_to_the_caller() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running"}))
    stale = _stored(client)
    client.put(EPHEMERALJOBS, {**stale, "metadata": {**stale["metadata"], "resourceVersion": "99"}})
    with pytest.raises(Conflict):
        await StatusWriter(client, EPHEMERALJOBS).write(stale, {"phase": "Failed"}, conditional=True)
    assert _stored(client)["status"] == {"phase": "Running"}


async def test_without_still_wanted_a_conflict_is_raised() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running"}))
    client.fail_next("patch", EPHEMERALJOBS, "job", "default", error=Conflict)
    with pytest.raises(Conflict):
        await StatusWriter(client, EPHEMERALJOBS).write(_stored(client), {"phase": "Failed"})


async def test_a_partial_write_owns_only_the_fields_it_names() -> None:
    client = RecordingClient()
    client.put(EPHEMERALJOBS, _job({"phase": "Running", "collisionCount": 2}))
    writer = StatusWriter(client, EPHEMERALJOBS)
    unchanged = await writer.write(_stored(client), {"phase": "Running"}, partial=True)
    assert unchanged.outcome is Written.UNCHANGED
    written = await writer.write(_stored(client), {"phase": "Failed"}, partial=True)
    assert written.outcome is Written.WRITTEN
    assert client.writes[-1].body == {"status": {"phase": "Failed"}}
    assert _stored(client)["status"] == {"phase": "Failed", "collisionCount": 2}
