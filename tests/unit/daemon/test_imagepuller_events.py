"""The image puller's events: PullImageSucceed / PullImageFailed with upstream's objects and texts,
against a fake runtime, a recording client and a recording event recorder."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from kruise.daemon.imagepuller import events as ev
from kruise.daemon.imagepuller.puller import ImagePuller
from kruise.kube.resources import NODEIMAGES
from tests.kit import RecordingClient, RecordingEventRecorder, until
from tests.kit.runtime import FakeRuntimeClient

NODE = "node-1"
JOB = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "name": "warm", "namespace": "ns",
       "uid": "job-uid"}  # fmt: skip


def tag(name: str, **extra) -> dict:
    return {"tag": name, "version": 0, "createdAt": "2026-01-01T00:00:00Z", **extra}


async def run(images: dict, runtime_kwargs: dict) -> tuple[RecordingEventRecorder, ImagePuller, dict]:
    clock = [datetime(2026, 11, 22, 23, 0, tzinfo=UTC)]
    client = RecordingClient()
    node_image = {"metadata": {"name": NODE}, "spec": {"images": images}}
    client.put(NODEIMAGES, node_image)
    stored = await client.get(NODEIMAGES, NODE)
    recorder = RecordingEventRecorder()

    async def no_wait(_seconds: float) -> None:
        return None

    runtime = FakeRuntimeClient(clock, **runtime_kwargs)
    puller = ImagePuller(client, runtime, NODE, clock=lambda: clock[0], sleep=no_wait, recorder=recorder)
    puller.sync(stored)
    await until(lambda: all(s.phase in ("Succeeded", "Failed") for s in puller.states.values()))
    await puller.stop()
    return recorder, puller, stored


async def test_a_pulled_tag_is_a_normal_event_on_the_nodeimage_with_the_elapsed_time():
    recorder, _, stored = await run({"nginx": {"tags": [tag("1.25", ownerReferences=[JOB])]}}, {})
    (event,) = recorder.events
    assert (event.type, event.reason, event.message) == ("Normal", "PullImageSucceed",
                                                         "Image nginx:1.25, ecalpsedTime 1.5s")  # fmt: skip
    assert event.involved == {
        "kind": "NodeImage",
        "apiVersion": "apps.kruise.io/v1alpha1",
        "name": NODE,
        "uid": stored["metadata"]["uid"],
        "resourceVersion": stored["metadata"]["resourceVersion"],
    }


async def test_an_image_already_present_still_reports_success():
    recorder, _, _ = await run({"nginx": {"tags": [tag("1.25")]}}, {"present": {"nginx:1.25"}})
    assert [(e.reason, e.message) for e in recorder.events] == [
        ("PullImageSucceed", "Image nginx:1.25, ecalpsedTime 0s")
    ]


async def test_a_failed_tag_warns_each_owner_then_the_nodeimage():
    images = {
        "example.com/broken": {"tags": [tag("v1", ownerReferences=[JOB], pullPolicy={"backoffLimit": 1})]}
    }
    recorder, puller, _ = await run(images, {"broken": {"example.com/broken"}})
    message = "Image example.com/broken:v1 Failed to pull image example.com/broken:v1: manifest unknown"
    assert [(e.key, e.involved["kind"], e.type, e.reason, e.message) for e in recorder.events] == [
        ("ns/warm", "ImagePullJob", "Warning", "PullImageFailed", message),
        (NODE, "NodeImage", "Warning", "PullImageFailed", message),
    ]
    assert recorder.events[0].involved["uid"] == "job-uid"
    assert puller.states[("example.com/broken", "v1")].message in message


async def test_a_deadline_failure_carries_upstreams_message():
    images = {"slow": {"tags": [tag("1", pullPolicy={"activeDeadlineSeconds": 0.05})]}}
    clock = [datetime(2026, 11, 22, 23, 0, tzinfo=UTC)]

    class Hanging(FakeRuntimeClient):
        async def pull_image(self, reference: str, **_: object) -> str:
            await until(lambda: False, timeout=5.0)
            return ""

    client = RecordingClient()
    client.put(NODEIMAGES, {"metadata": {"name": NODE}, "spec": {"images": images}})
    recorder = RecordingEventRecorder()
    puller = ImagePuller(client, Hanging(clock), NODE, clock=lambda: clock[0], recorder=recorder)
    puller.sync(await client.get(NODEIMAGES, NODE))
    await until(lambda: recorder.events)
    await puller.stop()
    assert [(e.reason, e.message) for e in recorder.events] == [
        ("PullImageFailed", "Image slow:1 pulling exceeds the activeDeadlineSeconds")
    ]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (1.5, "1.5s"), (0.85, "850ms"), (0.0000125, "12.5µs"), (3e-7, "300ns"), (60, "1m0s"),
     (123.25, "2m3.25s"), (3600, "1h0m0s"), (3725.000000001, "1h2m5.000000001s"), (-2, "-2s")],
)  # fmt: skip
def test_go_duration_matches_gos_notation(seconds, text):
    assert ev.go_duration(seconds) == text


@given(hs.integers(min_value=1_000_000_000, max_value=10**15))
def test_go_duration_reads_back_to_the_same_nanoseconds(nanos):
    text = ev.go_duration(nanos / 1e9)
    hours, _, rest = text.rpartition("h") if "h" in text else ("0", "", text)
    minutes, _, secs = rest.rpartition("m") if "m" in rest else ("0", "", rest)
    total = int(hours) * 3600 + int(minutes or 0) * 60 + float(secs.removesuffix("s"))
    assert total == pytest.approx(round(nanos / 1e9, 9), rel=1e-12, abs=1e-6)
