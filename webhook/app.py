"""The ASGI app: one POST route per handler path, plus /convert, /healthz, /readyz and /metrics.

Admission requests are the hot path (kube-apiserver calls the pod webhook on every pod CREATE), so
they are served as plain ASGI endpoints found by exact path in a dict, in front of FastAPI:
FastAPI's router tries every route's regex in turn (over a hundred here), and its middleware and
dependency layers cost several times what the pod handler itself does. Everything else (probes,
metrics, /convert, unknown paths, wrong methods) goes to FastAPI; the admission endpoints are also
mounted there, so a GET still gets 405 and a path under a `root_path` still resolves.

Decoding is done by hand from the raw body (orjson + pydantic), so that every malformed review gets
the same clean 400 instead of FastAPI's 422 shape, and a handler bug becomes a 500 *review* the
apiserver can report rather than a dropped connection.

The caller's deadline bounds a handler. kube-apiserver sends ``?timeout=<n>s`` and gives up after n
seconds; controller-runtime's server hands the handler the request's context, which Go cancels when
the apiserver drops the connection, so upstream's handlers stop waiting (on a cache, on the API) at
that moment and answer an error nobody reads. Here the handler is cancelled n seconds after the
request arrived — later than the caller's own deadline, which started before sending, so the caller
always sees its own timeout (and applies failurePolicy) rather than an error review racing it — and a
500 review is answered, so no request is held past the deadline.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Protocol
from urllib.parse import parse_qsl

import orjson
import structlog
from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import ValidationError
from starlette.requests import ClientDisconnect

from kruise.webhook import paths
from kruise.webhook.admission import AdmissionRequest, AdmissionReview, Decision, Handler, deny, response_body
from kruise.webhook.conversion import serve_conversion
from kruise.webhook.metrics import WebhookMetrics

log = structlog.get_logger("kruise.webhook")

MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's own request size limit
CACHE_WAIT_SECONDS = 10.0
"""How long a request without ``?timeout`` waits for re-listing caches (the configurations' default)."""
_SECONDS = re.compile(r"^(\d+(?:\.\d+)?)s$")  # how client-go writes a whole-second time.Duration

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
# status, content type, body: what an endpoint answers, sent by `_send`
Answer = tuple[int, bytes, bytes]

_JSON = b"application/json"
_TEXT = b"text/plain; charset=utf-8"  # what starlette sends for media_type="text/plain"
_NOT_READY = (503, _TEXT, b"kruise-webhook is not ready: informer caches have not synced")
_SERVER_ERROR = (500, _TEXT, b"Internal Server Error")  # starlette's ServerErrorMiddleware answer


class CacheGate(Protocol):
    """The informer caches the handlers read. A cache that lost its watch (410 Gone and re-listing, or
    a list/watch failing) may lack objects changed meanwhile: a pod admitted from it could miss the
    SidecarSet made in that gap. Requests wait (within the caller's deadline) until all are current."""

    def not_current(self) -> list[str]: ...

    async def wait_current(self) -> None: ...


def caller_deadline(query_timeout: str | None) -> float | None:
    """Seconds from the query's ``timeout`` (``10s``); None when absent or not in the apiserver's form
    (upstream ignores the parameter, so a bad one changes nothing)."""
    match = _SECONDS.match(query_timeout or "")
    return float(match.group(1)) if match else None


def _json(status: int, body: object) -> Answer:
    return status, _JSON, orjson.dumps(body)


def _bad_request(message: str) -> Answer:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 400, "reason": "BadRequest"}
    body["message"] = message
    return _json(400, body)


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "body"
    return f"invalid AdmissionReview: {where}: {first['msg']}"


class WebhookApp:
    """The ASGI callable uvicorn serves: admission POSTs by exact path, the rest through FastAPI."""

    def __init__(self, admission: Mapping[str, _AdmissionEndpoint], fallback: FastAPI) -> None:
        self._admission = dict(admission)
        self.fallback = fallback
        self.state = fallback.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not scope.get("root_path"):
            endpoint = self._admission.get(scope["path"])
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await self.fallback(scope, receive, send)


def create_app(
    routes: Mapping[str, Handler],
    *,
    ready: Callable[[], bool] = lambda: True,
    metrics: WebhookMetrics | None = None,
    caches: CacheGate | None = None,
) -> WebhookApp:
    """`routes` maps URL path -> handler; `ready` gates /readyz (caches synced and a cert loaded);
    `caches`, when given, is waited on before each admission handler (see `CacheGate`)."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.metrics = metrics = metrics or WebhookMetrics()

    @app.get("/healthz")
    async def healthz() -> Response:
        return Response(content=b"ok", media_type="text/plain")

    @app.get("/readyz")
    async def readyz() -> Response:
        if ready():
            return Response(content=b"ok", media_type="text/plain")
        return Response(content=b"not ready", status_code=503, media_type="text/plain")

    @app.get("/metrics")
    async def prometheus() -> Response:
        return Response(content=generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    endpoints = {
        path: _AdmissionEndpoint(path, handler, metrics, ready, caches) for path, handler in routes.items()
    }
    for path, endpoint in endpoints.items():
        app.router.add_route(path, endpoint, methods=["POST"])  # an ASGI callable: mounted as is
    app.add_api_route(paths.CONVERT, _conversion_endpoint(metrics), methods=["POST"])
    return WebhookApp(endpoints, app)


def _conversion_endpoint(metrics: WebhookMetrics) -> Callable[[Request], object]:
    async def convert(request: Request) -> Response:
        started = time.perf_counter()
        metrics.in_flight.labels(paths.CONVERT).inc()
        try:
            response = await serve_conversion(request, MAX_BODY_BYTES)
        finally:
            metrics.in_flight.labels(paths.CONVERT).dec()
        metrics.latency.labels(paths.CONVERT).observe(time.perf_counter() - started)
        metrics.requests.labels(paths.CONVERT, str(response.status_code)).inc()
        return response

    return convert


def _header(scope: Scope, name: bytes) -> str:
    """The first value of a header, as starlette's `Headers.get` reads it (names are lower case in ASGI)."""
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return ""


def _query(scope: Scope, name: str) -> str | None:
    """A query parameter as starlette's `QueryParams.get` reads it: the last one given wins."""
    query = scope.get("query_string", b"")
    if not query:
        return None
    found = None
    for key, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if key == name:
            found = value
    return found


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _send(send: Send, answer: Answer) -> None:
    status, content_type, body = answer
    headers = [(b"content-length", str(len(body)).encode()), (b"content-type", content_type)]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _AdmissionEndpoint:
    """One admission path as a plain ASGI app, with its metric series looked up once and kept (the
    prometheus `labels()` lookup takes a lock and builds a key; series still appear on first use)."""

    def __init__(
        self,
        path: str,
        handler: Handler,
        metrics: WebhookMetrics,
        ready: Callable[[], bool],
        caches: CacheGate | None = None,
    ) -> None:
        self.path = path
        self.handler = handler
        self.metrics = metrics
        self.ready = ready
        self.caches = caches
        self._series: dict[tuple[str, str], Any] = {}

    def _series_of(self, kind: str, value: str = "") -> Any:
        key = (kind, value)
        series = self._series.get(key)
        if series is None:
            collector = getattr(self.metrics, kind)
            series = collector.labels(self.path, value) if value else collector.labels(self.path)
            self._series[key] = series
        return series

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            answer = await self._serve(scope, receive)
        except Exception:  # as starlette's ServerErrorMiddleware: answer 500, then let the server log it
            await _send(send, _SERVER_ERROR)
            raise
        await _send(send, answer)

    async def _serve(self, scope: Scope, receive: Receive) -> Answer:
        started = time.perf_counter()
        in_flight = self._series_of("in_flight")
        in_flight.inc()
        try:
            if self.ready():
                seconds = caller_deadline(_query(scope, "timeout"))
                deadline = None if seconds is None else asyncio.get_running_loop().time() + seconds
                answer = await self._admit(scope, receive, deadline)
            else:  # admitting from caches that are not filled yet would admit wrongly
                answer = _NOT_READY
        finally:
            in_flight.dec()
        self._series_of("latency").observe(time.perf_counter() - started)
        self._series_of("requests", str(answer[0])).inc()
        return answer

    async def _admit(self, scope: Scope, receive: Receive, deadline: float | None) -> Answer:
        path = self.path
        content_type = _header(scope, b"content-type").split(";")[0].strip()
        if content_type != "application/json":
            return _bad_request(f"contentType={content_type or '<none>'}, expected application/json")
        body = await _read_body(receive)
        if not body:
            return _bad_request("request body is empty")
        if len(body) > MAX_BODY_BYTES:
            return _bad_request(f"request body is larger than {MAX_BODY_BYTES} bytes")
        try:
            raw = orjson.loads(body)
            review = AdmissionReview.model_validate(raw)
        except orjson.JSONDecodeError as exc:
            return _bad_request(f"request body is not JSON: {exc}")
        except ValidationError as exc:
            return _bad_request(_describe(exc))
        req = review.request
        decision = None
        if self.caches is not None:
            decision = await _caches_current(path, req.uid, self.caches, deadline)
        if decision is None:
            decision = await self._handle(req, deadline)
        self._series_of("decisions", "true" if decision.allowed else "false").inc()
        body = response_body(review.api_version, req.uid, raw["request"].get("object"), decision)
        return _json(200, body)

    async def _handle(self, req: AdmissionRequest, deadline: float | None) -> Decision:
        path = self.path
        scope_timeout = asyncio.timeout_at(deadline)
        try:
            async with scope_timeout:
                return await self.handler(req)
        except Exception as exc:  # a handler bug must still answer, and say what broke
            if isinstance(exc, TimeoutError) and scope_timeout.expired():
                log.warning("admission handler passed the caller's deadline", webhook=path, uid=req.uid)
                message = (
                    f"webhook {path} did not answer within the caller's timeout: context deadline exceeded"
                )
            else:
                log.exception("admission handler failed", webhook=path, uid=req.uid)
                message = f"internal error in webhook {path}: {exc}"
            return deny(500, message)


async def _caches_current(path: str, uid: str, caches: CacheGate, deadline: float | None) -> Decision | None:
    """None once every cache is current; past the deadline a 500 review, so the caller's
    failurePolicy refuses the object instead of it being admitted from a cache with a gap."""
    if not caches.not_current():
        return None
    loop = asyncio.get_running_loop()
    until = deadline if deadline is not None else loop.time() + CACHE_WAIT_SECONDS
    try:
        async with asyncio.timeout_at(until):
            await caches.wait_current()
    except TimeoutError:
        stale = ", ".join(caches.not_current()) or "none"
        log.warning("informer caches not current by the deadline", webhook=path, uid=uid, stale=stale)
        return deny(500, f"webhook {path}: informer caches are re-listing ({stale}); not answering from them")
    return None
