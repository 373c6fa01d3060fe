import pytest
import structlog
from structlog.testing import capture_logs

from kruise.kube.clock import FakeClock
from kruise.kube.errors import InternalError, NotFound
from kruise.kube.events import COMBINED_PREFIX, CorrelatorOptions, EventCorrelator, EventRecorder
from tests.kit import until

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web-0", "namespace": "demo", "uid": "u1", "resourceVersion": "7"},
}


class Sink:
    def __init__(self):
        self.calls = []
        self.fail: list[Exception] = []

    async def create(self, ref, body, namespace=None, **kw):
        if self.fail:
            raise self.fail.pop(0)
        self.calls.append(("create", body))
        return body

    async def patch(self, ref, name, patch, namespace=None, **kw):
        if self.fail:
            raise self.fail.pop(0)
        self.calls.append(("patch", name, patch, kw.get("patch_type")))
        return patch


def recorder(sink, clock, **kw):
    return EventRecorder(sink, "cloneset-controller", "node-1", clock=clock, **kw)


async def test_first_event_is_created_with_client_go_shape():
    sink, clock = Sink(), FakeClock()
    rec = recorder(sink, clock)
    rec.event(POD, "Normal", "SuccessfulCreate", "succeed to create pod web-0")
    await rec.flush()
    [(op, body)] = sink.calls
    assert op == "create"
    assert body["metadata"]["namespace"] == "demo"
    assert body["metadata"]["name"].startswith("web-0.")
    assert int(body["metadata"]["name"].split(".")[1], 16) > 0
    assert body["involvedObject"] == {
        "kind": "Pod",
        "namespace": "demo",
        "name": "web-0",
        "uid": "u1",
        "apiVersion": "v1",
        "resourceVersion": "7",
    }
    assert body["source"] == {"component": "cloneset-controller", "host": "node-1"}
    assert body["count"] == 1 and body["type"] == "Normal"
    assert body["firstTimestamp"] == body["lastTimestamp"] == "2026-11-22T23:00:00Z"
    await rec.stop()


async def test_identical_event_becomes_patch_with_count():
    sink, clock = Sink(), FakeClock()
    rec = recorder(sink, clock)
    rec.event(POD, "Warning", "FailedCreate", "quota exceeded")
    await rec.flush()
    clock.step(5)
    rec.event(POD, "Warning", "FailedCreate", "quota exceeded")
    clock.step(5)
    rec.event(POD, "Warning", "FailedCreate", "quota exceeded")
    await rec.flush()
    name = sink.calls[0][1]["metadata"]["name"]
    assert [c[0] for c in sink.calls] == ["create", "patch", "patch"]
    _, patched, patch, ptype = sink.calls[2]
    assert patched == name and patch["count"] == 3 and patch["lastTimestamp"] == "2026-11-22T23:00:10Z"
    assert ptype == "application/strategic-merge-patch+json"
    await rec.stop()


async def test_patch_of_vanished_event_recreates_it():
    sink, clock = Sink(), FakeClock()
    rec = recorder(sink, clock)
    rec.event(POD, "Normal", "R", "m")
    await rec.flush()
    sink.fail = [NotFound("events not found")]
    rec.event(POD, "Normal", "R", "m")
    await rec.flush()
    assert [c[0] for c in sink.calls] == ["create", "create"]
    assert sink.calls[1][1]["count"] == 2
    await rec.stop()


def make(msg, reason="R"):
    return {
        "metadata": {"name": f"x.{msg}", "namespace": "demo"},
        "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "demo", "uid": "u1"},
        "source": {"component": "c"},
        "reason": reason,
        "message": msg,
        "type": "Normal",
        "count": 1,
        "firstTimestamp": "t0",
        "lastTimestamp": "t0",
    }


def test_similar_events_aggregate_after_ten_in_ten_minutes():
    clock = FakeClock()
    corr = EventCorrelator(clock)
    results = [corr.correlate(make(f"msg {i}")) for i in range(12)]
    assert all(not r.event["message"].startswith(COMBINED_PREFIX) for r in results[:9])
    assert results[9].event["message"] == COMBINED_PREFIX + "msg 9" and results[9].patch is None
    # Further similar events patch the one combined event.
    assert results[10].patch == {"count": 2, "lastTimestamp": "t0", "message": COMBINED_PREFIX + "msg 10"}
    assert results[11].event["metadata"]["name"] == results[9].event["metadata"]["name"]
    # A different reason is a different aggregate.
    assert not corr.correlate(make("other", reason="Other")).event["message"].startswith(COMBINED_PREFIX)


def test_aggregation_window_resets_after_ten_minutes():
    clock = FakeClock()
    corr = EventCorrelator(clock)
    for i in range(9):
        corr.correlate(make(f"m{i}"))
    clock.step(601)
    assert not corr.correlate(make("late")).event["message"].startswith(COMBINED_PREFIX)


def test_spam_filter_burst_25_then_one_per_five_minutes():
    clock = FakeClock()
    corr = EventCorrelator(clock, CorrelatorOptions(max_events=10_000))
    kept = [corr.correlate(make(f"m{i}")) is not None for i in range(30)]
    assert kept == [True] * 25 + [False] * 5
    clock.step(299)
    assert corr.correlate(make("a")) is None
    clock.step(1)
    assert corr.correlate(make("b")) is not None
    assert corr.correlate(make("c")) is None
    # Another object has its own bucket.
    other = make("z")
    other["involvedObject"] = {**other["involvedObject"], "name": "web-1", "uid": "u2"}
    assert corr.correlate(other) is not None


async def test_retries_server_errors_on_the_clock_and_gives_up_on_4xx():
    sink, clock = Sink(), FakeClock()
    rec = recorder(sink, clock, retry_interval=10)
    sink.fail = [InternalError("etcd down")]
    rec.event(POD, "Normal", "R", "m")
    await until(lambda: clock.sleepers, timeout=5, interval=0, message="the sender parks on the fake clock")
    clock.step(10)
    await rec.flush()
    assert [c[0] for c in sink.calls] == ["create"]
    sink.fail = [NotFound("namespace demo not found")]
    rec.event(POD, "Normal", "R2", "m")
    await rec.flush()
    assert len(sink.calls) == 1
    await rec.stop()


async def test_event_validation_and_queue_overflow():
    sink, clock = Sink(), FakeClock()
    rec = recorder(sink, clock, queue_size=2)
    with pytest.raises(ValueError, match='type: Unsupported value: "Info"'):
        rec.event(POD, "Info", "R", "m")
    with pytest.raises(ValueError, match="reason: Required value"):
        rec.event(POD, "Normal", "", "m")
    for i in range(5):
        rec.eventf(POD, "Normal", "R", "n=%d", i)
    assert rec.dropped == 3
    await rec.flush()
    assert [c[1]["message"] for c in sink.calls] == ["n=0", "n=1"]
    await rec.stop()


async def test_sender_logs_each_event_with_its_own_callers_context():
    """The sender task must not inherit the first caller's bound `key` for every later event."""
    sink, clock = Sink(), FakeClock()
    sink.fail = [InternalError("boom")] * 2  # one failed write per event, each logged once
    rec = recorder(sink, clock, max_tries=1)
    other = {**POD, "metadata": {**POD["metadata"], "name": "web-1", "uid": "u2"}}
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        with structlog.contextvars.bound_contextvars(controller="cloneset", key="demo/first"):
            rec.event(POD, "Warning", "FailedCreate", "first")
        await rec.flush()
        with structlog.contextvars.bound_contextvars(controller="cloneset", key="demo/second"):
            rec.event(other, "Warning", "FailedCreate", "second")
        await rec.flush()
    giving_up = [line for line in logs if line["event"].startswith("unable to write event")]
    assert [line.get("key") for line in giving_up] == ["demo/first", "demo/second"]
    assert [line.get("object") for line in giving_up] == ["Pod demo/web-0", "Pod demo/web-1"]
    await rec.stop()
