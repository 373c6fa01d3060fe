"""Which pod events wake the SidecarSet controller, through the wiring `build` gives the manager (issue
31): a created or deleted pod, a readiness flip, a pod starting to terminate, a label change under an
`updateStrategy.selector` wake it now; its sidecars catching up with their spec images wakes it after
5 s; any other pod write (a kubelet status heartbeat, a condition patch) does not. Before, every pod
write woke it, and each pass a PodUnavailableBudget refused counted in the key's backoff, so a rollout
blocked by the budget retried minutes late once the budget freed up."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.clock import FakeClock
from kruise.kube.resources import PODS, SIDECARSETS, ResourceRef
from kruise.kube.store import DeletedFinalStateUnknown
from kruise.manager.context import ManagerContext
from kruise.manager.controllers.sidecarset.controller import build
from tests.kit import FakeInformer, RecordingClient
from tests.unit.manager.test_sidecarset_reconciler import running_pod, sidecarset

KEY = "logs"


class HandledInformer(FakeInformer):
    """A FakeInformer that keeps the handlers a controller registers, for the test to call."""

    def __init__(self) -> None:
        super().__init__()
        self.handlers: list[dict[str, Any]] = []

    def add_event_handler(self, on_add=None, on_update=None, on_delete=None) -> None:
        self.handlers.append({"on_add": on_add, "on_update": on_update, "on_delete": on_delete})

    def fire(self, kind: str, *args: Any) -> None:
        for handler in self.handlers:
            if handler[kind] is not None:
                handler[kind](*args)


class Informers:
    """The informer factory `build` asks for its caches."""

    def __init__(self) -> None:
        self.by_ref: dict[ResourceRef, HandledInformer] = {}

    def informer(self, ref: ResourceRef, **_: Any) -> HandledInformer:
        return self.by_ref.setdefault(ref, HandledInformer())


class Wired:
    def __init__(self, current: dict[str, Any]) -> None:
        self.clock = FakeClock()
        informers = Informers()
        ctx = ManagerContext(
            client=RecordingClient(self.clock),  # type: ignore[arg-type]
            informers=informers,  # type: ignore[arg-type]
            feature_gates=FeatureGates(env={}),
            clock=self.clock,
        )
        self.controller = build(ctx)
        self.sidecarsets = informers.by_ref[SIDECARSETS]
        self.sidecarsets.add(current)
        self.pods = informers.by_ref[PODS]

    def queued(self) -> bool:
        return len(self.controller.queue) == 1

    def parked_for(self) -> float | None:
        ready = self.controller.queue.ready_at(KEY)
        return None if ready is None else ready - self.clock.now()


def with_rv(pod: dict[str, Any], rv: str) -> dict[str, Any]:
    pod = copy.deepcopy(pod)
    pod["metadata"]["resourceVersion"] = rv
    return pod


def set_ready(pod: dict[str, Any], ready: bool) -> None:
    for cond in pod["status"]["conditions"]:
        cond["status"] = "True" if ready else "False"


def sidecar_status(pod: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in pod["status"]["containerStatuses"] if s["name"] == "sidecar1")


def pod_pair(current: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    old = with_rv(running_pod("p1", current), "10")
    return old, with_rv(old, "11")


async def test_a_status_write_that_changes_nothing_the_pass_reads_does_not_wake_it():
    current = sidecarset()
    wired = Wired(current)
    old, new = pod_pair(current)
    new["status"]["containerStatuses"][0]["restartCount"] = 3  # the app container restarted, still ready
    new["status"]["conditions"].append({"type": "SidecarSetUpgradable", "status": "True"})
    wired.pods.fire("on_update", old, new)
    assert not wired.queued() and wired.parked_for() is None


async def test_readiness_flip_wakes_it_now():
    current = sidecarset()
    wired = Wired(current)
    old, new = pod_pair(current)
    set_ready(new, False)
    wired.pods.fire("on_update", old, new)
    assert wired.queued()


async def test_sidecar_catching_up_with_its_image_wakes_it_after_5s():
    """An in-place update written, then the kubelet runs the new image: consistent again."""
    current = sidecarset("busybox:1.35")
    wired = Wired(current)
    running = with_rv(running_pod("p1", sidecarset()), "10")
    running["metadata"]["annotations"]["kruise.io/sidecarset-inplace-update-state"] = (
        '{"logs":{"revision":"r","updateTimestamp":"2024-01-01T00:00:00Z",'
        '"lastContainerStatuses":{"sidecar1":{"imageID":"sha-busybox:1.34"}}}}'
    )
    behind = with_rv(running, "11")
    next(c for c in behind["spec"]["containers"] if c["name"] == "sidecar1")["image"] = "busybox:1.35"
    caught_up = with_rv(behind, "12")
    sidecar_status(caught_up).update(image="busybox:1.35", imageID="sha-busybox:1.35")
    wired.pods.fire("on_update", behind, caught_up)
    assert not wired.queued()
    assert wired.parked_for() == pytest.approx(5.0)


async def test_terminating_pod_wakes_it_and_a_later_write_does_not():
    current = sidecarset()
    wired = Wired(current)
    old, new = pod_pair(current)
    new["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    wired.pods.fire("on_update", old, new)
    assert wired.queued()
    wired.controller.queue = type(wired.controller.queue)("sidecarset-test", clock=wired.clock)
    wired.pods.fire("on_update", new, with_rv(new, "12"))
    assert not wired.queued()


async def test_labels_matter_only_under_an_update_selector():
    plain = Wired(sidecarset())
    old, new = pod_pair(sidecarset())
    new["metadata"]["labels"]["canary"] = "true"
    plain.pods.fire("on_update", old, new)
    assert not plain.queued()

    selective = Wired(sidecarset(selector={"matchLabels": {"canary": "true"}}))
    selective.pods.fire("on_update", old, new)
    assert selective.queued()


async def test_not_update_sidecarset_is_not_woken_by_pod_updates():
    current = sidecarset(type="NotUpdate")
    wired = Wired(current)
    old, new = pod_pair(current)
    set_ready(new, False)
    wired.pods.fire("on_update", old, new)
    assert not wired.queued()


async def test_created_and_deleted_pods_wake_it():
    current = sidecarset()
    created = Wired(current)
    created.pods.fire("on_add", running_pod("p1", current))
    assert created.queued()

    deleted = Wired(current)
    deleted.pods.fire("on_delete", DeletedFinalStateUnknown("default/p1", running_pod("p1", current)))
    assert deleted.queued()


async def test_pods_it_was_not_injected_into_do_not_wake_it():
    current = sidecarset()
    wired = Wired(current)
    other = sidecarset()
    other["metadata"]["name"] = "other"
    old = with_rv(running_pod("p1", other), "10")
    new = with_rv(old, "11")
    set_ready(new, False)
    wired.pods.fire("on_update", old, new)
    assert not wired.queued()
