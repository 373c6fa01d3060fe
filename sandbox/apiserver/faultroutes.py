"""`/debug/faults/*`: the emulator's fault hooks for a test in another process (the e2e fault suite).

The hooks (`ApiServer.drop_watches` and friends) are Python calls; an e2e test talks to `kruise sandbox
up` only over HTTP, so the sandbox started with `--fault-endpoints` serves them here. Off by default: a
sandbox a newcomer starts has no way to have its watches cut. Only the admin token may call them (a
service account's token is refused as kube-apiserver refuses an unauthorised verb), and only POST.

    POST /debug/faults/drop-watches[?compact=true]   close every open watch; with compact, first forget
                                                     the history, so every resume gets 410 Gone
    POST /debug/faults/compact-watch-history         resumes from an older resourceVersion get 410 Gone
    POST /debug/faults/fail-next?count=N&status=S    the next N API requests fail with S (429/500/503)

Each answers JSON: what it did (`watchesDropped`, `compactedResourceVersion`, `failing`).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.store import Store

PREFIX = ("debug", "faults")
FAIL_STATUSES = (429, 500, 503)


def _int_param(request: web.Request, name: str, default: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise StatusError(400, "BadRequest", f"{name}: must be an integer, got {raw!r}") from None


def _flag(request: web.Request, name: str) -> bool:
    raw = request.query.get(name, "false").lower()
    if raw not in ("true", "false"):
        raise StatusError(400, "BadRequest", f"{name}: must be true or false, got {raw!r}")
    return raw == "true"


def serve(request: web.Request, action: str, store: Store, fail: list[tuple[int, str]]) -> dict[str, Any]:
    """Run the named fault on the server's loop (the caller's) and say what it did."""
    if request.method != "POST":
        raise StatusError(405, "MethodNotAllowed", f"{request.method}: fault endpoints take POST only")
    if action == "drop-watches":
        compacted = None
        if _flag(request, "compact"):
            store.compact()
            compacted = store.compacted_rv
        dropped = store.close_watchers()
        return {"watchesDropped": dropped, "compactedResourceVersion": compacted}
    if action == "compact-watch-history":
        store.compact()
        return {"compactedResourceVersion": store.compacted_rv}
    if action == "fail-next":
        count = _int_param(request, "count", 1)
        status = _int_param(request, "status", 500)
        if count < 1:
            raise StatusError(400, "BadRequest", f"count: must be >= 1, got {count}")
        if status not in FAIL_STATUSES:
            raise StatusError(
                400, "BadRequest", f"status: must be one of {list(FAIL_STATUSES)}, got {status}"
            )
        reason = {429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable"}[status]
        fail.extend([(status, reason)] * count)
        return {"failing": len(fail)}
    raise StatusError(
        404, "NotFound", f"no fault named {action!r} (drop-watches, compact-watch-history, fail-next)"
    )
