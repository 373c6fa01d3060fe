"""A small HTTP stand-in for kube-apiserver, used until the sandbox emulator is available.

It speaks just enough of the REST API for kruise.kube's integration tests — generic CRUD on any
resource path with one global resourceVersion counter, optimistic concurrency, merge/JSON/apply
patches, dryRun, delete preconditions, label and field selectors, and watches with a bounded
history that can be compacted (410 Expired) or cut — over real HTTP on 127.0.0.1 with a bearer
token, so the real Client, informers, controller and leader election run unmodified.

The `apiserver` fixture yields a handle with `.kubeconfig`, `.url` and `.server` (fault
injection: `server.compact_watch_history()`, `server.drop_watches()`). Each test is parametrized
to also run on the sandbox's `emulator` fixture when that exists with the same fault hooks
(skipped, visibly, until then).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonpatch
import orjson
import pytest
import yaml
from aiohttp import web

TOKEN = "kube-it-token"
_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_KINDS = {
    "configmaps": "ConfigMap",
    "pods": "Pod",
    "events": "Event",
    "leases": "Lease",
    "replicasets": "ReplicaSet",
}


def _status(code: int, reason: str, message: str, **details: Any) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    body |= {"reason": reason, "code": code}
    if details:
        body["details"] = details
    return web.Response(status=code, body=orjson.dumps(body), content_type="application/json")


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge(result.get(key), value)
    return result


def _lookup(obj: dict[str, Any], dotted: str) -> str:
    value: Any = obj
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return "" if value is None else str(value)


def _matches(obj: dict[str, Any], labels: str | None, fields: str | None) -> bool:
    have = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, (labels or "").split(",")):
        if "=" in term:
            key, value = term.split("=", 1)
            if have.get(key.rstrip("=")) != value:
                return False
        elif term not in have:
            return False
    for term in filter(None, (fields or "").split(",")):
        key, value = term.split("=", 1)
        if _lookup(obj, key.rstrip("=")) != value:
            return False
    return True


@dataclass
class _Watcher:
    resource: tuple[str, str]
    namespace: str | None
    queue: asyncio.Queue[dict[str, Any] | None]


class FakeApiServer:
    def __init__(self, history_size: int = 1000) -> None:
        self.objects: dict[tuple[str, str], dict[tuple[str, str], dict[str, Any]]] = {}
        self.rv = 100
        self.history: list[tuple[int, tuple[str, str], dict[str, Any]]] = []
        self.history_size = history_size
        self.oldest_rv = 0
        self.watchers: list[_Watcher] = []
        self.watch_requests = 0
        self.failures: list[tuple[int, str]] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    # ---- fault injection ---------------------------------------------------------------------
    def compact_watch_history(self) -> None:
        """Forget every event so far: resuming a watch from an older version gets 410 Expired."""
        self.history.clear()
        self.oldest_rv = self.rv

    def fail_next(self, count: int, status: int = 500, reason: str = "") -> None:
        """The next `count` requests fail with `status` (a Status body, like the emulator's hook)."""
        self.failures += [(status, reason or {429: "TooManyRequests"}.get(status, "InternalError"))] * count

    def drop_watches(self) -> None:
        for watcher in self.watchers:
            watcher.queue.put_nowait(None)

    # ---- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self.url

    async def stop(self) -> None:
        self.drop_watches()
        if self._runner is not None:
            await self._runner.cleanup()

    def write_kubeconfig(self, path: Path) -> None:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": TOKEN}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "current-context": "fake",
        }
        path.write_text(yaml.safe_dump(config))

    # ---- storage -----------------------------------------------------------------------------
    def _emit(self, resource: tuple[str, str], kind: str, obj: dict[str, Any]) -> None:
        event = {"type": kind, "object": obj}
        self.history.append((self.rv, resource, event))
        if len(self.history) > self.history_size:
            dropped_rv = self.history.pop(0)[0]
            self.oldest_rv = dropped_rv
        namespace = obj["metadata"].get("namespace")
        for watcher in self.watchers:
            if watcher.resource == resource and watcher.namespace in (None, namespace):
                watcher.queue.put_nowait(event)

    def _bump(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        return obj

    # ---- HTTP --------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return _status(401, "Unauthorized", "Unauthorized")
        if self.failures:
            code, reason = self.failures.pop(0)
            return _status(code, reason, f"injected failure ({code})")
        parts = [p for p in request.path.split("/") if p]
        if parts[:2] == ["api", "v1"]:
            group, rest = "", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 3:
            group, rest = parts[1], parts[3:]
        else:
            return _status(404, "NotFound", "the server could not find the requested resource")
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else None)
        resource = (group, plural)
        store = self.objects.setdefault(resource, {})
        q = request.query
        dry_run = q.get("dryRun") == "All"
        body = await request.read()
        data = orjson.loads(body) if body else None
        key = (namespace or "", name or "")

        if request.method == "GET" and name is None:
            if q.get("watch") in ("true", "True", "1"):
                return await self._watch(request, resource, namespace)
            items = [
                o
                for (ns, _), o in sorted(store.items())
                if namespace in (None, ns) and _matches(o, q.get("labelSelector"), q.get("fieldSelector"))
            ]
            listing = {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": str(self.rv)}}
            return web.json_response({**listing, "items": items}, dumps=lambda v: orjson.dumps(v).decode())
        if request.method == "GET":
            if key not in store:
                return _status(404, "NotFound", f'{plural} "{name}" not found', name=name, kind=plural)
            return web.json_response(store[key], dumps=lambda v: orjson.dumps(v).decode())

        if request.method == "POST":
            obj = data
            meta = obj.setdefault("metadata", {})
            name = meta.get("name", "")
            if not _DNS1123.match(name):
                kind = _KINDS.get(plural, plural)
                message = (
                    f'{kind} "{name}" is invalid: metadata.name: Invalid value: "{name}": '
                    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                    "'-' or '.', and must start and end with an alphanumeric character"
                )
                causes = [
                    {
                        "reason": "FieldValueInvalid",
                        "message": message.split(": ", 2)[2],
                        "field": "metadata.name",
                    }
                ]
                return _status(422, "Invalid", message, name=name, kind=kind, causes=causes)
            key = (namespace or "", name)
            if key in store:
                return _status(
                    409, "AlreadyExists", f'{plural} "{name}" already exists', name=name, kind=plural
                )
            return self._write(resource, store, key, self._new(obj, namespace), "ADDED", dry_run, 201)

        if key not in store and not (request.method == "PATCH" and "apply-patch" in request.content_type):
            return _status(404, "NotFound", f'{plural} "{name}" not found', name=name, kind=plural)

        if request.method == "PUT":
            current = store[key]
            sent_rv = (data.get("metadata") or {}).get("resourceVersion")
            if sent_rv and sent_rv != current["metadata"]["resourceVersion"]:
                return self._conflict(plural, name)
            obj = {**data, "metadata": {**data["metadata"], "uid": current["metadata"]["uid"]}}
            obj["metadata"]["creationTimestamp"] = current["metadata"]["creationTimestamp"]
            return self._write(resource, store, key, obj, "MODIFIED", dry_run)

        if request.method == "PATCH":
            ctype = request.content_type
            if "apply-patch" in ctype and key not in store:
                return self._write(resource, store, key, self._new(data, namespace), "ADDED", dry_run, 201)
            current = orjson.loads(orjson.dumps(store[key]))
            if ctype == "application/json-patch+json":
                obj = jsonpatch.apply_patch(current, data)
            else:  # merge, strategic (maps only in these tests) and apply
                obj = _merge(current, data)
            return self._write(resource, store, key, obj, "MODIFIED", dry_run)

        if request.method == "DELETE":
            current = store[key]
            pre = (data or {}).get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != current["metadata"]["uid"]:
                message = (
                    f"Precondition failed: UID in precondition: {pre['uid']}, "
                    f"UID in object meta: {current['metadata']['uid']}"
                )
                return _status(409, "Conflict", message)
            if not dry_run:
                del store[key]
                self._emit(resource, "DELETED", self._bump(orjson.loads(orjson.dumps(current))))
            body = {"kind": "Status", "apiVersion": "v1", "status": "Success", "details": {"name": name}}
            return web.json_response(body)
        return _status(
            405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
        )

    def _new(self, obj: dict[str, Any], namespace: str | None) -> dict[str, Any]:
        meta = obj["metadata"]
        if namespace:
            meta["namespace"] = namespace
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta["managedFields"] = [{"manager": "fake", "operation": "Update"}]
        return obj

    def _conflict(self, plural: str, name: str | None) -> web.Response:
        message = (
            f'Operation cannot be fulfilled on {plural} "{name}": the object has been modified; '
            "please apply your changes to the latest version and try again"
        )
        return _status(409, "Conflict", message, name=name, kind=plural)

    def _write(self, resource, store, key, obj, kind, dry_run, code=200) -> web.Response:
        if not dry_run:
            self._bump(obj)
            store[key] = obj
            self._emit(resource, kind, obj)
        return web.Response(status=code, body=orjson.dumps(obj), content_type="application/json")

    async def _watch(self, request: web.Request, resource, namespace) -> web.StreamResponse:
        self.watch_requests += 1
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        since = int(request.query.get("resourceVersion") or self.rv)
        if since < self.oldest_rv:
            gone = {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": 410,
                "reason": "Expired",
            }
            gone["message"] = f"too old resource version: {since} ({self.oldest_rv})"
            await response.write(orjson.dumps({"type": "ERROR", "object": gone}) + b"\n")
            return response
        watcher = _Watcher(resource, namespace, asyncio.Queue())
        for rv, res, event in self.history:
            ns = event["object"]["metadata"].get("namespace")
            if rv > since and res == resource and namespace in (None, ns):
                watcher.queue.put_nowait(event)
        self.watchers.append(watcher)
        timeout = float(request.query.get("timeoutSeconds") or 1800)
        try:
            async with asyncio.timeout(timeout):
                while (event := await watcher.queue.get()) is not None:
                    await response.write(orjson.dumps(event) + b"\n")
        except (TimeoutError, ConnectionResetError):
            pass
        finally:
            self.watchers.remove(watcher)
        return response


@dataclass
class Handle:
    server: FakeApiServer
    url: str
    kubeconfig: Path


# The emulator's fault hooks, under the names it may use (on the server or its store).
_COMPACT = ("compact_watch_history", "compact_history", "compact")
_DROP = ("drop_watches", "drop_watch_connections", "close_watches", "close_watchers")


def _hook(server: Any, names: tuple[str, ...]) -> Any:
    for owner in (server, getattr(server, "store", None)):
        for name in names:
            if owner is not None and callable(getattr(owner, name, None)):
                return getattr(owner, name)
    return None


@dataclass
class _EmulatorFaults:
    """Presents the emulator's hooks under the names these tests use."""

    compact_watch_history: Any
    drop_watches: Any
    fail_next: Any


@pytest.fixture(params=["fake", "emulator"])
async def apiserver(tmp_path, request) -> Handle:
    """Every test runs on this file's fake and, once it exists, on the sandbox emulator too."""
    if request.param == "emulator":
        try:
            emulator = request.getfixturevalue("emulator")
        except pytest.FixtureLookupError:
            pytest.skip("the sandbox emulator fixture is not available yet")
        compact, drop = _hook(emulator.server, _COMPACT), _hook(emulator.server, _DROP)
        fail = _hook(emulator.server, ("fail_next",))
        if compact is None or drop is None or fail is None:
            pytest.skip("the sandbox emulator lacks the compact/drop/fail_next fault hooks")
        yield Handle(_EmulatorFaults(compact, drop, fail), emulator.url, Path(emulator.kubeconfig))
        return
    server = FakeApiServer()
    url = await server.start()
    kubeconfig = tmp_path / "kubeconfig"
    server.write_kubeconfig(kubeconfig)
    yield Handle(server, url, kubeconfig)
    await server.stop()
