"""List-then-watch caches that feed the simulator's loops.

Every simulated component (scheduler, kubelets, Job/Deployment controllers) is level-triggered:
it keeps a cache of the objects it cares about and is poked whenever one changes. A watch that
ends is resumed from the last seen resourceVersion; a 410 Gone (or any error) relists.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from kruise.sandbox.simulator.client import ApiError, Client, Obj

log = logging.getLogger(__name__)

Handler = Callable[[str, Obj], None]


def key_of(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta['name']}" if namespace else meta["name"]


class Informer:
    """A cache of one resource collection (optionally filtered) kept current by a watch.

    Handlers are plain callables ``(event_type, obj)`` run on the event loop for ADDED, MODIFIED
    and DELETED; they must not block (they usually just wake a worker).
    """

    def __init__(
        self,
        client: Client,
        path: str,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        retry_delay: float = 0.2,
    ) -> None:
        self.client = client
        self.path = path
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.retry_delay = retry_delay
        self.store: dict[str, Obj] = {}
        self.seen_version = 0
        self.handlers: list[Handler] = []
        self.synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def add_handler(self, handler: Handler) -> None:
        self.handlers.append(handler)

    def get(self, key: str) -> Obj | None:
        return self.store.get(key)

    def items(self) -> list[Obj]:
        return list(self.store.values())

    def has_seen(self, resource_version: int) -> bool:
        """Whether the cache already reflects every change up to ``resource_version``.

        If so, an object of that version (or older) that the cache lacks has been deleted (or left
        the selector) since, and a controller's own write of it must not bring it back.
        """
        return resource_version <= self.seen_version

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"informer {self.path}")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                version = await self._relist()
                while True:
                    version = await self._watch(version)
            except asyncio.CancelledError:
                raise
            except ApiError as error:
                if error.gone:
                    continue  # history compacted: relist at once, as client-go's reflector does
                log.debug("informer %s: %s; relisting", self.path, error)
                await asyncio.sleep(self.retry_delay)
            except Exception as error:  # connection trouble: relist after a pause
                log.debug("informer %s: %s; relisting", self.path, error)
                await asyncio.sleep(self.retry_delay)

    async def _relist(self) -> str:
        listing = await self.client.list(
            self.path, labelSelector=self.label_selector, fieldSelector=self.field_selector
        )
        fresh = {key_of(item): item for item in listing.get("items") or []}
        old = self.store
        self.store = fresh
        version = (listing.get("metadata") or {}).get("resourceVersion", "")
        self._saw(version)
        for key, obj in old.items():
            if key not in fresh:
                self._notify("DELETED", obj)
        for key, obj in fresh.items():
            previous = old.get(key)
            if previous is None:
                self._notify("ADDED", obj)
            elif _rv(previous) != _rv(obj):
                self._notify("MODIFIED", obj)
        self.synced.set()
        return version

    async def _watch(self, version: str) -> str:
        async for event in self.client.watch(
            self.path,
            version,
            labelSelector=self.label_selector,
            fieldSelector=self.field_selector,
            timeoutSeconds=300,
        ):
            kind = event.get("type")
            obj: Any = event.get("object") or {}
            version = _rv(obj) or version
            if kind == "BOOKMARK":
                self._saw(version)
                continue
            key = key_of(obj)
            if kind == "DELETED":
                self.store.pop(key, None)
            else:
                self.store[key] = obj
            self._saw(version)
            self._notify(kind, obj)
        return version

    def _saw(self, version: str) -> None:
        with contextlib.suppress(ValueError):  # an opaque version: has_seen stays conservative
            self.seen_version = max(self.seen_version, int(version))

    def _notify(self, kind: str, obj: Obj) -> None:
        for handler in self.handlers:
            try:
                handler(kind, obj)
            except Exception:  # a broken handler must not stop the cache
                log.exception("informer %s: handler failed", self.path)


def _rv(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion", "")
