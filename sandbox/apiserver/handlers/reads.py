"""GET of one object and of a collection (list): selectors, paging, Table and metadata-only views.

A list filters by label and field selector, sorts by namespace and name, pages with `limit` and an
opaque `continue` token (which pins the list's resourceVersion), refuses an `Exact` resourceVersion the
store has moved past, and is served as a plain `<Kind>List`, a `Table` or a
`PartialObjectMetadataList` according to the Accept header. `?watch=true` is not here: see watch.py.
"""

from __future__ import annotations

import base64
import bisect
from typing import Any

import orjson
from aiohttp import web

from kruise.sandbox.apiserver import tables
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.handlers.base import RequestContext, json_response
from kruise.sandbox.apiserver.handlers.subresources import scale_of
from kruise.sandbox.apiserver.listpages import list_key
from kruise.sandbox.apiserver.selectors import labels_match


def _continue_token(cont: str) -> dict[str, Any]:
    """A continue token's fields: the list's rv, the last key served (`ns`, `name`), its snapshot."""
    try:
        token = orjson.loads(base64.urlsafe_b64decode(cont + "=" * (-len(cont) % 4)))
        _token_key(token)
    except (ValueError, KeyError, TypeError):
        raise StatusError(400, "BadRequest", "continue key is not valid: illegal base64 data") from None
    return token


def _token_key(token: Any) -> tuple[str, str]:
    return str(token["ns"]), str(token["name"])


class Reads(RequestContext):
    """GET of a named object (or its /scale) and of a collection."""

    async def get(self) -> dict[str, Any]:
        obj = self._stored()
        if self.sub == "scale":
            return scale_of(self.rt, await self._served(obj))
        return obj

    async def _respond_list(self) -> web.Response:
        rv_param = self.query.get("resourceVersion", "")
        if (
            rv_param
            and rv_param != "0"
            and self.query.get("resourceVersionMatch") == "Exact"
            and rv_param != self.store_rv()
        ):
            raise StatusError(410, "Expired", f"too old resource version: {rv_param} ({self.store.rv})")
        list_meta: dict[str, Any] = {"resourceVersion": self.store_rv()}
        limit = int(self.query.get("limit") or 0)
        snapshots = self.server.list_snapshots
        scope = (
            self.rt.key,
            self.namespace,
            self.query.get("labelSelector", ""),
            self.query.get("fieldSelector", ""),
        )
        cont = self.query.get("continue")
        token = _continue_token(cont) if cont else None
        snapshot_id = token.get("snap") if token else None
        paged = snapshots.page(snapshot_id, scope, _token_key(token), limit) if token else None
        if token:
            list_meta["resourceVersion"] = str(token.get("rv", self.store.rv))
        if paged is not None:
            items, remaining = paged
        else:
            # the first page, or a token whose snapshot is gone: filter and order the collection once
            reqs, fields = self._filters()
            items = sorted(
                (
                    o
                    for o in self.store.list(self.rt.key, self.namespace)
                    if labels_match(reqs, o["metadata"].get("labels")) and fields(o)
                ),
                key=list_key,
            )
            if token:
                items = items[bisect.bisect_right(items, _token_key(token), key=list_key) :]
            remaining = max(0, len(items) - limit) if limit > 0 else 0
            snapshot_id = snapshots.keep(scope, items) if remaining else None
            items = items[:limit] if remaining else items
        if remaining:
            last = items[-1]["metadata"]
            token = {
                "rv": int(list_meta["resourceVersion"]),
                "ns": last.get("namespace", ""),
                "name": last["name"],
                "snap": snapshot_id,
            }
            list_meta["continue"] = base64.urlsafe_b64encode(orjson.dumps(token)).decode().rstrip("=")
            list_meta["remainingItemCount"] = remaining
        elif isinstance(snapshot_id, int):
            snapshots.drop(snapshot_id)
        accept = self.request.headers.get("Accept", "")
        served = await self._served_all(items)
        if "as=Table" in accept:
            return json_response(
                tables.to_table(self.rt, served, list_meta, self.query.get("includeObject", "Metadata"))
            )
        if "as=PartialObjectMetadataList" in accept:
            return json_response(
                {
                    "kind": "PartialObjectMetadataList",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": list_meta,
                    "items": [
                        {
                            "kind": "PartialObjectMetadata",
                            "apiVersion": "meta.k8s.io/v1",
                            "metadata": o["metadata"],
                        }
                        for o in served
                    ],
                }
            )
        body = (
            b'{"kind":"'
            + f"{self.rt.kind}List".encode()
            + b'","apiVersion":"'
            + self.rt.api_version.encode()
            + b'","metadata":'
            + orjson.dumps(list_meta)
            + b',"items":'
            + orjson.dumps(served)
            + b"}"
        )
        resp = web.Response(body=body)
        resp.headers["Content-Type"] = "application/json"
        return resp
