import asyncio

import pytest
from prometheus_client import REGISTRY

from kruise.kube.clock import FakeClock
from kruise.kube.controller import Controller, Result, TerminalError, enqueue_object, enqueue_owner
from kruise.kube.informer import SharedInformer
from kruise.kube.ratelimit import ItemExponentialFailureRateLimiter
from kruise.kube.resources import PODS
from tests.kit import until


def owned(name, owner_kind, owner_name, controller=True, api_version="apps.kruise.io/v1alpha1"):
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "ownerReferences": [
                {
                    "apiVersion": api_version,
                    "kind": owner_kind,
                    "name": owner_name,
                    "uid": "u",
                    "controller": controller,
                }
            ],
        }
    }


def test_enqueue_owner_maps_controller_ref_of_kind():
    mapper = enqueue_owner("CloneSet", "apps.kruise.io")
    assert mapper(owned("p", "CloneSet", "cs")) == ["ns/cs"]
    assert mapper(owned("p", "CloneSet", "cs", controller=False)) == []
    assert mapper(owned("p", "ReplicaSet", "rs")) == []
    assert mapper(owned("p", "CloneSet", "cs", api_version="other.io/v1")) == []
    assert enqueue_owner("CloneSet")(owned("p", "CloneSet", "cs", api_version="other.io/v1")) == ["ns/cs"]
    assert enqueue_object(owned("p", "CloneSet", "cs")) == ["ns/p"]


class Script:
    """A reconciler whose answers per call are scripted, recording calls."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls: list[str] = []
        self.called = asyncio.Event()

    async def reconcile(self, key):
        self.calls.append(key)
        self.called.set()
        answer = self.answers.pop(0) if self.answers else None
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def wait_calls(self, n):
        async with asyncio.timeout(5):
            while len(self.calls) < n:
                self.called.clear()
                await self.called.wait()


def _until(predicate):
    """Yield to the loop until `predicate()` holds: no timer is involved, only other tasks running."""
    return until(predicate, timeout=5.0, interval=0)


def sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def test_error_requeues_with_backoff_then_success_forgets():
    clock = FakeClock()
    rec = Script(RuntimeError("boom"), RuntimeError("boom"), None)
    ctrl = Controller("unit-errors", rec, rate_limiter=ItemExponentialFailureRateLimiter(1, 100), clock=clock)
    ctrl.start()
    ctrl.queue.add("ns/a")
    await rec.wait_calls(1)
    assert ctrl.queue.num_requeues("ns/a") == 1
    clock.step(1)
    await rec.wait_calls(2)
    clock.step(1.5)
    # second backoff is 2 s: the key is still parked, so no third call can be underway
    assert ctrl.queue.waiting() == 1 and len(ctrl.queue) == 0 and len(rec.calls) == 2
    clock.step(0.5)
    await rec.wait_calls(3)
    await ctrl.stop()
    assert ctrl.queue.num_requeues("ns/a") == 0
    assert sample("controller_runtime_reconcile_total", controller="unit-errors", result="error") == 2
    assert sample("controller_runtime_reconcile_errors_total", controller="unit-errors") == 2
    assert sample("controller_runtime_reconcile_total", controller="unit-errors", result="success") == 1


async def test_requeue_after_and_requeue_and_terminal():
    clock = FakeClock()
    rec = Script(Result(requeue_after=30), Result(requeue=True), TerminalError("bad spec"))
    ctrl = Controller(
        "unit-results", rec, rate_limiter=ItemExponentialFailureRateLimiter(2, 100), clock=clock
    )
    ctrl.start()
    ctrl.queue.add("k")
    await rec.wait_calls(1)
    clock.step(29)
    assert ctrl.queue.waiting() == 1 and len(ctrl.queue) == 0 and len(rec.calls) == 1
    clock.step(1)
    await rec.wait_calls(2)
    clock.step(2)
    await rec.wait_calls(3)
    # the terminal error is forgotten once the worker has handled it: nothing parked, no backoff left
    await _until(
        lambda: ctrl.queue.num_requeues("k") == 0 and ctrl.queue.waiting() == 0 and not len(ctrl.queue)
    )
    await ctrl.stop()
    assert (
        sample("controller_runtime_reconcile_total", controller="unit-results", result="requeue_after") == 1
    )
    assert sample("controller_runtime_reconcile_total", controller="unit-results", result="requeue") == 1


async def test_plain_function_reconciler_and_workers_never_share_a_key():
    running: set[str] = set()
    overlap = False
    done = asyncio.Event()
    count = 0

    async def reconcile(key):
        nonlocal overlap, count
        overlap |= key in running
        running.add(key)
        await asyncio.sleep(0.001)
        running.discard(key)
        count += 1
        if count >= 40:
            done.set()

    ctrl = Controller("unit-func", reconcile, workers=4)
    ctrl.start()
    for i in range(40):
        ctrl.queue.add(f"k{i % 5}")
        await asyncio.sleep(0)
        if count >= 40:
            break
    for i in range(40):
        ctrl.queue.add(f"x{i}")
    await asyncio.wait_for(done.wait(), 5)
    await ctrl.stop()
    assert not overlap


async def test_stop_waits_for_in_flight_reconcile():
    release = asyncio.Event()
    started = asyncio.Event()
    finished = []

    async def reconcile(key):
        started.set()
        await release.wait()
        finished.append(key)

    ctrl = Controller("unit-drain", reconcile)
    ctrl.start()
    ctrl.queue.add("a")
    ctrl.queue.add("b")
    await asyncio.wait_for(started.wait(), 5)
    stopper = asyncio.ensure_future(ctrl.stop())
    await _until(lambda: ctrl.queue.shutting_down)
    assert not stopper.done()  # blocked on the in-flight reconcile, which waits for `release`
    release.set()
    await asyncio.wait_for(stopper, 5)
    assert finished == ["a"]  # b was queued but not started: dropped on shutdown


async def test_stop_cancels_after_timeout():
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def reconcile(key):
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    ctrl = Controller("unit-timeout", reconcile)
    ctrl.start()
    ctrl.queue.add("a")
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.wait_for(ctrl.stop(timeout=0.05), 5)
    assert cancelled.is_set()


async def test_watch_maps_informer_events_to_owner_keys(fake_api):
    seen: list[str] = []
    got = asyncio.Event()

    async def reconcile(key):
        seen.append(key)
        got.set()

    informer = SharedInformer(fake_api, PODS)
    ctrl = Controller("unit-watch", reconcile)
    ctrl.watch(informer, enqueue_owner("CloneSet"))
    fake_api.put(
        "p1",
        ns="default",
        **{},
    )
    fake_api.objects["default/p1"]["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet",
            "name": "cs",
            "uid": "u",
            "controller": True,
        }
    ]
    informer.start()
    await informer.wait_for_sync(5)
    ctrl.start()
    await asyncio.wait_for(got.wait(), 5)
    assert seen == ["default/cs"]
    await ctrl.stop()
    await informer.stop()


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers"):
        Controller("x", lambda k: None, workers=0)


async def test_reconciler_log_lines_carry_the_key():
    import io
    import json
    import logging

    import structlog

    from kruise.kube.logging import configure_logging

    out = io.StringIO()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    configure_logging("info", "json", out)
    done = asyncio.Event()

    async def reconcile(key):
        structlog.get_logger("reconciler").info("Scaling up", replicas=3)
        done.set()

    try:
        ctrl = Controller("unit-logs", reconcile)
        ctrl.start()
        ctrl.queue.add("ns/web")
        await asyncio.wait_for(done.wait(), 5)
        await ctrl.stop()
        lines = [json.loads(line) for line in out.getvalue().splitlines()]
        [line] = [x for x in lines if x["event"] == "Scaling up"]
        assert line["key"] == "ns/web" and line["controller"] == "unit-logs" and line["replicas"] == 3
    finally:
        structlog.reset_defaults()
        root.handlers[:] = handlers
        root.setLevel(level)
