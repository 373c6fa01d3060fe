"""DELETE of one object and of a collection (deletecollection).

The request side of a deletion: DeleteOptions from the body and the query (gracePeriodSeconds,
propagationPolicy, orphanDependents, dryRun), the uid / resourceVersion preconditions, and admission
with operation DELETE for every object. What a deletion then does (finalizers, graceful pod
termination, garbage collection of dependents) is `lifecycle.Lifecycle.delete`'s job.
"""

from __future__ import annotations

from typing import Any

from kruise.sandbox.apiserver import preconditions
from kruise.sandbox.apiserver.handlers.base import RequestContext
from kruise.sandbox.apiserver.selectors import labels_match


class Deletes(RequestContext):
    """DELETE of a named object and of a collection."""

    async def _delete_options(self) -> dict[str, Any]:
        body = await self._body() if self.request.can_read_body else None
        options = dict(body) if isinstance(body, dict) else {}
        for key in ("gracePeriodSeconds", "propagationPolicy", "orphanDependents"):
            if key in self.query:
                options[key] = self.query[key]
        if "gracePeriodSeconds" in options and options["gracePeriodSeconds"] is not None:
            options["gracePeriodSeconds"] = int(options["gracePeriodSeconds"])
        if "dryRun" in options and options["dryRun"] == ["All"]:
            self.dry_run = True
        return options

    async def delete(self) -> tuple[dict[str, Any], int]:
        options = await self._delete_options()
        obj = self._stored()
        preconditions.check_delete(self.rt, obj, options)  # before admission, as rest.BeforeDelete
        attrs = self._attrs(
            "DELETE",
            None,
            await self._served(obj),
            {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", **options},
        )
        await self._admit(attrs, lambda o: None)
        result = await self._delete_object(obj, options)
        if result is None:
            return {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": {
                    "name": self.name,
                    "group": self.rt.group,
                    "kind": self.rt.plural,
                    "uid": obj["metadata"]["uid"],
                },
            }, 200
        return result, 200

    async def _delete_object(self, obj: dict[str, Any], options: dict[str, Any]) -> dict[str, Any] | None:
        """Returns the object (marked or, for types that return it, deleted); None means a Status reply."""
        return self.server.lifecycle.delete(self.rt, obj, options, self.dry_run)

    async def delete_collection(self) -> dict[str, Any]:
        options = await self._delete_options()
        reqs, fields = self._filters()
        items = [
            o
            for o in self.store.list(self.rt.key, self.namespace)
            if labels_match(reqs, o["metadata"].get("labels")) and fields(o)
        ]
        deleted = []
        for obj, served in zip(items, await self._served_all(items), strict=True):
            attrs = self._attrs(
                "DELETE", None, served, {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", **options}
            )
            await self._admit(attrs, lambda o: None)
            result = self.server.lifecycle.delete(self.rt, obj, options, self.dry_run)
            deleted.append(result or obj)
        return {
            "kind": f"{self.rt.kind}List",
            "apiVersion": self.rt.api_version,
            "metadata": {"resourceVersion": self.store_rv()},
            "items": await self._served_all(deleted),
        }
