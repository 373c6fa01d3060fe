"""InPlaceWriter.start retries a Conflict against a fresh read, but never begins the same update twice: a new
leader whose cache had not yet seen its predecessor's in-place write (leader churn, e2e/faults scenario 4)
gets a Conflict, and the fresh read shows the update already begun."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from kruise.api.keys import ANNOTATION_INPLACE_UPDATE_STATE
from kruise.control.common.inplace.engine import already_begun
from kruise.control.common.inplace.spec import UpdateSpec
from kruise.control.common.inplace.state import get_state
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import PODS
from kruise.manager.writers.inplace import InPlaceWriter
from tests.kit.client import RecordingClient

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
REVISION = "controller-revision-hash"
SPEC = UpdateSpec(revision="rev-2", container_images={"main": "nginx:2"})


def write_revision(target: dict[str, Any], revision: str) -> None:
    target["metadata"].setdefault("labels", {})[REVISION] = revision


def seeded() -> RecordingClient:
    client = RecordingClient()
    client.put(PODS, {
        "metadata": {"name": "p", "namespace": "default", "labels": {REVISION: "rev-1"}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
        "status": {"containerStatuses": [{"name": "main", "image": "nginx:1", "imageID": "sha-1"}]},
    })  # fmt: skip
    return client


def stored(client: RecordingClient) -> dict[str, Any]:
    pod = client.object(PODS, "p", "default")
    assert pod is not None
    return pod


async def start(client: RecordingClient, pod: dict[str, Any], now: datetime) -> dict[str, Any] | None:
    return await InPlaceWriter(client, ResourceVersionExpectations()).start(
        pod, copy.deepcopy(SPEC), now, write_revision=write_revision
    )


async def test_a_stale_view_of_an_update_already_written_does_not_begin_it_again():
    client = seeded()
    stale = copy.deepcopy(stored(client))
    await start(client, copy.deepcopy(stale), NOW)  # the leader that was then killed
    first = stored(client)["metadata"]["annotations"][ANNOTATION_INPLACE_UPDATE_STATE]
    # the kubelet restarts the container with the new image
    restarted = copy.deepcopy(stored(client))
    restarted["status"]["containerStatuses"] = [{"name": "main", "image": "nginx:2", "imageID": "sha-2"}]
    await client.update_status(PODS, restarted)
    writes = len(client.writes)

    assert await start(client, stale, NOW + timedelta(seconds=5)) is None  # the new leader, cache behind

    pod = stored(client)
    assert pod["metadata"]["annotations"][ANNOTATION_INPLACE_UPDATE_STATE] == first
    state = get_state(pod)
    assert state is not None and state.last_container_statuses == {"main": {"imageID": "sha-1"}}
    assert [w.verb for w in client.writes[writes:]] == ["update"]  # the refused stale PUT only


async def test_a_conflict_from_another_write_still_begins_the_update_once():
    client = seeded()
    stale = copy.deepcopy(stored(client))
    await client.update_status(PODS, copy.deepcopy(stale))  # the kubelet's status write moves resourceVersion

    written = await start(client, stale, NOW)

    assert written is not None and written["spec"]["containers"][0]["image"] == "nginx:2"
    state = get_state(stored(client))
    assert state is not None and state.revision == "rev-2"
    assert [w.verb for w in client.writes][-2:] == [
        "update",
        "update",
    ]  # refused, then applied on a fresh read


def test_a_state_naming_the_revision_without_its_labels_is_not_begun():
    """Labels changed by hand after an update: the state alone does not prove this update is on the pod."""
    state = '{"revision":"rev-2","updateTimestamp":"2024-05-01T12:00:00Z"}'
    pod = {
        "metadata": {"labels": {REVISION: "rev-1"}, "annotations": {ANNOTATION_INPLACE_UPDATE_STATE: state}}
    }
    assert not already_begun(pod, SPEC, write_revision)
    pod["metadata"]["labels"][REVISION] = "rev-2"
    assert already_begun(pod, SPEC, write_revision)
    assert not already_begun(pod, UpdateSpec(revision="rev-3"), write_revision)
