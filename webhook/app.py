"""The ASGI app: one POST route per handler path, plus /convert, /healthz, /readyz and /metrics.

Decoding is done by hand from the raw body (orjson + pydantic) rather than by FastAPI's body
injection, so that every malformed review gets the same clean 400 instead of FastAPI's 422 shape,
and a handler bug becomes a 500 *review* the apiserver can report rather than a dropped connection.

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
from collections.abc import Callable, Mapping

import orjson
import structlog
from fastapi import FastAPI, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import ValidationError

from kruise.webhook import paths
from kruise.webhook.admission import AdmissionReview, Handler, deny, response_body
from kruise.webhook.conversion import serve_conversion
from kruise.webhook.metrics import WebhookMetrics

log = structlog.get_logger("kruise.webhook")

MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's own request size limit
_SECONDS = re.compile(r"^(\d+(?:\.\d+)?)s$")  # how client-go writes a whole-second time.Duration


def caller_deadline(query_timeout: str | None) -> float | None:
    """Seconds from the query's ``timeout`` (``10s``); None when absent or not in the apiserver's form
    (upstream ignores the parameter, so a bad one changes nothing)."""
    match = _SECONDS.match(query_timeout or "")
    return float(match.group(1)) if match else None


def _json(status: int, body: object) -> Response:
    return Response(content=orjson.dumps(body), status_code=status, media_type="application/json")


def _bad_request(message: str) -> Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 400, "reason": "BadRequest"}
    body["message"] = message
    return _json(400, body)


def _describe(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "body"
    return f"invalid AdmissionReview: {where}: {first['msg']}"


def create_app(
    routes: Mapping[str, Handler],
    *,
    ready: Callable[[], bool] = lambda: True,
    metrics: WebhookMetrics | None = None,
) -> FastAPI:
    """`routes` maps URL path -> handler; `ready` gates /readyz (caches synced and a cert loaded)."""
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

    for path, handler in routes.items():
        app.add_api_route(path, _endpoint(path, handler, metrics, ready), methods=["POST"])
    app.add_api_route(paths.CONVERT, _conversion_endpoint(metrics), methods=["POST"])
    return app


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


def _endpoint(
    path: str, handler: Handler, metrics: WebhookMetrics, ready: Callable[[], bool]
) -> Callable[[Request], object]:
    async def serve(request: Request) -> Response:
        started = time.perf_counter()
        metrics.in_flight.labels(path).inc()
        try:
            if ready():
                seconds = caller_deadline(request.query_params.get("timeout"))
                deadline = None if seconds is None else asyncio.get_running_loop().time() + seconds
                response = await _admit(path, handler, request, metrics, deadline)
            else:  # admitting from caches that are not filled yet would admit wrongly
                response = Response(
                    content=b"kruise-webhook is not ready: informer caches have not synced",
                    status_code=503,
                    media_type="text/plain",
                )
        finally:
            metrics.in_flight.labels(path).dec()
        metrics.latency.labels(path).observe(time.perf_counter() - started)
        metrics.requests.labels(path, str(response.status_code)).inc()
        return response

    serve.__name__ = "admit_" + path.strip("/").replace("-", "_")
    return serve


async def _admit(
    path: str, handler: Handler, request: Request, metrics: WebhookMetrics, deadline: float | None
) -> Response:
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    if content_type != "application/json":
        return _bad_request(f"contentType={content_type or '<none>'}, expected application/json")
    body = await request.body()
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
    scope = asyncio.timeout_at(deadline)
    try:
        async with scope:
            decision = await handler(req)
    except Exception as exc:  # a handler bug must still answer, and say what broke
        if isinstance(exc, TimeoutError) and scope.expired():
            log.warning("admission handler passed the caller's deadline", webhook=path, uid=req.uid)
            message = f"webhook {path} did not answer within the caller's timeout: context deadline exceeded"
        else:
            log.exception("admission handler failed", webhook=path, uid=req.uid)
            message = f"internal error in webhook {path}: {exc}"
        decision = deny(500, message)
    metrics.decisions.labels(path, "true" if decision.allowed else "false").inc()
    return _json(200, response_body(review.api_version, req.uid, raw["request"].get("object"), decision))
