"""Watch: a chunked stream of ADDED / MODIFIED / DELETED / BOOKMARK events for one collection.

A watch starts from a resourceVersion (events after it, or 410 Expired once the store has compacted
it) or from "now" with the current objects sent as ADDED first (`resourceVersion` unset or 0, or
`sendInitialEvents=true`, which ends the initial list with a bookmark annotated
`k8s.io/initial-events-end`). An object that stops (or starts) matching the selectors is sent as
DELETED (or ADDED), as kube-apiserver's watch cache does. Events queued together go out as one chunk.
With `allowWatchBookmarks`, an idle stream gets a BOOKMARK every `ApiServer.bookmark_interval`. The
stream ends at `timeoutSeconds` (default: 30-60 minutes, randomised as upstream), when the client goes
away, or when the store closes its watchers (server shutdown).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import orjson
from aiohttp import web

from kruise.sandbox.apiserver.conversion import uses_webhook
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.handlers.base import RequestContext, parse_bool
from kruise.sandbox.apiserver.selectors import labels_match
from kruise.sandbox.apiserver.store import Event


class Watch(RequestContext):
    """`?watch=true` on a collection: one chunked stream of watch events for the request's lifetime."""

    async def watch(self) -> web.StreamResponse:
        reqs, fields = self._filters()

        def matches(obj: dict[str, Any]) -> bool:
            return labels_match(reqs, obj["metadata"].get("labels")) and fields(obj)

        rv_param = self.query.get("resourceVersion", "")
        send_initial = self.query.get("sendInitialEvents")
        bookmarks = parse_bool(self.query.get("allowWatchBookmarks"))
        timeout_param = self.query.get("timeoutSeconds")
        timeout = float(timeout_param) if timeout_param else 1800 * (1 + random.random())
        response = web.StreamResponse(status=200)
        response.headers["Content-Type"] = "application/json"
        response.headers["Transfer-Encoding"] = "chunked"
        await response.prepare(self.request)
        api_version = self.rt.api_version
        initial: list[dict[str, Any]] = []
        since: int | None
        if rv_param in ("", "0") or (send_initial is not None and parse_bool(send_initial)):
            initial = [o for o in self.store.list(self.rt.key, self.namespace) if matches(o)]
            since = None
        else:
            try:
                since = int(rv_param)
            except ValueError:
                raise StatusError(400, "BadRequest", f"invalid resource version: {rv_param}") from None
            if self.store.too_old(since, self.rt.key):
                gone = StatusError(
                    410, "Expired", f"too old resource version: {since} ({self.store.oldest_rv(self.rt.key)})"
                )
                await response.write(orjson.dumps({"type": "ERROR", "object": gone.status()}) + b"\n")
                return response
        watcher = self.store.watch(self.rt.key, self.namespace, since, matches)
        self.server._watch_responses.add(response)
        try:
            for obj in await self._served_all(initial) if initial else []:
                await response.write(Event(0, self.rt.key, "ADDED", obj).line(api_version))
            if initial is not None and parse_bool(send_initial) and bookmarks:
                await response.write(self._bookmark(self.store.rv, initial_end=True))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    if bookmarks:
                        await response.write(self._bookmark(self.store.rv))
                    break
                wait = min(remaining, self.server.bookmark_interval) if bookmarks else remaining
                try:
                    # Not wait_for: on 3.11 it can swallow the cancel of a disconnected watch.
                    async with asyncio.timeout(wait):
                        event = await watcher.queue.get()
                except TimeoutError:
                    if bookmarks and loop.time() < deadline:
                        await response.write(self._bookmark(self.store.rv))
                    continue
                # Drain whatever else is queued and send it as one chunk: one TLS record, one syscall.
                batch = [event]
                while not watcher.queue.empty() and batch[-1] is not None:
                    batch.append(watcher.queue.get_nowait())
                closing = batch[-1] is None
                lines = []
                for e in batch:
                    if e is not None and (seen := self._filtered(e, matches)) is not None:
                        lines.append(await self._line(seen, api_version))
                chunk = b"".join(lines)
                if chunk:
                    await response.write(chunk)
                if closing:
                    break
        except StatusError as exc:
            # an object the conversion webhook failed on ends the stream with the error, as the
            # watch cache's encoder does
            await response.write(orjson.dumps({"type": "ERROR", "object": exc.status()}) + b"\n")
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self.store.unwatch(watcher)
            self.server._watch_responses.discard(response)
        return response

    def _filtered(self, event: Event, matches: Any) -> Event | None:
        """The event as this watch sees it: a MODIFIED that enters (leaves) the selection is an
        ADDED (DELETED); None when the object is not selected before or after."""
        now = matches(event.obj)
        if event.type != "MODIFIED" or event.prev is None:
            return event if now else None
        before = matches(event.prev)
        if now and before:
            return event
        if now:
            return Event(event.rv, event.res, "ADDED", event.obj)
        if before:
            return Event(event.rv, event.res, "DELETED", event.obj)
        return None

    async def _line(self, event: Event, api_version: str) -> bytes:
        """The event's JSON line at the watch's version; a webhook conversion is done once per event."""
        if (
            not uses_webhook(self.rt)
            or event.has_line(api_version)
            or event.obj.get("apiVersion") == api_version
        ):
            return event.line(api_version)
        return event.line(api_version, await self._served(event.obj))

    def _bookmark(self, rv: int, initial_end: bool = False) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {"kind": self.rt.kind, "apiVersion": self.rt.api_version, "metadata": meta}
        return orjson.dumps({"type": "BOOKMARK", "object": obj}) + b"\n"
