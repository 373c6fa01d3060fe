"""What every verb's handler shares: the request context and the steps common to all verbs.

`RequestContext` holds one request (resource type, namespace, name, subresource, query, dry run, the
warnings to send back) and the pieces more than one verb needs: the stored object or a NotFound, the
label/field selector filter, body decoding (JSON, YAML, protobuf), the object-body checks, the
conversions between the request's version and the storage version, and admission (attributes,
mutating webhooks, validation, validating webhooks).
The verb modules (reads, watch, writes, delete, subresources) are mixins over it, combined by
`dispatch.Handlers`.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson
import yaml
from aiohttp import web

from kruise.sandbox.apiserver import defaults, errors, schema
from kruise.sandbox.apiserver.admission import AdmissionAttributes
from kruise.sandbox.apiserver.equivalence import object_versions
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.protobuf import ProtobufError, decode_object, is_protobuf
from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.selectors import parse_field_selector, parse_label_selector

if TYPE_CHECKING:
    from kruise.sandbox.apiserver.server import ApiServer


_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
# who sent a request authenticated by a TokenRequest token (absent: the admin token, system:admin)
USER_INFO = web.RequestKey("user_info", dict)


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_bool(value: str | None) -> bool:
    return value in _TRUE


def json_response(
    body: Any,
    status: int = 200,
    headers: dict[str, str] | None = None,
    content_type: str = "application/json",
) -> web.Response:
    resp = web.Response(status=status, body=orjson.dumps(body), headers=headers)
    resp.headers["Content-Type"] = content_type
    return resp


def defaults_after_mutation(rt: ResourceType, obj: dict[str, Any]) -> None:
    """The ObjectDefaulter kube-apiserver's webhook dispatcher runs on every patched object: the
    defaults of decoding, so a webhook-injected container or env gets what a sent one would."""
    fn = defaults.SCHEME_DEFAULTS.get(rt.key)
    if fn is not None:
        fn(obj)
    if rt.is_custom and rt.schema:
        schema.apply_defaults(obj, rt.schema)


class RequestContext:
    """One request's context (resource type, namespace, name, subresource, query, dry run, warnings) and
    the steps every verb shares: finding the stored object, selector filters, body decoding, admission."""

    def __init__(
        self, server: ApiServer, request: web.Request, rt: ResourceType, namespace: str, name: str, sub: str
    ):
        self.server = server
        self.store = server.store
        self.request = request
        self.rt = rt
        self.namespace = namespace
        self.name = name
        self.sub = sub
        self.query = request.query
        self.dry_run = self.query.get("dryRun") == "All"
        self.warnings: list[str] = []
        self._applied: dict[str, Any] | None = None  # the configuration of a server-side apply
        self.raw_body: bytes | None = None  # the body as sent; a ControllerRevision keeps its data bytes

    def store_rv(self) -> str:
        return str(self.store.rv)

    async def _served(self, obj: dict[str, Any]) -> dict[str, Any]:
        """An object (stored, or about to be returned) as seen at the requested version: the CRD's
        conversion (apiVersion rewritten, or its conversion webhook called; see conversion.py)."""
        return (await self.server.conversion.convert(self.rt, [obj], self.rt.api_version))[0]

    async def _served_all(self, objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A collection at the requested version, converted as one list (one ConversionReview)."""
        return await self.server.conversion.convert(self.rt, objs, self.rt.api_version, as_list=True)

    async def _stored_form(self, obj: dict[str, Any]) -> dict[str, Any]:
        """An object of this request at the storage version, as it is written to storage."""
        return (await self.server.conversion.convert(self.rt, [obj], self._storage_api_version()))[0]

    def _storage_api_version(self) -> str:
        if self.rt.is_custom and self.rt.storage_version:
            return f"{self.rt.group}/{self.rt.storage_version}"
        return self.rt.api_version

    def _stored(self, name: str | None = None) -> dict[str, Any]:
        obj = self.store.get(self.rt.key, self.namespace, name or self.name)
        if obj is None:
            raise errors.not_found(self.rt.group, self.rt.plural, name or self.name)
        return obj

    def _filters(self) -> tuple[Any, Any]:
        reqs = parse_label_selector(self.query.get("labelSelector"))
        fields = parse_field_selector(
            self.query.get("fieldSelector"), self.rt.plural, self.rt.kind, self.rt.api_version
        )
        return reqs, fields

    async def _body(self) -> Any:
        raw = self.raw_body = await self.request.read()
        ctype = self.request.content_type
        if is_protobuf(ctype) and not self.rt.is_custom:
            try:
                return decode_object(raw)
            except ProtobufError as exc:
                raise StatusError(
                    400, "BadRequest", f"the body of the request was in an unknown format: {exc}"
                ) from None
        if "protobuf" in ctype or "cbor" in ctype:
            raise StatusError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - "
                "accepted media types include: application/json, application/yaml",
            )
        if not raw:
            return None
        try:
            if ctype == "application/apply-patch+yaml" or ctype.endswith("yaml"):
                return yaml.safe_load(raw)
            return orjson.loads(raw)
        except (orjson.JSONDecodeError, yaml.YAMLError) as exc:
            raise StatusError(
                400,
                "BadRequest",
                f"the body of the request was in an unknown format - accepted "
                f"media types include: application/json, application/yaml, "
                f"application/vnd.kubernetes.protobuf: {exc}",
            ) from None

    def _object_body(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise StatusError(400, "BadRequest", "the body of the request was in an unknown format")
        kind, api_version = body.get("kind"), body.get("apiVersion")
        own_kind = ("Scale", "TokenRequest")  # subresources with a kind of their own
        if kind and kind != self.rt.kind and not (self.sub and kind in own_kind):
            raise StatusError(
                400,
                "BadRequest",
                f"the API version in the data ({api_version}) does not match "
                f"the expected API version ({self.rt.api_version})"
                if api_version != self.rt.api_version
                else f'{kind} in version "{self.rt.version}" cannot be handled as a {self.rt.kind}: '
                f"kind mismatch",
            )
        if api_version and api_version != self.rt.api_version and kind not in own_kind:
            raise StatusError(
                400,
                "BadRequest",
                f"the API version in the data ({api_version}) does not match the "
                f"expected API version ({self.rt.api_version})",
            )
        body.setdefault("kind", self.rt.kind)
        body.setdefault("apiVersion", self.rt.api_version)
        body.setdefault("metadata", {})
        if not isinstance(body["metadata"], dict):
            raise StatusError(400, "BadRequest", "metadata must be an object")
        return body

    def _defaults_after_mutation(self, obj: dict[str, Any]) -> None:
        defaults_after_mutation(self.rt, obj)

    def _attrs(
        self,
        operation: str,
        obj: dict[str, Any] | None,
        old: dict[str, Any] | None,
        options: dict[str, Any] | None = None,
        sub: str | None = None,
    ) -> AdmissionAttributes:
        src = obj if obj is not None else old or {}
        kind = {"group": self.rt.group, "version": self.rt.version, "kind": self.rt.kind}
        if sub is None:
            sub = self.sub
        if sub == "scale":
            kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        elif sub == "eviction":
            kind = {"group": "policy", "version": "v1", "kind": "Eviction"}
        elif sub == "binding":
            kind = {"group": "", "version": "v1", "kind": "Binding"}
        elif sub == "token":
            kind = {"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"}
        return AdmissionAttributes(
            operation=operation,
            group=self.rt.group,
            version=self.rt.version,
            resource=self.rt.plural,
            subresource=sub,
            kind=kind,
            namespace=self.namespace,
            name=src.get("metadata", {}).get("name", self.name),
            object=obj,
            old_object=old,
            dry_run=self.dry_run,
            options=options,
            defaulter=self._defaults_after_mutation if sub in ("", "status") else None,
            versions=object_versions(self.rt, self.server.types, self.server.conversion),
            **({"user_info": self.request[USER_INFO]} if USER_INFO in self.request else {}),
        )

    async def _admit(
        self, attrs: AdmissionAttributes, then_validate: Any, in_tree: Any = None
    ) -> dict[str, Any] | None:
        """Mutating webhooks, validation, validating webhooks. `in_tree` is the built-in mutating
        plugins' pass: kube-apiserver's reinvoker runs them once more when a webhook changed the
        object (so a webhook-injected container gets the service account token mount too)."""
        plugin = self.server.admission
        if plugin is not None:
            before = copy.deepcopy(attrs.object) if in_tree is not None else None
            self.warnings += await plugin.mutate(attrs) or []
            if in_tree is not None and attrs.object != before:
                in_tree(attrs.object)
        then_validate(attrs.object)
        if plugin is not None:
            self.warnings += await plugin.validate(attrs) or []
        return attrs.object
