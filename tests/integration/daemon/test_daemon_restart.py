"""kruise-daemon restarting mid-operation loses nothing and repeats nothing.

A ContainerRecreateRequest keeps its progress in `status.containerRecreateStates`, and the pod's
containerIDs against `spec.containers[].statusContext` tell which containers were already recreated;
a fresh recreator picks the request up from there. A NodeImage pull in flight when the daemon dies is
driven again from spec vs status by the fresh puller, while the tags the status shows finished stay
finished. Each "crash" stops a component without letting it finish its work (no drain) and builds a
fresh one on a fresh CRI connection, as a restarted daemon process would.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from kruise.daemon.containerrecreate.recreator import ContainerRecreator
from kruise.daemon.cri.client import RuntimeClient
from kruise.daemon.imagepuller.puller import ImagePuller
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, EVENTS, NODEIMAGES, PODS
from kruise.sandbox.cri.server import CriServicer
from kruise.sandbox.simulator import Simulator
from tests.kit.daemon_node import (
    NODE,
    NS,
    crr_request,
    image_tag,
    node_image,
    nodeimage_status,
    ready,
    running_pod,
    simulated_node,
)
from tests.kit.polling import until_fetched

CONTAINERS = ["app", "side", "log"]
MIN_STARTED = 5


class PullGate:
    """CRI PullImage calls, counted by image; a redis pull waits until the test releases it."""

    def __init__(self) -> None:
        self.pulls: Counter[str] = Counter()
        self.holding = asyncio.Event()
        self.release = asyncio.Event()


@pytest.fixture
async def cluster(emulator, monkeypatch):
    """The emulator and a simulated node whose CRI counts StopContainer calls per container id and
    PullImage calls per image, holding redis pulls (patched before the CRI server starts serving)."""
    stops: Counter[str] = Counter()
    gate = PullGate()
    original_stop, original_pull = CriServicer.StopContainer, CriServicer.PullImage

    async def counting_stop(self, req, context):
        stops[req.container_id] += 1
        return await original_stop(self, req, context)

    async def held_pull(self, req, context):
        gate.pulls[req.image.image] += 1
        if "redis" in req.image.image:
            gate.holding.set()
            await gate.release.wait()
        return await original_pull(self, req, context)

    monkeypatch.setattr(CriServicer, "StopContainer", counting_stop)
    monkeypatch.setattr(CriServicer, "PullImage", held_pull)
    async with simulated_node(emulator, "daemon-restart-") as (simulator, client):
        simulator.runtimes[NODE].images.fail_images.add("*broken*")
        yield client, simulator, stops, gate


class Daemon:
    """One life of kruise-daemon's component: its own CRI connection, stopped like a crash."""

    def __init__(self, simulator: Simulator) -> None:
        self.runtime = RuntimeClient(simulator.socket_path(NODE))
        self.runtime.open()
        self.component = None
        self.informer: SharedInformer | None = None

    async def crash(self) -> None:
        if self.informer is not None:
            await self.informer.stop()
        if isinstance(self.component, ContainerRecreator):
            await self.component.stop(drain_seconds=0)  # in-flight work is cancelled, not finished
        elif self.component is not None:
            await self.component.stop()
        await self.runtime.close()


def recreator_life(client, simulator, clock, cls=ContainerRecreator) -> Daemon:
    life = Daemon(simulator)
    life.component = cls(client, life.runtime, NODE, clock=clock)
    life.component.start()
    return life


async def three_container_pod(client, name):
    return await running_pod(client, name, dict.fromkeys(CONTAINERS, "busybox:1.36"))


def restarts(pod):
    return {s["name"]: s["restartCount"] for s in pod["status"]["containerStatuses"]}


def states(crr):
    return {s["name"]: s for s in (crr.get("status") or {}).get("containerRecreateStates") or []}


async def finish_with_fresh_recreator(client, simulator, stops, pod, name):
    """A fresh recreator whose clock is past `minStartedSeconds` completes the request; every
    container was stopped exactly once and restarted exactly once."""
    later = recreator_life(client, simulator, lambda: datetime.now(UTC) + timedelta(minutes=1))
    try:
        done = await until_fetched(
            lambda: client.get(CONTAINER_RECREATE_REQUESTS, name, NS),
            lambda c: (c.get("status") or {}).get("phase") == "Completed",
        )
    finally:
        await later.crash()
    assert done["status"]["completionTime"]
    assert "message" not in done["status"]
    final = states(done)
    assert [s["name"] for s in done["status"]["containerRecreateStates"]] == CONTAINERS
    assert all(final[c]["phase"] == "Succeeded" and final[c]["isKilled"] for c in CONTAINERS)
    after = await client.get(PODS, pod["metadata"]["name"], NS)
    assert after["metadata"]["uid"] == pod["metadata"]["uid"]
    assert restarts(after) == dict.fromkeys(CONTAINERS, 1)
    first_ids = {s["containerID"].rpartition("://")[2] for s in pod["status"]["containerStatuses"]}
    assert stops == Counter(dict.fromkeys(first_ids, 1))


async def test_fresh_recreator_finishes_an_ordered_request_after_a_crash(cluster):
    """The first daemon recreated `app` and recorded it, then died while `app` served its
    `minStartedSeconds` (its clock stands still, holding that window open)."""
    client, simulator, stops, _ = cluster
    pod = await three_container_pod(client, "victim")
    frozen = datetime.now(UTC)
    first = recreator_life(client, simulator, lambda: frozen)
    await client.create(
        CONTAINER_RECREATE_REQUESTS,
        crr_request(pod, "crr-ordered", CONTAINERS, orderedRecreate=True, minStartedSeconds=MIN_STARTED),
    )
    try:
        recorded = await until_fetched(
            lambda: client.get(CONTAINER_RECREATE_REQUESTS, "crr-ordered", NS),
            lambda c: states(c).get("app", {}).get("isKilled") is True,
        )
        await until_fetched(
            lambda: client.get(PODS, "victim", NS), lambda p: ready(p) and restarts(p)["app"] == 1
        )
    finally:
        await first.crash()
    assert recorded["status"]["phase"] == "Recreating"
    assert not states(recorded)["side"].get("isKilled") and not states(recorded)["log"].get("isKilled")
    assert restarts(await client.get(PODS, "victim", NS)) == {"app": 1, "side": 0, "log": 0}

    await finish_with_fresh_recreator(client, simulator, stops, pod, "crr-ordered")


class DiesAfterKill(ContainerRecreator):
    """A daemon that dies right after StopContainer returned, before it records the kill."""

    killed: asyncio.Event

    async def _kill(self, crr, pod, kill, states):
        await super()._kill(crr, pod, kill, states)
        self.killed.set()
        await asyncio.Event().wait()  # never writes the status: the crash cancels it here


async def test_kill_not_yet_recorded_is_not_repeated_after_a_crash(cluster):
    """The status says nothing about the kill of `app`; the pod's new containerID (against the
    statusContext) is what keeps the fresh recreator from stopping `app` a second time."""
    client, simulator, stops, _ = cluster
    pod = await three_container_pod(client, "victim")
    frozen = datetime.now(UTC)
    DiesAfterKill.killed = asyncio.Event()
    first = recreator_life(client, simulator, lambda: frozen, cls=DiesAfterKill)
    await client.create(
        CONTAINER_RECREATE_REQUESTS,
        crr_request(pod, "crr-unrecorded", CONTAINERS, orderedRecreate=True, minStartedSeconds=MIN_STARTED),
    )
    try:
        async with asyncio.timeout(30):
            await DiesAfterKill.killed.wait()
        await until_fetched(
            lambda: client.get(PODS, "victim", NS), lambda p: ready(p) and restarts(p)["app"] == 1
        )
    finally:
        await first.crash()
    unrecorded = await client.get(CONTAINER_RECREATE_REQUESTS, "crr-unrecorded", NS)
    assert not any(s.get("isKilled") for s in states(unrecorded).values())

    await finish_with_fresh_recreator(client, simulator, stops, pod, "crr-unrecorded")


# ---- NodeImage pulls across a restart -----------------------------------------------------------


def puller_life(client, simulator) -> Daemon:
    """The puller wired as kruise-daemon wires it: an informer on this node's NodeImage."""
    life = Daemon(simulator)

    async def no_wait(seconds: float) -> None:
        await asyncio.sleep(0)

    puller = ImagePuller(client, life.runtime, NODE, sleep=no_wait)
    informer = SharedInformer(client, NODEIMAGES, None, field_selector=f"metadata.name={NODE}")
    informer.add_event_handler(on_add=puller.sync, on_update=lambda _old, new: puller.sync(new))
    informer.start()
    life.component, life.informer = puller, informer
    return life


def tags_of(status, image):
    return {t["tag"]: t for t in ((status.get("imageStatuses") or {}).get(image) or {}).get("tags") or []}


def phase(image, tag_name):
    return lambda s: tags_of(s, image).get(tag_name, {}).get("phase")


async def test_pull_in_flight_is_finished_by_the_fresh_puller(cluster):
    """redis:7 is mid-pull when the daemon dies; nginx succeeded and broken failed before. The fresh
    puller pulls redis again and leaves the finished tags as the status shows them: no second pull,
    no second event, no duplicated status entry."""
    client, simulator, _, gate = cluster
    await client.create(
        NODEIMAGES,
        node_image(
            {
                "nginx": [image_tag("1.25")],
                "redis": [image_tag("7")],
                "example.com/broken": [image_tag("v1", pullPolicy={"backoffLimit": 0})],
            }
        ),
    )
    status = nodeimage_status(client)

    first = puller_life(client, simulator)
    try:
        async with asyncio.timeout(30):
            await gate.holding.wait()
        before = await until_fetched(
            status,
            lambda s: (
                phase("nginx", "1.25")(s) == "Succeeded"
                and phase("example.com/broken", "v1")(s) == "Failed"
                and phase("redis", "7")(s) == "Pulling"
            ),
        )
    finally:
        await first.crash()
    assert gate.pulls["redis:7"] == 1

    later = puller_life(client, simulator)
    try:
        await until_fetched(lambda: asyncio.sleep(0, gate.pulls["redis:7"]), lambda n: n == 2)  # pulled again
        gate.release.set()
        final = await until_fetched(status, lambda s: s.get("succeeded") == 2 and s.get("pulling") == 0)
    finally:
        await later.crash()  # flushes the events it recorded

    assert (final["desired"], final["failed"], final.get("waiting", 0)) == (3, 1, 0)
    assert set(final["imageStatuses"]) == {"nginx", "redis", "example.com/broken"}
    for image, entry in final["imageStatuses"].items():
        assert len(entry["tags"]) == 1, image
    redis = tags_of(final, "redis")["7"]
    assert redis["phase"] == "Succeeded" and redis["imageID"].startswith("sha256:")
    assert tags_of(final, "nginx") == tags_of(before, "nginx")
    assert tags_of(final, "example.com/broken") == tags_of(before, "example.com/broken")
    assert gate.pulls == Counter({"nginx:1.25": 1, "redis:7": 2, "example.com/broken:v1": 1})

    told = Counter()
    for event in (await client.list(EVENTS, "default"))["items"]:
        image = event["message"].split()[1].rstrip(",")
        told[(event["reason"], image)] += event.get("count") or 1
    assert told == Counter(
        {
            ("PullImageSucceed", "nginx:1.25"): 1,
            ("PullImageSucceed", "redis:7"): 1,
            ("PullImageFailed", "example.com/broken:v1"): 1,
        }
    )
