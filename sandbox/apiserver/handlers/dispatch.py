"""Routing one request to its verb, and rendering the reply.

`Handlers` is the class `server.ApiServer` builds per resource request: the verb mixins (reads, watch,
writes, delete, subresources) over the shared `base.RequestContext`. `run` picks the verb from the HTTP
method, the name and the subresource; `_respond` renders the result as JSON, a Table or
PartialObjectMetadata according to the Accept header, with any admission warnings as `Warning`
headers.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kruise.sandbox.apiserver import tables
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.handlers.base import json_response, parse_bool
from kruise.sandbox.apiserver.handlers.delete import Deletes
from kruise.sandbox.apiserver.handlers.reads import Reads
from kruise.sandbox.apiserver.handlers.subresources import Subresources
from kruise.sandbox.apiserver.handlers.watch import Watch
from kruise.sandbox.apiserver.handlers.writes import Writes


class Handlers(Reads, Watch, Writes, Deletes, Subresources):
    """One request against one resource. The mixins call each other through `self` where one verb
    rides on another: PATCH ends in an update or create, a /scale write commits through the update
    path, an eviction deletes through the delete path."""

    async def run(self) -> web.StreamResponse:
        method = self.request.method
        if self.sub in ("exec", "attach") and method in ("GET", "POST"):
            return await self.serve_stream()
        if method == "GET":
            if self.sub == "log":
                return await self.serve_log()
            if self.name:
                return await self._respond(await self.get())
            if parse_bool(self.query.get("watch")):
                return await self.watch()
            return await self._respond_list()
        if method == "POST" and self.rt.key == ("authorization.k8s.io", "selfsubjectaccessreviews"):
            return await self._respond(await self.access_review(), 201)
        if method == "POST":
            if self.sub in ("eviction", "binding"):
                return await self._respond(await self.pod_subresource(), 201)
            if self.sub == "token":
                return await self._respond(await self.token_request(), 201)
            if self.name:
                raise StatusError(
                    405,
                    "MethodNotAllowed",
                    "the server does not allow this method on the requested resource",
                )
            return await self._respond(await self.create(), 201)
        if method == "PUT":
            if not self.name:
                raise StatusError(
                    405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
                )
            return await self._respond(await self.guaranteed(self.update))
        if method == "PATCH":
            if not self.name:
                raise StatusError(
                    405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
                )
            obj, created = await self.guaranteed(self.patch)
            return await self._respond(obj, 201 if created else 200)
        if method == "DELETE":
            if not self.name:
                return await self._respond(await self.delete_collection())
            obj, code = await self.delete()
            return await self._respond(obj, code)
        raise StatusError(
            405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
        )

    async def _respond(self, obj: dict[str, Any], status: int = 200) -> web.Response:
        headers = {}
        if self.warnings:
            headers["Warning"] = ", ".join(f'299 - "{w}"' for w in self.warnings)
        accept = self.request.headers.get("Accept", "")
        if obj.get("kind") == self.rt.kind:
            obj = await self._served(obj)  # what a verb returns may be the stored object
        if obj.get("kind") != "Status" and "as=Table" in accept and self.request.method == "GET":
            return json_response(
                tables.to_table(
                    self.rt,
                    [obj],
                    {"resourceVersion": self.store_rv()},
                    self.query.get("includeObject", "Metadata"),
                ),
                status,
                headers,
            )
        if "as=PartialObjectMetadata;" in accept + ";" and obj.get("kind") != "Status":
            obj = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj["metadata"],
            }
        return json_response(obj, status, headers)
