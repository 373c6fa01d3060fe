"""NodeImage status timeouts against the emulator, on the manager's fake clock: a tag the node never
answers is marked Failed 10 minutes after `createdAt` (the controller parks until exactly then), with
PullImageFailed events from nodeimage-controller on the owning ImagePullJob and on the NodeImage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.resources import EVENTS, IMAGEPULLJOBS, NODEIMAGES
from kruise.manager.controllers.nodeimage import SETUP

NAME = "virtual"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def manager_clock():
    return FakeClock(wall_start=datetime.now(UTC))


async def test_an_unanswered_tag_fails_after_ten_minutes(kruise_cluster, manager_clock):
    client, clock = kruise_cluster.client, manager_clock
    created = rfc3339(clock.wall() - timedelta(minutes=4))
    job = await client.create(IMAGEPULLJOBS, {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
        "metadata": {"namespace": "default", "name": "warm"}, "spec": {"image": "nginx:1.25"}})  # fmt: skip
    owner = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "namespace": "default",
             "name": "warm", "uid": job["metadata"]["uid"]}  # fmt: skip
    jobs = kruise_cluster.context.informers.informer(IMAGEPULLJOBS)

    async def cached_job():
        return jobs.get("default/warm")

    await kruise_cluster.until(cached_job, lambda found: found is not None)  # else its tag looks orphaned
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": NAME, "labels": {"apps.kruise.io/fake-nodeimage": "true"}},
        "spec": {"images": {"nginx": {"tags": [
            {"tag": "1.25", "version": 0, "createdAt": created, "ownerReferences": [owner],
             "pullPolicy": {}}]}}},
    }  # fmt: skip
    await client.create(NODEIMAGES, body)
    (controller,) = kruise_cluster.controllers

    async def parked_for():
        ready = controller.queue.ready_at(NAME)
        return None if ready is None else ready - clock.now()

    assert await kruise_cluster.until(parked_for, lambda left: left is not None) == pytest.approx(
        360.0, abs=1.0
    )
    assert not (await client.get(NODEIMAGES, NAME)).get("status", {}).get("imageStatuses")

    clock.step(361.0)
    status = await kruise_cluster.until(
        lambda: client.get(NODEIMAGES, NAME), lambda n: (n.get("status") or {}).get("failed") == 1
    )
    status = status["status"]
    (tag,) = status["imageStatuses"]["nginx"]["tags"]
    assert (tag["phase"], tag["version"], tag["message"]) == (
        "Failed",
        0,
        "node has not responded for a long time",
    )
    assert (status["desired"], status["pulling"], status["succeeded"]) == (1, 0, 0)

    message = f"Failed to pull image nginx:1.25 on node {NAME} for node has not responded for a long time"

    async def failures():
        items = (await client.list(EVENTS, namespace="default"))["items"]
        return sorted(
            (e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["source"]["component"])
            for e in items
            if e["reason"] == "PullImageFailed" and e["message"] == message
        )

    assert await kruise_cluster.until(failures, lambda found: len(found) == 2) == [
        ("ImagePullJob", "warm", "Warning", "nodeimage-controller"),
        ("NodeImage", NAME, "Warning", "nodeimage-controller"),
    ]
