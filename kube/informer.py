"""SharedInformer: one list+watch per resource, a cache, and event handlers for every controller.

Follows client-go's Reflector + SharedIndexInformer: list, then watch from the list's
resourceVersion with bookmarks; a watch that ends normally is re-opened from the last seen
version; 410 Gone means the history we need is compacted, so we relist and deliver only the
difference (adds, updates with a new resourceVersion, tombstone deletes). Other failures back off
exponentially (0.8 s doubling, jittered, capped at 30 s, reset after 2 min of health).

Handlers are plain synchronous callables called in event order on the event loop; they should be
cheap (typically: put a key on a workqueue). Cached objects are shared and read-only — see
`kruise.kube.store`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from kruise.api.objects import MutableObj, meta_of
from kruise.kube.client import Client, WatchEvent
from kruise.kube.clock import Clock, RealClock
from kruise.kube.errors import ApiError, Gone, TooManyRequests, log_fields
from kruise.kube.projection import Projection
from kruise.kube.resources import ResourceRef, object_key
from kruise.kube.store import (
    STANDARD_INDEXERS,
    DeletedFinalStateUnknown,
    IndexFunc,
    Store,
    diff_relist,
    unwrap_tombstone,
)

log = structlog.get_logger("kruise.kube.informer")

AddHandler = Callable[[MutableObj], Any]
UpdateHandler = Callable[[MutableObj, MutableObj], Any]
DeleteHandler = Callable[[MutableObj | DeletedFinalStateUnknown], Any]


@dataclass
class EventHandler:
    """The callbacks one consumer registered; any may be None."""

    on_add: AddHandler | None = None
    on_update: UpdateHandler | None = None
    on_delete: DeleteHandler | None = None


@dataclass(frozen=True)
class InformerOptions:
    """Timing knobs; the defaults are client-go's, tests shrink them."""

    resync_period: float = 0.0  # 0 disables resync
    watch_timeout_min: int = 300
    watch_timeout_max: int = 600
    read_timeout: float | None = None  # max silence on a watch before reconnecting
    backoff_initial: float = 0.8
    backoff_cap: float = 30.0
    backoff_reset_after: float = 120.0
    page_size: int = 500


def strip_managed_fields(obj: MutableObj) -> MutableObj:
    """managedFields are large and no controller reads them; drop them before caching."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


REPLACE_SLICE = 500  # notifications `_replace` delivers between turns it gives the event loop


async def _paced(told: int) -> int:
    """One more notification delivered; every REPLACE_SLICE-th gives the event loop a turn."""
    told += 1
    if told % REPLACE_SLICE == 0:
        await asyncio.sleep(0)
    return told


class SharedInformer:
    """A cache of one resource kept current by list+watch, fanning events out to handlers."""

    def __init__(
        self,
        client: Client,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        indexers: dict[str, IndexFunc] | None = None,
        options: InformerOptions | None = None,
        clock: Clock | None = None,
        projection: Projection | None = None,
    ) -> None:
        """`projection`, when given, is what the cache keeps of each object (see kruise.kube.projection):
        handlers and readers get the projected, frozen form."""
        self.client = client
        self.ref = ref
        self.projection = projection
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.options = options or InformerOptions()
        self.clock = clock or RealClock()
        self.store = Store(STANDARD_INDEXERS if indexers is None else indexers)
        self._handlers: list[EventHandler] = []
        self._synced = asyncio.Event()
        self._replacing = False  # a list is being delivered (`_replace`), with turns given to the loop
        self._current = asyncio.Event()
        self._relists_asked = 0
        self._relists_done = 0  # `relist()` calls answered by a list that started after them
        self._watch_task: asyncio.Task[None] | None = None
        self._task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None
        self.last_resource_version = ""
        self.relists = 0
        self.notification_fault: Callable[[str, MutableObj], bool] | None = None
        """Fault injection for the fault suite: called with ("add" | "update" | "delete", object)
        before handlers are told; True drops that one notification (the cache still changes), which is
        how an event lost between watch and controller looks to expectations. None in production."""
        self.dropped_notifications = 0
        self._log = log.bind(resource=str(ref), namespace=namespace or "")

    # ---- consumers ---------------------------------------------------------------------------

    def add_event_handler(
        self,
        on_add: AddHandler | None = None,
        on_update: UpdateHandler | None = None,
        on_delete: DeleteHandler | None = None,
    ) -> EventHandler:
        """Register callbacks. A handler added after sync (or while a list is being delivered) first gets
        an add for every cached object."""
        handler = EventHandler(on_add, on_update, on_delete)
        self._handlers.append(handler)
        if (self._synced.is_set() or self._replacing) and on_add is not None:
            for obj in self.store.list():
                self._call(on_add, obj)
        return handler

    def remove_event_handler(self, handler: EventHandler) -> None:
        self._handlers.remove(handler)

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        self.store.add_indexers(indexers)

    def has_synced(self) -> bool:
        """True once the first full list has been delivered to handlers."""
        return self._synced.is_set()

    def is_current(self) -> bool:
        """False until the first list, and from a lost watch (410 Gone, a failed list or watch) until a
        re-list completes or a watch is open again: while False the cache may lack changes it will
        never be told about by the watch it had, so readers that must not act on a gap wait for it."""
        return self._current.is_set()

    async def wait_current(self) -> None:
        """Return once `is_current()` holds (at once when it does)."""
        while not self._current.is_set():
            await self._current.wait()

    def relist(self) -> None:
        """Drop the open watch and re-list now; not current until that list completes. For a process
        that just changed how the resource is served (kruise-webhook patching a CRD): the apiserver
        ends such watches, but the resume racing that end could otherwise be taken for a healthy one."""
        self._relists_asked += 1
        self._current.clear()
        if self._watch_task is not None:
            self._watch_task.cancel()

    async def wait_for_sync(self, timeout: float | None = 120.0) -> bool:
        """Wait for the first list; False on timeout (controller-runtime's CacheSyncTimeout is 2 min)."""
        try:
            async with asyncio.timeout(timeout):
                await self._synced.wait()
        except TimeoutError:
            return False
        return True

    # convenience reads
    def get(self, key: str) -> MutableObj | None:
        return self.store.get(key)

    def list(self) -> list[MutableObj]:
        return self.store.list()

    def by_index(self, index: str, value: str) -> list[MutableObj]:
        return self.store.by_index(index, value)

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None]:
        """Start the list+watch loop in the background (idempotent)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.run(), name=f"informer-{self.ref}")
        return self._task

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        for task in (self._task, self._resync_task):
            if task is not None:
                task.cancel()
        for task in (self._task, self._resync_task):
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._resync_task = None

    async def run(self) -> None:
        """List+watch forever; only cancellation ends it."""
        if self.options.resync_period > 0 and self._resync_task is None:
            self._resync_task = asyncio.get_running_loop().create_task(self._resync_loop())
        delay = self.options.backoff_initial
        need_list = True
        while True:
            started = self.clock.now()
            try:
                if need_list or self._must_relist():
                    await self._list()
                    need_list = False
                    if self._must_relist():  # a relist() asked while that list was under way
                        continue
                await self._watch_until_relist()
                continue
            except Gone as exc:
                self._current.clear()
                self._log.info("watch history expired, relisting", **log_fields(exc))
                need_list = True
                continue
            except Exception as exc:
                self._current.clear()
                wait = delay * (1.0 + random.random())
                if isinstance(exc, TooManyRequests) and exc.retry_after:
                    wait = max(wait, exc.retry_after)
                seconds = round(wait, 3)
                if isinstance(exc, ApiError):
                    # A refusal or a dropped connection: routine, one line, retried after the wait.
                    self._log.warning("list/watch failed, backing off", seconds=seconds, **log_fields(exc))
                else:
                    # Anything else is a bug here or in the client: retried too, with its traceback.
                    self._log.warning(
                        "list/watch failed, backing off", error=repr(exc), seconds=seconds, exc_info=exc
                    )
            if self.clock.now() - started >= self.options.backoff_reset_after:
                delay = self.options.backoff_initial
            await self.clock.sleep(wait)
            delay = min(delay * 2, self.options.backoff_cap)

    # ---- list and watch ----------------------------------------------------------------------

    def _must_relist(self) -> bool:
        return self._relists_done != self._relists_asked

    async def _list(self) -> None:
        asked = self._relists_asked
        items, resource_version = await self.client.list_all(
            self.ref,
            self.namespace,
            page_size=self.options.page_size,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            each=self._listed_form,
        )
        await self._replace(items, resource_version, asked)

    def _listed_form(self, obj: MutableObj) -> MutableObj:
        """A listed item's cached form, made as its page arrives (see `Client.list_all`'s `each`)."""
        # Lists carry kind/apiVersion on the list only; restore them so items look like watch objects.
        obj.setdefault("kind", self.ref.kind)
        obj.setdefault("apiVersion", self.ref.api_version)
        return self._cached_form(obj)

    def _cached_form(self, obj: MutableObj) -> MutableObj:
        if self.projection is not None:
            return self.projection.apply(obj)
        return strip_managed_fields(obj)

    async def _replace(
        self, items: list[MutableObj], resource_version: str, relists_asked: int | None = None
    ) -> None:
        """Swap in a fresh list, delivering exactly the difference from the cache.

        Gives the event loop a turn every REPLACE_SLICE notifications: 100k pods' adds through every
        controller's handlers are seconds of synchronous work (over 10 on a loaded machine), and a
        manager whose loop stalls past its renew deadline loses its lease. Between turns the store
        holds exactly what handlers were told, so a handler added meanwhile is replayed that part."""
        first = not self._synced.is_set()
        diff = diff_relist(self.store.snapshot(), items)
        if not first:
            self.relists += 1
        told = 0
        self._replacing = True
        try:
            for tombstone in diff.deleted:
                self.store.remove(tombstone.key)
                self._dispatch_delete(tombstone)
                told = await _paced(told)
            for obj in diff.added:
                self.store.upsert(obj)
                self._dispatch_add(obj)
                told = await _paced(told)
            for old, new in diff.updated:
                self.store.upsert(new)
                self._dispatch_update(old, new)
                told = await _paced(told)
        finally:
            self._replacing = False
        self.last_resource_version = resource_version
        if relists_asked is not None:
            self._relists_done = relists_asked
        # current again only once the watch from this list is open and has replayed what happened
        # since the list (`_watch_opened`): until then a change made after the list is missing
        if first:
            self._synced.set()
            self._log.debug("synced", objects=len(self.store), resource_version=resource_version)

    async def _watch_until_relist(self) -> None:
        """`_watch_once` as a task `relist()` can end early (it then returns, and the loop lists)."""
        task = asyncio.get_running_loop().create_task(self._watch_once())
        self._watch_task = task
        try:
            await asyncio.wait({task})
        finally:
            self._watch_task = None
            if not task.done():  # this loop itself was cancelled
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if not task.cancelled():
            task.result()

    async def _watch_once(self) -> None:
        timeout = random.randint(self.options.watch_timeout_min, self.options.watch_timeout_max)
        events = self.client.watch(
            self.ref,
            self.namespace,
            resource_version=self.last_resource_version,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=timeout,
            allow_watch_bookmarks=True,
            read_timeout=self.options.read_timeout,
            opened=self._watch_opened,
        )
        async for event in events:
            self._apply(event)

    def _watch_opened(self) -> None:
        """The watch from the last resourceVersion is open and what it replayed so far is applied: the
        gap since the list (or the failure) is closed (a resume too old ends in Gone, clearing this)."""
        if self._synced.is_set() and not self._must_relist():
            self._current.set()

    def _apply(self, event: WatchEvent) -> None:
        obj = event.object
        rv = meta_of(obj).get("resourceVersion")
        if event.type == "BOOKMARK":
            if rv:
                self.last_resource_version = rv
            return
        obj = self._cached_form(obj)
        if event.type in ("ADDED", "MODIFIED"):
            old = self.store.upsert(obj)
            if old is None:
                self._dispatch_add(obj)
            elif meta_of(old).get("resourceVersion") != rv:
                self._dispatch_update(old, obj)
            # Same resourceVersion: a replay after reconnect, not a change — deliver nothing.
        elif event.type == "DELETED":
            old = self.store.remove(object_key(obj))
            self._dispatch_delete(obj)
        else:
            self._log.warning("unknown watch event type", type=event.type)
        if rv:
            self.last_resource_version = rv

    # ---- delivery ----------------------------------------------------------------------------

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            # One broken handler must not starve the others or kill the watch.
            self._log.exception("event handler failed")

    def _dropped(self, kind: str, obj: Any) -> bool:
        fault = self.notification_fault
        if fault is None or not fault(kind, obj):
            return False
        self.dropped_notifications += 1
        key = object_key(unwrap_tombstone(obj))
        self._log.warning("notification dropped by fault injection", event=kind, key=key)
        return True

    def _dispatch_add(self, obj: MutableObj) -> None:
        if self._dropped("add", obj):
            return
        for h in list(self._handlers):
            if h.on_add is not None:
                self._call(h.on_add, obj)

    def _dispatch_update(self, old: MutableObj, new: MutableObj) -> None:
        if self._dropped("update", new):
            return
        for h in list(self._handlers):
            if h.on_update is not None:
                self._call(h.on_update, old, new)

    def _dispatch_delete(self, obj: MutableObj | DeletedFinalStateUnknown) -> None:
        if self._dropped("delete", obj):
            return
        for h in list(self._handlers):
            if h.on_delete is not None:
                self._call(h.on_delete, obj)

    async def _resync_loop(self) -> None:
        """Re-deliver every cached object as update(old, old): no server traffic, catches drift."""
        await self._synced.wait()
        while True:
            await self.clock.sleep(self.options.resync_period)
            for obj in self.store.list():
                self._dispatch_update(obj, obj)


class SharedInformerFactory:
    """One informer per (resource, namespace, selectors), shared by every controller."""

    def __init__(
        self,
        client: Client,
        *,
        namespace: str | None = None,
        options: InformerOptions | None = None,
        clock: Clock | None = None,
        projections: Mapping[ResourceRef, Projection] | None = None,
    ) -> None:
        """`projections`: what the caches of some resources keep (a process declares what it reads)."""
        self.client = client
        self.namespace = namespace
        self.options = options or InformerOptions()
        self.clock = clock
        self.projections = dict(projections or {})
        self._informers: dict[tuple[Any, ...], SharedInformer] = {}

    def informer(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        indexers: dict[str, IndexFunc] | None = None,
    ) -> SharedInformer:
        """The shared informer for `ref`; extra `indexers` are added to it."""
        namespace = namespace if namespace is not None else self.namespace
        key = (ref, namespace, label_selector, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            informer = SharedInformer(
                self.client,
                ref,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                options=self.options,
                clock=self.clock,
                projection=self.projections.get(ref),
            )
            self._informers[key] = informer
        if indexers:
            informer.add_indexers(indexers)
        return informer

    @property
    def informers(self) -> list[SharedInformer]:
        return list(self._informers.values())

    def start(self) -> None:
        """Start every informer not yet running (call again after adding informers)."""
        for informer in self._informers.values():
            if not informer.running:
                informer.start()

    async def wait_for_cache_sync(self, timeout: float | None = 120.0) -> bool:
        results = await asyncio.gather(*(i.wait_for_sync(timeout) for i in self._informers.values()))
        return all(results)

    def relist(self, group: str, plural: str) -> list[SharedInformer]:
        """`SharedInformer.relist` every informer of the resource; returns them."""
        chosen = [i for i in self._informers.values() if (i.ref.group, i.ref.plural) == (group, plural)]
        for informer in chosen:
            informer.relist()
        return chosen

    def not_current(self) -> list[SharedInformer]:
        """The informers whose caches may miss changes right now (see `SharedInformer.is_current`)."""
        return [i for i in self._informers.values() if not i.is_current()]

    async def wait_current(self) -> None:
        """Return once every informer's cache is current (at once when all are)."""
        while stale := self.not_current():
            await asyncio.gather(*(i.wait_current() for i in stale))

    async def stop(self) -> None:
        await asyncio.gather(*(i.stop() for i in self._informers.values()))
