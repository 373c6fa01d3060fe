"""EventRecorder: core/v1 Events the way client-go's `tools/record` writes them.

`recorder.event(obj, "Normal", "SuccessfulCreate", "...")` never blocks and never fails the
caller: events go on a bounded queue (dropped when full, like the broadcaster's 1000) and a
background sender correlates and writes them. Correlation, in client-go's order:

1. aggregate — once 10 distinct messages with the same (source, object, type, reason) arrive within
   10 min, they are reported as one event whose message starts "(combined from similar events): ";
2. dedup — an event identical to one already written becomes a PATCH of that Event
   (count + 1, lastTimestamp) instead of a new object;
3. spam filter — a token bucket per (source, object, type), burst 25, refilling 1 per 5 min;
   events over the limit are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import random
import re
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import structlog

from kruise.kube.client import Client, PatchType
from kruise.kube.clock import Clock, RealClock, rfc3339
from kruise.kube.errors import AlreadyExists, ApiError, NotFound, is_namespace_terminating, log_fields
from kruise.kube.ratelimit import TokenBucket
from kruise.kube.resources import EVENTS

log = structlog.get_logger("kruise.kube.events")

NORMAL = "Normal"
WARNING = "Warning"
COMBINED_PREFIX = "(combined from similar events): "
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

K = TypeVar("K")
V = TypeVar("V")


class _LRU(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)


@dataclass(frozen=True)
class CorrelatorOptions:
    spam_burst: int = 25
    spam_qps: float = 1.0 / 300.0
    max_events: int = 10
    max_interval: float = 600.0
    lru_size: int = 4096


@dataclass
class _AggregateRecord:
    messages: set[str]
    last: float


@dataclass
class Correlated:
    """What to write: a new Event (`patch` None) or a patch of the existing one named in `event`."""

    event: dict[str, Any]
    patch: dict[str, Any] | None


def _object_part(event: dict[str, Any]) -> tuple[str, ...]:
    src, inv = event.get("source") or {}, event.get("involvedObject") or {}
    return (
        src.get("component", ""),
        src.get("host", ""),
        inv.get("kind", ""),
        inv.get("namespace", ""),
        inv.get("name", ""),
        inv.get("uid", ""),
        inv.get("apiVersion", ""),
    )


class EventCorrelator:
    """Pure correlation state: aggregation, dedup and spam filtering, on an injectable clock."""

    def __init__(self, clock: Clock, options: CorrelatorOptions | None = None) -> None:
        self.clock = clock
        self.options = options or CorrelatorOptions()
        self._aggregates: _LRU[tuple[str, ...], _AggregateRecord] = _LRU(self.options.lru_size)
        self._observed: _LRU[tuple[str, ...], dict[str, Any]] = _LRU(self.options.lru_size)
        self._spam: _LRU[tuple[str, ...], TokenBucket] = _LRU(self.options.lru_size)

    def correlate(self, event: dict[str, Any]) -> Correlated | None:
        """Return what to write for `event`, or None when the spam filter drops it."""
        event, key = self._aggregate(event)
        result = self._observe(event, key)
        if self._spam_filtered(result.event):
            return None
        return result

    def _aggregate(self, event: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
        agg_key = (
            *_object_part(event),
            event.get("type", ""),
            event.get("reason", ""),
            event.get("reportingComponent", ""),
            event.get("reportingInstance", ""),
        )
        message = event.get("message", "")
        now = self.clock.now()
        record = self._aggregates.get(agg_key)
        if record is None or now - record.last > self.options.max_interval:
            record = _AggregateRecord(set(), now)
        record.messages.add(message)
        record.last = now
        self._aggregates.put(agg_key, record)
        if len(record.messages) < self.options.max_events:
            return event, (*agg_key, message)
        # Keep the set bounded, as client-go pops one local key.
        record.messages.discard(next(iter(record.messages)))
        combined = {**event, "message": COMBINED_PREFIX + message}
        return combined, agg_key

    def _observe(self, event: dict[str, Any], key: tuple[str, ...]) -> Correlated:
        last = self._observed.get(key)
        if last is None:
            self._observed.put(key, event)
            return Correlated(event, None)
        event = {
            **event,
            "metadata": {**event["metadata"], "name": last["metadata"]["name"]},
            "count": int(last.get("count", 1)) + 1,
            "firstTimestamp": last.get("firstTimestamp"),
        }
        self._observed.put(key, event)
        patch = {
            "count": event["count"],
            "lastTimestamp": event["lastTimestamp"],
            "message": event["message"],
        }
        return Correlated(event, patch)

    def _spam_filtered(self, event: dict[str, Any]) -> bool:
        key = (*_object_part(event), event.get("type", ""))
        bucket = self._spam.get(key)
        if bucket is None:
            bucket = TokenBucket(self.options.spam_qps, self.options.spam_burst, self.clock)
            self._spam.put(key, bucket)
        return not bucket.try_take()


def object_reference(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    ref = {
        "kind": obj.get("kind", ""),
        "namespace": meta.get("namespace", ""),
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "apiVersion": obj.get("apiVersion", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    return {k: v for k, v in ref.items() if v}


def _describe(event: dict[str, Any]) -> str:
    """``Kind namespace/name`` of the event's object, for log lines about it."""
    ref = event.get("involvedObject") or {}
    where = f"{ref['namespace']}/{ref.get('name', '')}" if ref.get("namespace") else ref.get("name", "")
    return f"{ref.get('kind', '')} {where}".strip()


class EventRecorder:
    """Records events about objects for one component (e.g. `cloneset-controller`)."""

    def __init__(
        self,
        client: Client,
        component: str,
        host: str = "",
        *,
        clock: Clock | None = None,
        correlator: CorrelatorOptions | None = None,
        queue_size: int = 1000,
        max_tries: int = 12,
        retry_interval: float = 10.0,
    ) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.clock = clock or RealClock()
        self.correlator = EventCorrelator(self.clock, correlator)
        self.max_tries = max_tries
        self.retry_interval = retry_interval
        # Each event travels with its caller's structlog context (controller, key), so the sender's
        # log lines about it name that reconcile, not whichever one started the sender.
        self._queue: asyncio.Queue[tuple[dict[str, Any], dict[str, Any]]] = asyncio.Queue(maxsize=queue_size)
        self._task: asyncio.Task[None] | None = None
        self.dropped = 0
        self._last_nanos = 0

    # ---- callers -----------------------------------------------------------------------------

    def event(self, obj: dict[str, Any], type: str, reason: str, message: str) -> None:
        """Queue an event about `obj`; returns at once. `type` is Normal or Warning."""
        if type not in (NORMAL, WARNING):
            raise ValueError(f'type: Unsupported value: "{type}": supported values: "Normal", "Warning"')
        if not reason:
            raise ValueError("reason: Required value")
        event = self._make_event(obj, type, reason, message)
        try:
            self._queue.put_nowait((event, structlog.contextvars.get_contextvars()))
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("event queue full, dropping event", reason=reason, object=event["involvedObject"])
            return
        self._ensure_sender()

    def eventf(self, obj: dict[str, Any], type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, type, reason, fmt % args if args else fmt)

    def _make_event(self, obj: dict[str, Any], type: str, reason: str, message: str) -> dict[str, Any]:
        ref = object_reference(obj)
        now = rfc3339(self.clock.wall())
        # Unix nanoseconds, made strictly increasing so two events in one clock tick get two names.
        nanos = max(int(self.clock.wall().timestamp() * 1e9), self._last_nanos + 1)
        self._last_nanos = nanos
        name = f"{ref.get('name', '')}.{nanos:x}"
        if not _DNS1123_SUBDOMAIN.match(name) or len(name) > 253:
            name = str(uuid.uuid4())
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": ref.get("namespace") or "default"},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": type,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }

    # ---- sender ------------------------------------------------------------------------------

    def _ensure_sender(self) -> None:
        if self._task is None or self._task.done():
            with contextlib.suppress(RuntimeError):
                # A fresh context: create_task would otherwise copy the first caller's bound
                # contextvars into the sender for its whole life.
                self._task = asyncio.get_running_loop().create_task(
                    self._send_loop(), name="event-recorder", context=contextvars.Context()
                )

    async def flush(self) -> None:
        """Wait until every queued event has been written or given up on."""
        await self._queue.join()

    async def stop(self, timeout: float = 5.0) -> None:
        """Flush what is queued (up to `timeout`), then stop the sender."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.flush()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _send_loop(self) -> None:
        while True:
            event, caller = await self._queue.get()
            try:
                with structlog.contextvars.bound_contextvars(**{**caller, "object": _describe(event)}):
                    try:
                        correlated = self.correlator.correlate(event)
                        if correlated is not None:
                            await self._write(correlated)
                    except Exception:
                        log.exception("unexpected error recording event")
            finally:
                self._queue.task_done()

    async def _write(self, correlated: Correlated) -> None:
        tries = 0
        while True:
            tries += 1
            try:
                await self._write_once(correlated)
                return
            except ApiError as exc:
                if isinstance(exc, AlreadyExists) or is_namespace_terminating(exc):
                    # As client-go's recordEvent: expected, not retried, logged only at debug.
                    log.debug("server rejected event (will not retry)", **log_fields(exc))
                    return
                if tries >= self.max_tries or (400 <= exc.code < 500 and exc.code != 429):
                    log.error("unable to write event (giving up)", tries=tries, **log_fields(exc))
                    return
            # The first retry is randomised so many recorders do not retry in lockstep.
            delay = self.retry_interval * (random.random() if tries == 1 else 1.0)
            await self.clock.sleep(delay)

    async def _write_once(self, correlated: Correlated) -> None:
        event = correlated.event
        meta = event["metadata"]
        if correlated.patch is not None:
            try:
                await self.client.patch(
                    EVENTS, meta["name"], correlated.patch, meta["namespace"], patch_type=PatchType.STRATEGIC
                )
                return
            except NotFound:
                # Someone removed it (TTL); write it anew with the accumulated count.
                pass
        await self.client.create(EVENTS, event)
