"""Fan-out of container events to any number of subscribers.

Each subscriber gets its own unbounded queue so a slow reader never makes the runtime block
or drop events; the runtime publishes synchronously from whatever method changed state.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from kruise.sandbox.cri.model import ContainerEvent


class Subscription:
    """A stream of container events; iterate it, or ``await get()``. ``close()`` ends iteration."""

    def __init__(self, hub: EventHub) -> None:
        self._hub = hub
        self._queue: asyncio.Queue[ContainerEvent | None] = asyncio.Queue()
        self.closed = False

    def _deliver(self, event: ContainerEvent) -> None:
        self._queue.put_nowait(event)

    async def get(self) -> ContainerEvent:
        """The next event; raises ``EOFError`` once the subscription is closed and drained."""
        event = await self._queue.get()
        if event is None:
            self._queue.put_nowait(None)
            raise EOFError("subscription closed")
        return event

    def get_nowait(self) -> ContainerEvent:
        """The next event if one is queued; raises ``asyncio.QueueEmpty`` otherwise."""
        event = self._queue.get_nowait()
        if event is None:
            self._queue.put_nowait(None)
            raise asyncio.QueueEmpty
        return event

    def pending(self) -> int:
        return self._queue.qsize() - (1 if self.closed else 0)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._hub.remove(self)
            self._queue.put_nowait(None)

    def __aiter__(self) -> AsyncIterator[ContainerEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[ContainerEvent]:
        while True:
            try:
                yield await self.get()
            except EOFError:
                return

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventHub:
    """Holds the live subscriptions of one runtime."""

    def __init__(self) -> None:
        self._subscriptions: list[Subscription] = []

    def subscribe(self) -> Subscription:
        subscription = Subscription(self)
        self._subscriptions.append(subscription)
        return subscription

    def remove(self, subscription: Subscription) -> None:
        if subscription in self._subscriptions:
            self._subscriptions.remove(subscription)

    def publish(self, event: ContainerEvent) -> None:
        for subscription in list(self._subscriptions):
            subscription._deliver(event)
