"""Advanced StatefulSet across a SIGKILL landing inside one in-place update, between its two writes.

`manager/writers/inplace.py` makes an in-place update two writes: `InPlaceUpdateReady=False` on
`pods/status` (the pod leaves the endpoints), then one object write with the new image, revision
labels and `inplace-update-state`. A manager killed between the two leaves a pod not ready, on its old
spec, with no in-place state. The crash is put exactly there: the old manager's client parks its
first pod object write forever (the request is never sent), and `restart_manager(hard=True)` cancels
the parked pass. The fresh manager must finish that pod's update from what the pod says, update it
once, and keep maxUnavailable.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from kruise.api.keys import ANNOTATION_INPLACE_UPDATE_STATE
from kruise.kube.resources import ADVANCED_STATEFULSETS, PODS, ResourceRef
from kruise.manager.context import ControllerSetup, ManagerContext
from kruise.manager.controllers.statefulset import SETUP
from tests.integration.manager.test_statefulset_controller import (
    get_sts,
    manifest,
    new_image,
    pods_of,
    ready,
    restarts,
    settled,
    update_spec,
)

REPLICAS = 4


class ParkingClient:
    """The old manager's client: its first pod object write (`update` of a pod, not `update_status`)
    never returns and is never sent; `parked` is set once it waits. Everything else goes through."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.parked = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if name != "update":
            return attr

        async def update(ref: ResourceRef, *args: Any, **kwargs: Any) -> Any:
            if ref == PODS and not self.parked.is_set():
                self.parked.set()
                await asyncio.Event().wait()  # killed here by the hard restart
            return await attr(ref, *args, **kwargs)

        return update


def parking_setup(setup: ControllerSetup, client: ParkingClient) -> ControllerSetup:
    """`setup`'s controller built as the manager builds it, with `client` for its API calls."""

    def build(ctx: ManagerContext) -> Any:
        return setup.build(dataclasses.replace(ctx, client=client))

    return dataclasses.replace(setup, build=build)


def condition(pod: dict[str, Any], kind: str) -> str | None:
    return next((c["status"] for c in pod["status"].get("conditions", []) if c["type"] == kind), None)


async def test_hard_crash_between_unready_patch_and_spec_write_updates_the_pod_once(kruise_cluster):
    parking = ParkingClient(kruise_cluster.client)
    await kruise_cluster.restart_manager([parking_setup(SETUP, parking)])
    body = manifest(
        replicas=REPLICAS,
        podManagementPolicy="Parallel",
        updateStrategy={"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}},
    )
    await kruise_cluster.client.create(ADVANCED_STATEFULSETS, body)
    await settled(kruise_cluster, "web", REPLICAS, updatedReplicas=REPLICAS)
    before = await pods_of(kruise_cluster, "web")
    worst = 0

    async def observe() -> dict[str, dict[str, Any]]:
        nonlocal worst
        pods = await pods_of(kruise_cluster, "web")
        worst = max(worst, REPLICAS - sum(ready(p) for p in pods.values()))
        return pods

    await update_spec(kruise_cluster, "web", new_image("nginx:mainline"))
    async with asyncio.timeout(30):
        await parking.parked.wait()
    # what the killed pass leaves (its parked write is never sent): one pod out of the endpoints,
    # still on its old spec, no in-place state. Read before the fresh manager starts, which (as
    # upstream's refresh does for a pod without in-place state) first flips the pod ready again.
    crashed = await observe()
    half = [n for n, p in crashed.items() if condition(p, "InPlaceUpdateReady") == "False"]
    assert len(half) == 1, {n: condition(p, "InPlaceUpdateReady") for n, p in crashed.items()}
    [name] = half
    assert crashed[name]["spec"]["containers"][0]["image"] == "nginx:alpine"
    assert ANNOTATION_INPLACE_UPDATE_STATE not in crashed[name]["metadata"].get("annotations", {})
    assert all(p["spec"]["containers"][0]["image"] == "nginx:alpine" for p in crashed.values())
    await kruise_cluster.restart_manager([SETUP], hard=True)

    target = (await get_sts(kruise_cluster, "web"))["metadata"]["generation"]

    async def status() -> dict[str, Any]:
        await observe()
        return await get_sts(kruise_cluster, "web")

    def done(sts: dict[str, Any]) -> bool:
        s = sts.get("status") or {}
        return s.get("observedGeneration") == target and s.get("updatedReadyReplicas") == REPLICAS

    sts = await kruise_cluster.until(status, done, timeout=60)
    after = await pods_of(kruise_cluster, "web")
    assert {n: p["metadata"]["uid"] for n, p in after.items()} == {
        n: p["metadata"]["uid"] for n, p in before.items()
    }
    for pod_name, pod in after.items():
        assert pod["spec"]["containers"][0]["image"] == "nginx:mainline", pod_name
        assert restarts(pod) == 1, pod_name
        assert condition(pod, "InPlaceUpdateReady") == "True", pod_name
        assert pod["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]
    # the half-updated pod counts against maxUnavailable 1: no second pod went down beside it
    assert worst == 1
