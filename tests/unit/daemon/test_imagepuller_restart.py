"""A (re)started image puller adopts the tags its NodeImage status shows finished for the spec's
version and pulls only the rest (upstream's worker pool does the same), so a daemon restart repeats
neither a pull nor its event."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kruise.daemon.imagepuller.puller import ImagePuller
from kruise.daemon.imagepuller.status import TagState, finished_state
from kruise.kube.resources import NODEIMAGES
from tests.kit import RecordingClient, RecordingEventRecorder, until
from tests.kit.runtime import FakeRuntimeClient
from tests.unit.daemon.test_imagepuller_events import tag

NODE = "node-1"
DONE = {"tag": "1.25", "phase": "Succeeded", "progress": 100, "version": 2, "imageID": "sha256:abc",
        "startTime": "2026-11-24T10:00:00Z", "completionTime": "2026-11-24T10:00:05Z"}  # fmt: skip


def status_with(*entries: dict) -> dict:
    return {"imageStatuses": {"nginx": {"tags": list(entries)}}}


def test_a_finished_tag_of_the_same_version_is_adopted_as_recorded():
    assert finished_state(status_with(DONE), "nginx", "1.25", 2) == TagState(
        image="nginx", tag="1.25", version=2, phase="Succeeded", progress=100,
        start_time="2026-11-24T10:00:00Z", completion_time="2026-11-24T10:00:05Z", image_id="sha256:abc",
    )  # fmt: skip
    failed = {**DONE, "phase": "Failed", "progress": 0, "message": "Failed to pull image nginx:1.25: x"}
    failed.pop("imageID")
    adopted = finished_state(status_with(failed), "nginx", "1.25", 2)
    assert adopted is not None and (adopted.phase, adopted.message) == ("Failed", failed["message"])


@pytest.mark.parametrize(
    ("status", "tag_name", "version"),
    [
        (None, "1.25", 2),
        ({}, "1.25", 2),
        (status_with(DONE), "1.25", 3),  # version bumped: a re-pull was asked for
        (status_with(DONE), "1.26", 2),
        (status_with({**DONE, "phase": "Pulling", "completionTime": None}), "1.25", 2),
        (status_with({k: v for k, v in DONE.items() if k != "completionTime"}), "1.25", 2),
        (status_with({**DONE, "phase": "Waiting"}), "1.25", 2),
    ],
)
def test_a_tag_not_finished_for_this_version_is_pulled(status, tag_name, version):
    assert finished_state(status, "nginx", tag_name, version) is None


async def start(images: dict, status: dict, present=()):
    clock = [datetime(2026, 11, 24, 11, 0, tzinfo=UTC)]
    client = RecordingClient()
    client.put(NODEIMAGES, {"metadata": {"name": NODE}, "spec": {"images": images}, "status": status})
    stored = await client.get(NODEIMAGES, NODE)
    runtime, recorder = FakeRuntimeClient(clock, present=present), RecordingEventRecorder()
    pulls: list[str] = []
    original = runtime.pull_image

    async def counting_pull(reference: str, **kwargs: object) -> str:
        pulls.append(reference)
        return await original(reference, **kwargs)

    runtime.pull_image = counting_pull

    async def no_wait(_seconds: float) -> None:
        return None

    puller = ImagePuller(client, runtime, NODE, clock=lambda: clock[0], sleep=no_wait, recorder=recorder)
    puller.sync(stored)
    return puller, stored, recorder, pulls


async def test_restarted_puller_pulls_only_what_was_not_finished():
    images = {"nginx": {"tags": [tag("1.25", version=2, imagePullPolicy="Always"), tag("1.26")]}}
    pulling = {
        "tag": "1.26",
        "phase": "Pulling",
        "progress": 0,
        "version": 0,
        "startTime": "2026-11-24T10:00:00Z",
    }
    puller, stored, recorder, pulls = await start(images, status_with(DONE, pulling))
    await until(lambda: puller.states[("nginx", "1.26")].phase == "Succeeded")
    puller.sync(stored)  # our own status write coming back changes nothing
    await puller.stop()
    assert pulls == ["nginx:1.26"]
    assert puller.states[("nginx", "1.25")].to_status() == DONE
    assert [(e.reason, e.message.split(",")[0]) for e in recorder.events] == [
        ("PullImageSucceed", "Image nginx:1.26")
    ]


async def test_adopted_tag_is_pulled_again_on_a_version_bump():
    images = {"nginx": {"tags": [tag("1.25", version=2, imagePullPolicy="Always")]}}
    puller, stored, _, pulls = await start(images, status_with(DONE))
    bumped = {
        **stored,
        "spec": {"images": {"nginx": {"tags": [tag("1.25", version=3, imagePullPolicy="Always")]}}},
    }
    puller.sync(bumped)
    await until(lambda: puller.states[("nginx", "1.25")].phase == "Succeeded")
    assert pulls == ["nginx:1.25"] and puller.states[("nginx", "1.25")].version == 3
    puller.sync({**stored, "spec": {"images": {}}})
    await puller.stop()
    assert puller.states == {}


async def test_adopted_tag_leaves_when_its_spec_goes():
    puller, stored, _, pulls = await start({"nginx": {"tags": [tag("1.25", version=2)]}}, status_with(DONE))
    assert puller.states[("nginx", "1.25")].phase == "Succeeded"
    puller.sync({**stored, "spec": {"images": {}}})
    await puller.stop()
    assert puller.states == {} and pulls == []
