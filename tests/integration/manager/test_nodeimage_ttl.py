"""NodeImage spec clean-up against the emulator, on the manager's fake clock: a finished tag leaves
when its ttlSecondsAfterFinished runs out (the controller comes back at that moment, no polling),
a tag whose ImagePullJob is gone leaves at once, and an image left without tags goes with them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kruise.kube.clock import FakeClock, rfc3339
from kruise.kube.resources import NODEIMAGES
from kruise.manager.controllers.nodeimage import SETUP

NAME = "virtual"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def manager_clock():
    return FakeClock(wall_start=datetime.now(UTC))


def tag(name, clock, **extra):
    return {"tag": name, "version": 0, "createdAt": rfc3339(clock.wall() - timedelta(minutes=5)), **extra}


async def test_finished_tags_leave_after_their_ttl_and_orphaned_tags_at_once(kruise_cluster, manager_clock):
    client, clock = kruise_cluster.client, manager_clock
    gone_job = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "namespace": "default",
                "name": "deleted-job", "uid": "00000000-0000-4000-8000-00000000dead"}  # fmt: skip
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "NodeImage",
        "metadata": {"name": NAME, "labels": {"apps.kruise.io/fake-nodeimage": "true"}},
        "spec": {
            "images": {
                "nginx": {"tags": [tag("1.25", clock, pullPolicy={"ttlSecondsAfterFinished": 120})]},
                "redis": {"tags": [tag("7", clock), tag("6", clock, ownerReferences=[gone_job])]},
            }
        },
    }
    await client.create(NODEIMAGES, body)

    async def images():
        return (await client.get(NODEIMAGES, NAME))["spec"].get("images") or {}

    def tags(spec):
        return {name: [t["tag"] for t in image["tags"]] for name, image in spec.items()}

    # the tag owned only by a deleted job goes at once; the unfinished TTL tag has nothing to count from
    await kruise_cluster.until(images, lambda s: tags(s) == {"nginx": ["1.25"], "redis": ["7"]})

    finished = clock.wall() - timedelta(seconds=20)
    status = {"imageStatuses": {"nginx": {"tags": [
        {"tag": "1.25", "version": 0, "phase": "Succeeded", "progress": 100,
         "completionTime": rfc3339(finished)}]}}}  # fmt: skip
    await client.patch(NODEIMAGES, NAME, {"status": status}, subresource="status")
    # the status write wakes the controller, which schedules the expiry 100 s ahead on its clock (till
    # then it was parked for redis:7's 10-minute response timeout, 300 s ahead)
    (controller,) = kruise_cluster.controllers

    async def parked_for():
        ready = controller.queue.ready_at(NAME)
        return None if ready is None else ready - clock.now()

    assert await kruise_cluster.until(
        parked_for, lambda left: left is not None and left < 200
    ) == pytest.approx(100.0, abs=1.0)
    assert tags(await images()) == {"nginx": ["1.25"], "redis": ["7"]}

    clock.step(101.0)
    await kruise_cluster.until(images, lambda s: tags(s) == {"redis": ["7"]})
