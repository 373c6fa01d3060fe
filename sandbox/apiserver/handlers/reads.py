"""GET of one object and of a collection (list): selectors, paging, Table and metadata-only views.

A list filters by label and field selector, sorts by namespace and name, pages with `limit` and an
opaque `continue` token (which pins the list's resourceVersion), refuses an `Exact` resourceVersion the
store has moved past, and is served as a plain `<Kind>List`, a `Table` or a
`PartialObjectMetadataList` according to the Accept header. `?watch=true` is not here: see watch.py.
"""

from __future__ import annotations

import base64
import heapq
from typing import Any

import orjson
from aiohttp import web

from kruise.sandbox.apiserver import tables
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.handlers.base import RequestContext, json_response
from kruise.sandbox.apiserver.handlers.subresources import scale_of
from kruise.sandbox.apiserver.selectors import labels_match


def _list_order(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


class Reads(RequestContext):
    """GET of a named object (or its /scale) and of a collection."""

    async def get(self) -> dict[str, Any]:
        obj = self._stored()
        if self.sub == "scale":
            return scale_of(self.rt, await self._served(obj))
        return obj

    async def _respond_list(self) -> web.Response:
        reqs, fields = self._filters()
        items = [
            o
            for o in self.store.list(self.rt.key, self.namespace)
            if labels_match(reqs, o["metadata"].get("labels")) and fields(o)
        ]
        rv_param = self.query.get("resourceVersion", "")
        if (
            rv_param
            and rv_param != "0"
            and self.query.get("resourceVersionMatch") == "Exact"
            and rv_param != self.store_rv()
        ):
            raise StatusError(410, "Expired", f"too old resource version: {rv_param} ({self.store.rv})")
        list_meta: dict[str, Any] = {"resourceVersion": self.store_rv()}
        cont = self.query.get("continue")
        if cont:
            try:
                token = orjson.loads(base64.urlsafe_b64decode(cont + "=" * (-len(cont) % 4)))
                start = (token["ns"], token["name"])
            except (ValueError, KeyError, TypeError):
                raise StatusError(
                    400, "BadRequest", "continue key is not valid: illegal base64 data"
                ) from None
            items = [o for o in items if (o["metadata"].get("namespace", ""), o["metadata"]["name"]) > start]
            list_meta["resourceVersion"] = str(token.get("rv", self.store.rv))
        limit = int(self.query.get("limit") or 0)
        if limit > 0 and len(items) > limit:
            # one page out of many: the smallest `limit` keys, not a sort of the whole rest each page
            # (a 100k-pod list in pages of 500 would sort 200 times)
            remaining = len(items) - limit
            items = heapq.nsmallest(limit, items, key=_list_order)
            last = items[limit - 1]["metadata"]
            token = {
                "rv": int(list_meta["resourceVersion"]),
                "ns": last.get("namespace", ""),
                "name": last["name"],
            }
            list_meta["continue"] = base64.urlsafe_b64encode(orjson.dumps(token)).decode().rstrip("=")
            list_meta["remainingItemCount"] = remaining
        else:
            items.sort(key=_list_order)
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
