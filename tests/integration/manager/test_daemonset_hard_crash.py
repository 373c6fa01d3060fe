"""Advanced DaemonSet across a SIGKILL landing inside one in-place update, between its two writes
(`InPlaceUpdateReady=False` patched, the spec write not sent): the fresh manager finishes that pod's
update from what the pod says and updates it once; maxUnavailable holds as upstream counts it (an
old pod already unavailable is replaced outside the budget). The crash is placed as in
`test_statefulset_hard_crash`: the old manager's first pod object write is parked, then killed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kruise.api.keys import ANNOTATION_INPLACE_UPDATE_STATE
from kruise.control.common.nodeeligibility import target_node_name
from kruise.kube.resources import ADVANCED_DAEMONSETS
from kruise.manager.controllers.daemonset import SETUP
from tests.integration.manager.test_daemonset_controller import (
    is_new,
    live_pods,
    manifest,
    ready,
    set_image,
    settled,
    update_template,
)
from tests.integration.manager.test_daemonset_crash import all_pods, converge, image, restarts
from tests.integration.manager.test_statefulset_hard_crash import ParkingClient, condition, parking_setup

NODES = 3
OLD, NEW = "nginx:alpine", "nginx:mainline"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.mark.parametrize("simulator_nodes", [NODES])
async def test_hard_crash_between_unready_patch_and_spec_write_updates_the_pod_once(kruise_cluster):
    parking = ParkingClient(kruise_cluster.client)
    await kruise_cluster.restart_manager([parking_setup(SETUP, parking)])
    strategy = {
        "type": "RollingUpdate",
        "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1},
    }
    await kruise_cluster.client.create(ADVANCED_DAEMONSETS, manifest(updateStrategy=strategy))
    await settled(kruise_cluster, NODES, timeout=60.0)
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await live_pods(kruise_cluster)}
    worst = 0

    async def observe() -> list[dict[str, Any]]:
        nonlocal worst
        pods = await all_pods(kruise_cluster)
        serving = {
            target_node_name(p) for p in pods if not p["metadata"].get("deletionTimestamp") and ready(p)
        }
        worst = max(worst, NODES - len(serving))
        return pods

    await update_template(kruise_cluster, set_image(NEW))
    async with asyncio.timeout(30):
        await parking.parked.wait()
    # what the killed pass leaves (its parked write is never sent), read before the fresh manager starts
    crashed = await observe()
    half = [p for p in crashed if condition(p, "InPlaceUpdateReady") == "False"]
    assert len(half) == 1, [(p["metadata"]["name"], condition(p, "InPlaceUpdateReady")) for p in crashed]
    assert ANNOTATION_INPLACE_UPDATE_STATE not in half[0]["metadata"].get("annotations", {})
    assert all(image(p) == OLD for p in crashed)
    await kruise_cluster.restart_manager([SETUP], hard=True)

    ds = await converge(kruise_cluster, NODES, observe)
    after = await all_pods(kruise_cluster)
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in after} == before
    for pod in after:
        name = pod["metadata"]["name"]
        assert image(pod) == NEW, name
        assert restarts(pod) == 1, name
        assert condition(pod, "InPlaceUpdateReady") == "True", name
        assert is_new(pod, ds["status"]["daemonSetHash"]), name
    # the half-updated pod is old and unavailable: upstream's rollingUpdate replaces such a pod
    # outside the budget (allowedReplacementPods), so one more node may go down beside it
    assert 1 <= worst <= 2
