"""`ApiServer`: the HTTP front of the emulator — start/stop, auth, URL routing, discovery, faults.

A request for a resource is handed to `handlers.dispatch.Handlers`, which serves it by verb (reads,
watch, writes, delete, subresources: one module each under `handlers/`). The write pipeline there
mirrors kube-apiserver's order: decode -> defaulting -> mutating admission -> schema validation ->
validating admission -> persist. All state lives on one event loop; a write never awaits between
reading and storing, so resourceVersion checks are atomic.
"""

from __future__ import annotations

import asyncio
import base64
import secrets
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from kruise.sandbox.apiserver import bulkload, defaults, discovery, faultroutes, openapiv2, serviceroute
from kruise.sandbox.apiserver.admission import AdmissionDenied, AdmissionPlugin
from kruise.sandbox.apiserver.conversion import Converter
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.features import features_for
from kruise.sandbox.apiserver.handlers.base import USER_INFO, json_response
from kruise.sandbox.apiserver.handlers.dispatch import Handlers
from kruise.sandbox.apiserver.handlers.writes import stamp_new
from kruise.sandbox.apiserver.lifecycle import Lifecycle
from kruise.sandbox.apiserver.listpages import ListSnapshots
from kruise.sandbox.apiserver.resources import ResourceType, builtin_resources, crd_resources
from kruise.sandbox.apiserver.store import Store
from kruise.sandbox.apiserver.tls import ServingCerts, generate
from kruise.sandbox.apiserver.tokens import TokenIssuer
from kruise.sandbox.apiserver.webhookcall import ServiceAddresses, WebhookCaller

GIT_VERSION = "v1.36.0"
_INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_json = json_response


def _major_minor(git_version: str) -> tuple[str, str]:
    """version.Info's major and minor for a gitVersion: the first two dotted parts as kube reports them
    ("v1.31+gke.1" -> "1", "31+"; digits with a "+" when the part carries anything after them)."""
    parts = git_version.removeprefix("v").split(".")
    out = []
    for part in [*parts, "", ""][:2]:
        digits = part[: len(part) - len(part.lstrip("0123456789"))]
        out.append(digits + ("+" if digits and digits != part else ""))
    return out[0], out[1]


class ApiServer:
    """An in-process kube-apiserver stand-in. See docs/sandbox.md ("API emulator").

    Fault hooks for tests: `compact_watch_history()`, `drop_watches()`, `fail_next(n, status)`; with
    ``fault_endpoints`` also served to other processes at `/debug/faults/*` (see `faultroutes`).
    """

    def __init__(
        self,
        *,
        admission: AdmissionPlugin | None = None,
        tls: bool = True,
        token: str | None = None,
        watch_history_size: int = 1000,
        bookmark_interval: float = 60.0,
        crd_establish_delay: float = 0.05,
        kubelet_host: str = "127.0.0.1",
        service_addresses: ServiceAddresses | None = None,
        git_version: str = GIT_VERSION,
        fault_endpoints: bool = False,
        bulk_load: bool = False,
    ):
        """``service_addresses`` routes the conversion webhooks' clientConfig.service to a listening
        ``host:port``; by default a ready endpoint of the Service's EndpointSlices, as kube-proxy would.
        ``git_version`` is what GET /version reports (a managed cluster's "v1.31.4-gke.1200" for a test of
        a client's version handling); below 1.32 in-place pod resize is as in that release (features.py),
        nothing else changes — the API served stays 1.36's. ``fault_endpoints`` serves the fault hooks
        over HTTP to the admin token (test-only: `kruise sandbox up --fault-endpoints`). ``bulk_load`` serves
        `POST /sandbox/bulk-load` (benchmarks only, see bulkload.py)."""
        self.admission = admission
        self.tls = tls
        self.token = token or secrets.token_urlsafe(24)
        self.store = Store(watch_history_size)
        self.tokens = TokenIssuer()  # serviceaccounts/<name>/token
        self.bookmark_interval = bookmark_interval
        self.crd_establish_delay = crd_establish_delay
        self.kubelet_host = kubelet_host  # where pods/log dials a node's kubelet port
        self.bulk_load = bulk_load
        self.list_snapshots = ListSnapshots()  # the pages of paged lists (listpages.py)
        self.git_version = git_version  # settable while serving: the next GET /version reports it
        self.fault_endpoints = fault_endpoints
        self._types: dict[tuple[str, str, str], ResourceType] = {}
        for rt in builtin_resources():
            self._types[(rt.group, rt.version, rt.plural)] = rt
        self._certs: ServingCerts | None = generate() if tls else None
        self._runner: web.AppRunner | None = None
        self._fail: list[tuple[int, str]] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._watch_responses: set[web.StreamResponse] = set()
        self.lifecycle = Lifecycle(self)
        self.conversion = Converter(WebhookCaller(service_addresses or self._service_endpoint))
        self._loop: asyncio.AbstractEventLoop | None = None
        self.url = ""
        self.port = 0
        for ns in _INITIAL_NAMESPACES:
            obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
            rt = self.type_for("", "v1", "namespaces")
            stamp_new(obj, rt)
            defaults.namespace(obj)
            # indexed like any write (its uid is a live owner) and given its default objects
            self.lifecycle.after_write(rt, self.store.put(("", "namespaces"), obj, "ADDED"), None)

    # ---------------------------------------------------------------- lifecycle
    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        self._loop = asyncio.get_running_loop()
        app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[self._middleware])
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, host, port, ssl_context=self._certs.server_context() if self._certs else None
        )
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"{'https' if self.tls else 'http'}://{host}:{bound}"
        self.port = bound
        return self.url

    async def listen_also(self, host: str) -> None:
        """Serve on ``host`` too, same port: e.g. the bridge address pods of real nodes reach the
        API at (the loopback address of ``start`` is not theirs)."""
        if self._runner is None:
            raise RuntimeError("the API server is not started")
        context = None
        if self._certs is not None:
            # clients there verify against the same CA, so the certificate must name this address too
            self._certs = self._certs.for_hosts(host)
            context = self._certs.server_context()
        site = web.TCPSite(self._runner, host, self.port, ssl_context=context)
        await site.start()

    async def stop(self) -> None:
        self.store.close_watchers()
        for task in list(self._tasks):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await self.conversion.aclose()

    def _service_endpoint(self, namespace: str, name: str, port: int) -> str:
        return serviceroute.resolve(
            lambda group, plural: self.store.list((group, plural)), namespace, name, port
        )

    def spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def write_kubeconfig(self, path: str | Path, context: str = "sandbox") -> Path:
        cluster: dict[str, Any] = {"server": self.url}
        if self._certs:
            cluster["certificate-authority-data"] = base64.b64encode(self._certs.ca_pem).decode()
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": "sandbox-admin", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": context, "user": "sandbox-admin", "namespace": "default"},
                }
            ],
            "current-context": context,
        }
        path = Path(path)
        path.write_text(yaml.safe_dump(config))
        return path

    @property
    def ca_pem(self) -> bytes | None:
        return self._certs.ca_pem if self._certs else None

    # ---------------------------------------------------------------- fault hooks
    def _on_loop(self, fn: Any, *args: Any) -> None:
        """Run `fn` on the server's loop (fault hooks may be called from a test's other thread)."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop or loop.is_closed():
            fn(*args)
            return
        done = threading.Event()

        def call() -> None:
            try:
                fn(*args)
            finally:
                done.set()

        loop.call_soon_threadsafe(call)
        done.wait(timeout=10)

    def compact_watch_history(self) -> None:
        """Every watch resume from an older resourceVersion now gets 410 Gone."""
        self._on_loop(self.store.compact)

    def drop_watches(self) -> None:
        """Close every open watch stream, as an apiserver restart would."""
        self._on_loop(self.store.close_watchers)

    def fail_next(self, count: int, status: int = 500, reason: str = "") -> None:
        """Answer the next `count` API requests with `status` (429 carries Retry-After: 1)."""
        reason = reason or {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}.get(
            status, "InternalError"
        )
        self._on_loop(self._fail.extend, [(status, reason)] * count)

    # ---------------------------------------------------------------- types
    def type_for(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._types.get((group, version, plural))

    def types(self) -> list[ResourceType]:
        return list(self._types.values())

    def _served_subresources(self, rt: ResourceType) -> tuple[str, ...]:
        """The type's subresources at the reported version: no pods/resize before 1.32 (features.py)."""
        if rt.key == ("", "pods") and not features_for(self.git_version).resize_subresource:
            return tuple(sub for sub in rt.subresources if sub != "resize")
        return rt.subresources

    def _discovered_types(self) -> list[ResourceType]:
        """types() as discovery lists them at the reported version."""
        served = [(rt, self._served_subresources(rt)) for rt in self._types.values()]
        return [rt if subs == rt.subresources else replace(rt, subresources=subs) for rt, subs in served]

    def storage_type(self, group: str, plural: str) -> ResourceType | None:
        candidates = [rt for rt in self._types.values() if rt.group == group and rt.plural == plural]
        for rt in candidates:
            if not rt.is_custom or rt.version == rt.storage_version:
                return rt
        return candidates[0] if candidates else None

    def type_by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        return next(
            (
                rt
                for rt in self._types.values()
                if rt.group == group and rt.version == version and rt.kind == kind
            ),
            None,
        )

    def register_crd(self, crd: dict[str, Any]) -> None:
        self.unregister_crd(crd["metadata"]["name"], drop_objects=False)
        for rt in crd_resources(crd):
            self._types[(rt.group, rt.version, rt.plural)] = rt

    def unregister_crd(self, crd_name: str, drop_objects: bool = True) -> None:
        gone = [k for k, rt in self._types.items() if rt.crd_name == crd_name]
        keys = {self._types[k].key for k in gone}
        for k in gone:
            del self._types[k]
        if drop_objects:
            for key in keys:
                self.store.drop_resource(key)

    # ---------------------------------------------------------------- HTTP plumbing
    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        path = request.path
        public = path in ("/healthz", "/readyz", "/livez", "/version")
        if not public and not self._authenticate(request):
            return _json(StatusError(401, "Unauthorized", "Unauthorized").status(), 401)
        if self._fail and (path.startswith("/api/") or path.startswith("/apis/")):
            status, reason = self._fail.pop(0)
            headers = {"Retry-After": "1"} if status == 429 else {}
            message = {429: "Too many requests, please try again later."}.get(
                status, "Internal error occurred"
            )
            return _json(
                StatusError(
                    status, reason, message, {"retryAfterSeconds": 1} if status == 429 else None
                ).status(),
                status,
                headers,
            )
        try:
            return await handler(request)
        except StatusError as exc:
            return _json(exc.status(), exc.code)
        except AdmissionDenied as exc:
            return _json(exc.status, int(exc.status.get("code", 403)))

    def _authenticate(self, request: web.Request) -> bool:
        """The admin bearer token (system:admin), or a TokenRequest token (its service account,
        recorded on the request for admission's userInfo)."""
        header = request.headers.get("Authorization", "")
        if header == f"Bearer {self.token}":
            return True
        user = self.tokens.user_of(header.removeprefix("Bearer ")) if header.startswith("Bearer ") else None
        if user is None:
            return False
        request[USER_INFO] = user
        return True

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        parts = [p for p in request.path.split("/") if p]
        if not parts:
            return _json(
                {"paths": ["/api", "/api/v1", "/apis", "/healthz", "/openapi/v2", "/openapi/v3", "/version"]}
            )
        head = parts[0]
        if head in ("healthz", "readyz", "livez"):
            return web.Response(text="ok")
        if head == "version":
            major, minor = _major_minor(self.git_version)
            return _json(
                {
                    "major": major,
                    "minor": minor,
                    "emulationMajor": major,
                    "emulationMinor": minor,
                    "gitVersion": self.git_version,
                    "gitCommit": "0" * 40,
                    "gitTreeState": "clean",
                    "buildDate": "2026-08-01T00:00:00Z",
                    "goVersion": "go1.25.0",
                    "compiler": "gc",
                    "platform": "linux/amd64",
                }
            )
        if head == "openapi":
            if parts[1:] == ["v2"]:
                return self._openapi_v2(request)
            return self._openapi(parts[1:])
        if self.fault_endpoints and tuple(parts[:2]) == faultroutes.PREFIX and len(parts) == 3:
            if USER_INFO in request:  # a service account's token: only the admin may inject faults
                raise StatusError(403, "Forbidden", "fault endpoints: only the admin token may call them")
            return _json(faultroutes.serve(request, parts[2], self.store, self._fail))
        if self.bulk_load and request.path == bulkload.PATH and request.method == "POST":
            return _json(bulkload.answer(bulkload.load(self, await request.read())))
        if head == "api":
            if len(parts) == 1:
                return self._discovery_root(request, legacy=True)
            return await self._api(request, "", parts[1], parts[2:])
        if head == "apis":
            if len(parts) == 1:
                return self._discovery_root(request, legacy=False)
            if len(parts) == 2:
                doc = discovery.api_group(self.types(), parts[1])
                if doc is None:
                    raise StatusError(404, "NotFound", "the server could not find the requested resource")
                return _json(doc)
            return await self._api(request, parts[1], parts[2], parts[3:])
        raise StatusError(404, "NotFound", "the server could not find the requested resource")

    def _discovery_root(self, request: web.Request, legacy: bool) -> web.Response:
        accept = request.headers.get("Accept", "")
        if "as=APIGroupDiscoveryList" in accept and "v=v2;" in accept.replace(" ", "") + ";":
            doc = discovery.aggregated(self._discovered_types(), legacy)
            return _json(doc, content_type=discovery.AGGREGATED_V2)
        return _json(discovery.api_versions() if legacy else discovery.api_group_list(self.types()))

    def _openapi_v2(self, request: web.Request) -> web.Response:
        if openapiv2.wants_protobuf(request.headers.get("Accept", "")):
            body = openapiv2.document_protobuf(self.git_version)
            return web.Response(body=body, content_type=openapiv2.PROTOBUF)
        return _json(openapiv2.document(self.git_version))

    def _openapi(self, parts: list[str]) -> web.Response:
        if parts == ["v3"]:
            return _json(discovery.openapi_v3_root(self.types()))
        if len(parts) >= 3 and parts[0] == "v3":
            group, version = (
                ("", parts[2]) if parts[1] == "api" else (parts[2], parts[3] if len(parts) > 3 else "")
            )
            doc = discovery.openapi_v3_gv(self.types(), group, version)
            if doc is not None:
                return _json(doc)
        raise StatusError(404, "NotFound", "the server could not find the requested resource")

    # ---------------------------------------------------------------- routing of resource paths
    async def _api(
        self, request: web.Request, group: str, version: str, rest: list[str]
    ) -> web.StreamResponse:
        if not rest:
            doc = discovery.resource_list(self._discovered_types(), group, version)
            if doc is None:
                raise StatusError(404, "NotFound", "the server could not find the requested resource")
            return _json(doc)
        namespace = ""
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (group == "" and rest[2] in ("status", "finalize"))
        ):
            namespace, rest = rest[1], rest[2:]
        if group == "" and rest == ["bindings"] and request.method == "POST" and namespace:
            # v1 bindings: the scheduler's older spelling of pods/{name}/binding.
            body = await request.json()
            pods = self.type_for("", "v1", "pods")
            assert pods is not None
            return await Handlers(
                self, request, pods, namespace, (body.get("metadata") or {}).get("name", ""), "binding"
            ).run()
        rt = self.type_for(group, version, rest[0])
        if rt is None:
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if len(rest) > 3 or (sub and sub not in self._served_subresources(rt)):
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        if rt.namespaced and not namespace and name:
            raise StatusError(404, "NotFound", "the server could not find the requested resource")
        return await Handlers(self, request, rt, namespace, name, sub).run()
