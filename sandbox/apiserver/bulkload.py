"""`POST /sandbox/bulk-load`: store many objects at once, for benchmarks only (off unless asked for).

A benchmark of a controller's cache at 100,000 pods needs those pods in the emulator as if kubelets
had run them; creating them one request at a time through the whole write pipeline (admission,
validation, defaulting) costs minutes and measures nothing the benchmark is about. This path takes
NDJSON (one object per line, each with apiVersion and kind) and stores every object as it is, the
way an etcd restore would: identity fields the caller set (uid, creationTimestamp) are kept so owner
references can be written before the owner exists on the server; missing ones are stamped as on a
create. Nothing is defaulted, admitted or validated beyond what storing needs, so the caller owns the
objects' realism. Watchers see ADDED events and the garbage collector's owner index is kept, as for
any write. Enabled only by `ApiServer(bulk_load=True)` (`python -m kruise.sandbox.apiserver
--allow-bulk-load`); a server without it answers 404.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import orjson

from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.handlers.base import now_iso
from kruise.sandbox.apiserver.handlers.writes import has_generation

if TYPE_CHECKING:
    from kruise.sandbox.apiserver.server import ApiServer

PATH = "/sandbox/bulk-load"


def _invalid(line: int, message: str) -> StatusError:
    return StatusError(400, "BadRequest", f"bulk-load line {line}: {message}")


def load(server: ApiServer, body: bytes) -> int:
    """Store every object of the NDJSON `body`; returns how many. The whole body is checked before the
    first object is stored, so a bad line stores nothing."""
    prepared = []
    for number, raw in enumerate(body.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise _invalid(number, f"not JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise _invalid(number, "must be a JSON object")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        rt = server.type_by_kind(api_version or "", kind or "")
        if rt is None:
            raise _invalid(number, f"apiVersion/kind: {api_version}/{kind} is not served")
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise _invalid(number, "metadata.name: required")
        if rt.namespaced and not meta.get("namespace"):
            raise _invalid(number, f"metadata.namespace: required for {kind}")
        if not rt.namespaced and meta.get("namespace"):
            raise _invalid(number, f"metadata.namespace: must be empty for cluster-scoped {kind}")
        storage = server.storage_type(*rt.key)
        if storage is not None and storage.version != rt.version:
            raise _invalid(number, f"apiVersion: {api_version} is not the storage version {storage.version}")
        prepared.append((rt, obj))
    for rt, obj in prepared:
        meta = obj["metadata"]
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", now_iso())
        if has_generation(rt):
            meta.setdefault("generation", 1)
        old = server.store.get(rt.key, meta.get("namespace", ""), meta["name"])
        stored = server.store.put(rt.key, obj, "MODIFIED" if old is not None else "ADDED", old)
        server.lifecycle.after_write(rt, stored, old)
    return len(prepared)


def answer(count: int) -> dict[str, Any]:
    return {"kind": "BulkLoadResult", "loaded": count}
