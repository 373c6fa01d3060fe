"""API errors are routine: one log line (text, reason, code). Anything else is a bug: traceback kept.

The output is rendered by the production `configure_logging`, so "one line" and "no traceback"
are checked on what an operator would actually read, in both formats.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from kruise.kube.clock import FakeClock
from kruise.kube.controller import Controller
from kruise.kube.errors import Conflict, Forbidden, InternalError, TransportError
from kruise.kube.events import EventRecorder
from kruise.kube.informer import InformerOptions, SharedInformer
from kruise.kube.logging import configure_logging
from kruise.kube.ratelimit import ItemExponentialFailureRateLimiter
from kruise.kube.resources import PODS
from tests.kit import until

CONFLICT_TEXT = (
    'Operation cannot be fulfilled on clonesets.apps.kruise.io "web": the object has been modified; '
    "please apply your changes to the latest version and try again"
)
TRACEBACK = "Traceback (most recent call last)"


@contextlib.contextmanager
def rendered_logs(fmt: str) -> Iterator[io.StringIO]:
    """Route structlog through `configure_logging(fmt)` into a buffer; restore the old setup after."""
    out = io.StringIO()
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    configure_logging("info", fmt, out)
    try:
        yield out
    finally:
        structlog.configure(**saved)
        root.handlers[:] = handlers
        root.setLevel(level)


def lines_with(out: io.StringIO, event: str) -> list[str]:
    return [line for line in out.getvalue().splitlines() if event in line]


class Failing:
    """A reconciler that raises `error` on its first call and succeeds afterwards."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    async def reconcile(self, key: str) -> None:
        self.calls += 1
        if self.calls == 1:
            raise self.error


async def run_failing_once(name: str, error: Exception) -> None:
    """One failed reconcile: it is requeued with a 1 s backoff, and the retry succeeds and forgets."""
    clock = FakeClock()
    rec = Failing(error)
    ctrl = Controller(name, rec, rate_limiter=ItemExponentialFailureRateLimiter(1, 100), clock=clock)
    ctrl.start()
    ctrl.queue.add("demo/web")
    await until(lambda: rec.calls == 1 and ctrl.queue.waiting() == 1, timeout=5.0, interval=0)
    assert ctrl.queue.num_requeues("demo/web") == 1
    assert ctrl.queue.ready_at("demo/web") == pytest.approx(clock.now() + 1)
    clock.step(0.9)
    assert rec.calls == 1 and ctrl.queue.waiting() == 1
    clock.step(0.1)
    await until(lambda: rec.calls == 2 and ctrl.queue.num_requeues("demo/web") == 0, timeout=5.0, interval=0)
    await ctrl.stop()


async def test_conflict_is_one_console_line_without_traceback_and_requeued_with_backoff():
    with rendered_logs("console") as out:
        await run_failing_once("unit-conflict-console", Conflict(CONFLICT_TEXT))
    [line] = lines_with(out, "Reconciler error")
    assert CONFLICT_TEXT in line and "reason=Conflict" in line and "code=409" in line
    assert "key=demo/web" in line
    assert TRACEBACK not in out.getvalue()


async def test_conflict_json_line_names_error_reason_code_and_has_no_exception():
    with rendered_logs("json") as out:
        await run_failing_once("unit-conflict-json", Conflict(CONFLICT_TEXT))
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    [record] = [r for r in records if r["event"] == "Reconciler error"]
    assert record["error"] == CONFLICT_TEXT and record["reason"] == "Conflict" and record["code"] == 409
    assert record["key"] == "demo/web" and record["level"] == "error"
    assert "exception" not in record


async def test_transport_error_is_routine_too():
    with rendered_logs("console") as out:
        await run_failing_once("unit-transport", TransportError("GET /api: connection refused"))
    [line] = lines_with(out, "Reconciler error")
    assert "reason=TransportError" in line and "code=0" in line
    assert TRACEBACK not in out.getvalue()


async def test_unexpected_exception_keeps_its_traceback_and_is_requeued_with_backoff():
    with rendered_logs("console") as out:
        await run_failing_once("unit-bug", RuntimeError("nil map"))
    text = out.getvalue()
    assert len(lines_with(out, "Reconciler error")) == 1
    assert TRACEBACK in text and "RuntimeError: nil map" in text and "in reconcile" in text


async def test_unexpected_exception_json_carries_the_exception():
    with rendered_logs("json") as out:
        await run_failing_once("unit-bug-json", KeyError("spec"))
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    [record] = [r for r in records if r["event"] == "Reconciler error"]
    assert TRACEBACK in record["exception"] and "KeyError: 'spec'" in record["exception"]


async def fail_one_list(fake_api, error: Exception) -> None:
    clock = FakeClock()
    fake_api.fail_next = [error]
    informer = SharedInformer(fake_api, PODS, options=InformerOptions(backoff_initial=1.0), clock=clock)
    informer.start()
    await until(lambda: clock.sleepers > 0)
    clock.step(2.0)  # the first backoff is within [1, 2)
    assert await informer.wait_for_sync(5)
    await informer.stop()


async def test_informer_api_error_is_one_line(fake_api):
    with rendered_logs("console") as out:
        await fail_one_list(fake_api, InternalError("etcdserver: leader changed"))
    [line] = lines_with(out, "list/watch failed, backing off")
    assert "etcdserver: leader changed" in line and "reason=InternalError" in line and "code=500" in line
    assert TRACEBACK not in out.getvalue()


async def test_informer_unexpected_exception_keeps_its_traceback(fake_api):
    with rendered_logs("console") as out:
        await fail_one_list(fake_api, ValueError("bad selector parse"))
    text = out.getvalue()
    assert len(lines_with(out, "list/watch failed, backing off")) == 1
    assert TRACEBACK in text and "ValueError: bad selector parse" in text


class RefusingSink:
    """An events API that refuses every write."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def create(self, ref, body, namespace=None, **kw):
        raise self.error

    async def patch(self, ref, name, patch, namespace=None, **kw):
        raise self.error


async def test_event_writer_giving_up_is_one_line_with_reason_and_code():
    text = 'events is forbidden: User "kruise" cannot create resource "events" in namespace "demo"'
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "demo", "uid": "u"}}
    with rendered_logs("console") as out:
        rec = EventRecorder(RefusingSink(Forbidden(text)), "cloneset-controller", clock=FakeClock())
        rec.event(pod, "Normal", "SuccessfulCreate", "created pod web-0")
        await asyncio.wait_for(rec.flush(), 5)
        await rec.stop()
    [line] = lines_with(out, "unable to write event")
    assert text in line and "reason=Forbidden" in line and "code=403" in line and "tries=1" in line
    assert TRACEBACK not in out.getvalue()


TERMINATING_TEXT = (
    'pods "web-0" is forbidden: unable to create new content in namespace demo because it is being terminated'
)


def terminating_error() -> Forbidden:
    """The 403 kube-apiserver's NamespaceLifecycle plugin answers a create in a namespace being deleted."""
    status = {
        "kind": "Status",
        "status": "Failure",
        "message": TERMINATING_TEXT,
        "reason": "Forbidden",
        "code": 403,
        "details": {
            "name": "web-0",
            "kind": "pods",
            "causes": [
                {
                    "reason": "NamespaceTerminating",
                    "message": "namespace demo is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        },
    }
    return Forbidden(TERMINATING_TEXT, status=status)


class CountingSink(RefusingSink):
    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.calls = 0

    async def create(self, ref, body, namespace=None, **kw):
        self.calls += 1
        raise self.error


async def test_event_into_terminating_namespace_is_dropped_quietly_without_retry():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "demo", "uid": "u"}}
    sink = CountingSink(terminating_error())
    with rendered_logs("console") as out:
        rec = EventRecorder(sink, "cloneset-controller", clock=FakeClock())
        rec.event(pod, "Normal", "SuccessfulCreate", "created pod web-0")
        await asyncio.wait_for(rec.flush(), 5)
        await rec.stop()
    assert sink.calls == 1
    assert lines_with(out, "event") == [] and "error" not in out.getvalue()


async def test_create_into_terminating_namespace_is_not_a_reconciler_error_nor_requeued():
    clock = FakeClock()
    rec = Failing(terminating_error())
    ctrl = Controller(
        "unit-terminating", rec, rate_limiter=ItemExponentialFailureRateLimiter(1, 100), clock=clock
    )
    with rendered_logs("console") as out:
        ctrl.start()
        ctrl.queue.add("demo/web")
        await until(
            lambda: (
                rec.calls == 1
                and len(ctrl.queue) == 0
                and not ctrl.queue.processing()
                and ctrl.queue.waiting() == 0
            ),
            timeout=5.0,
        )
        await ctrl.stop()
    assert ctrl.queue.num_requeues("demo/web") == 0
    assert lines_with(out, "Reconciler error") == []


async def test_rbac_forbidden_stays_a_reconciler_error():
    text = 'pods is forbidden: User "kruise" cannot create resource "pods" in namespace "demo"'
    with rendered_logs("console") as out:
        await run_failing_once("unit-rbac", Forbidden(text))
    [line] = lines_with(out, "Reconciler error")
    assert "reason=Forbidden" in line and "code=403" in line
