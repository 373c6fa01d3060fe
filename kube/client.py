"""An async raw-dict Kubernetes client for any resource.

Built on kubernetes-asyncio's `ApiClient` for configuration, authentication and the aiohttp
session, but bypassing its generated models: objects go in and out as plain dicts parsed with
orjson, which is both faster and lossless for custom resources. Every request passes through a
client-side token bucket (QPS 30 / burst 50 by default, like kruise-manager's flags) and carries a
timeout, so a dead connection can never hang a caller — watches included.
"""

from __future__ import annotations

import asyncio
import enum
import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp
import orjson
import structlog
from kubernetes_asyncio import config as k8s_config
from kubernetes_asyncio.client import ApiClient, Configuration

from kruise.api.objects import meta_of
from kruise.kube import metrics
from kruise.kube.errors import ApiError, Conflict, TransportError, error_from_response, error_from_status
from kruise.kube.gcpause import collection_paused
from kruise.kube.incluster import HOST_ENV, PORT_ENV, in_cluster_paths, running_in_pod
from kruise.kube.projection import is_projected, json_default
from kruise.kube.ratelimit import TokenBucket
from kruise.kube.resources import CRDS, PODS, ResourceRef
from kruise.kube.wire import WireVersions, from_wire, list_from_wire, scale_passes, to_wire
from kruise.kube.wirepatch import json_patch, merge_patch

log = structlog.get_logger("kruise.kube.client")

DEFAULT_QPS = 30.0
DEFAULT_BURST = 50
DEFAULT_REQUEST_TIMEOUT = 30.0
# A watch may legitimately be silent until its server-side timeout; allow that plus this much.
WATCH_GRACE = 30.0
PROJECT_SLICE = 100  # listed items `list_all` maps (`each`) between turns it gives the event loop
# A patch applied in-process (see kruise.kube.wirepatch) retries this many times on a Conflict.
WIRE_PATCH_ATTEMPTS = 8


class PatchType(enum.StrEnum):
    """Patch flavours by the Content-Type the apiserver dispatches on."""

    JSON = "application/json-patch+json"
    MERGE = "application/merge-patch+json"
    STRATEGIC = "application/strategic-merge-patch+json"
    APPLY = "application/apply-patch+yaml"


@dataclass(frozen=True)
class WatchEvent:
    """One watch notification: ADDED, MODIFIED, DELETED or BOOKMARK, and the object."""

    type: str
    object: dict[str, Any]


@dataclass(frozen=True)
class ServerVersion:
    """What the apiserver's GET /version reports (the fields kruise reads of `version.Info`)."""

    git_version: str
    major: str = ""
    minor: str = ""

    @classmethod
    def from_info(cls, info: Mapping[str, Any]) -> ServerVersion:
        return cls(
            git_version=str(info.get("gitVersion") or ""),
            major=str(info.get("major") or ""),
            minor=str(info.get("minor") or ""),
        )


def format_selector(selector: str | Mapping[str, str] | None) -> str | None:
    """Accept `"a=b,c"` as is, or `{"a": "b"}` as an equality selector."""
    if selector is None or isinstance(selector, str):
        return selector or None
    return ",".join(f"{k}={v}" for k, v in selector.items()) or None


def encode_body(body: Any) -> bytes | None:
    """A request body as compact JSON; ``orjson.Fragment`` values are embedded byte for byte.

    Fragments let a caller fix the exact bytes of a field the apiserver stores raw and compares
    byte-wise (ControllerRevision ``data``); ``bytes`` are sent as they are.
    """
    if body is None or isinstance(body, bytes):
        return body
    return orjson.dumps(body, default=json_default)  # a cached record's packed lists as lists


_IN_PROCESS_PATCHES = (PatchType.JSON, PatchType.MERGE)


def _bool(value: bool) -> str:
    return "true" if value else "false"


class Client:
    """Raw-dict CRUD, patch and watch against one apiserver.

    Construct with `await Client.from_kubeconfig()`, `Client.in_cluster()` or
    `await Client.from_environment()`; close with `await client.close()` or `async with`.

    `wire` (empty by default) names the kinds talked at their storage version on the wire and
    converted at this boundary (`kruise.kube.wire`): callers keep passing the ref of the version
    their code is written for and get objects back in it.
    """

    def __init__(
        self,
        api_client: ApiClient,
        *,
        qps: float = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        user_agent: str | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        self.api_client = api_client
        self.limiter = TokenBucket(qps, burst)
        self.request_timeout = request_timeout
        self.wire = WireVersions()
        if user_agent:
            api_client.user_agent = user_agent

    # ---- construction ------------------------------------------------------------------------

    @classmethod
    async def from_kubeconfig(
        cls, path: str | os.PathLike[str] | None = None, context: str | None = None, **kwargs: Any
    ) -> Client:
        configuration = Configuration()
        await k8s_config.load_kube_config(
            config_file=os.fspath(path) if path is not None else None,
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
        return cls(ApiClient(configuration), **kwargs)

    @classmethod
    def in_cluster(cls, environ: Mapping[str, str] | None = None, **kwargs: Any) -> Client:
        """The pod's apiserver with its service account token (re-read as the kubelet rotates it)
        and the cluster CA; see ``kruise.kube.incluster`` (``NotInCluster`` outside a pod)."""
        paths = in_cluster_paths(environ)
        configuration = Configuration()
        k8s_config.load_incluster_config(
            client_configuration=configuration,
            token_filename=str(paths.token_file),
            cert_filename=str(paths.ca_file),
            environ={HOST_ENV: paths.host, PORT_ENV: paths.port},
        )
        return cls(ApiClient(configuration), **kwargs)

    @classmethod
    async def from_environment(cls, kubeconfig: str | None = None, **kwargs: Any) -> Client:
        """An explicit kubeconfig wins; else in-cluster when running in a pod; else ~/.kube/config."""
        if kubeconfig or os.environ.get("KUBECONFIG") or not running_in_pod():
            return await cls.from_kubeconfig(kubeconfig, **kwargs)
        return cls.in_cluster(**kwargs)

    def derive(self, *, user_agent: str, qps: float | None = None, burst: int | None = None) -> Client:
        """A client on the same apiserver and credentials with its own connections and rate limiter.

        Like controller-runtime's copy of the rest config for leader election: traffic that must
        never wait behind the controllers' (lease renewals) gets its own token bucket and its own
        aiohttp connection pool, so neither a drained bucket nor a pool full of watches delays it.
        `qps`/`burst` default to this client's. Close it separately.
        """
        derived = Client(
            ApiClient(self.api_client.configuration),
            qps=self.limiter.qps if qps is None else qps,
            burst=self.limiter.burst if burst is None else burst,
            user_agent=user_agent,
            request_timeout=self.request_timeout,
        )
        derived.wire = self.wire
        return derived

    async def close(self) -> None:
        await self.api_client.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def host(self) -> str:
        return self.api_client.configuration.host

    # ---- the one primitive -------------------------------------------------------------------

    async def _send(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: aiohttp.ClientTimeout | float | None = None,
    ) -> aiohttp.ClientResponse:
        await self.limiter.acquire()
        headers = {"Accept": "application/json", "Content-Type": content_type}
        try:
            response = await self._transport(
                method,
                path,
                query or [],
                headers,
                encode_body(body),
                timeout if timeout is not None else self.request_timeout,
            )
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            metrics.REST_CLIENT_REQUESTS.labels("<error>", method, self.host).inc()
            raise TransportError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        metrics.REST_CLIENT_REQUESTS.labels(str(response.status), method, self.host).inc()
        if not 200 <= response.status <= 299:
            try:
                data = await response.read()
            except (aiohttp.ClientError, TimeoutError) as exc:
                data = str(exc).encode()
            finally:
                response.release()
            raise error_from_response(response.status, data, dict(response.headers))
        return response

    async def _transport(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        headers: dict[str, str],
        data: bytes | None,
        timeout: aiohttp.ClientTimeout | float,
    ) -> aiohttp.ClientResponse:
        """One HTTP exchange on the ApiClient's session, auth and proxy settings.

        kubernetes-asyncio's REST layer would re-encode a JSON body with ``json.dumps`` (spaced,
        ASCII-escaped, no way to embed pre-encoded JSON), so the body goes out as the bytes
        :func:`encode_body` made; everything else is what ``ApiClient.call_api`` does.
        """
        api = self.api_client
        headers = {**headers, **api.default_headers}
        if api.cookie:
            headers["Cookie"] = api.cookie
        query = list(query)
        await api.update_params_for_auth(headers, query, ["BearerToken"])
        rest = api.rest_client
        url = api.configuration.host + path
        if query:
            url += "?" + urlencode(query)
        if not isinstance(timeout, aiohttp.ClientTimeout):
            timeout = aiohttp.ClientTimeout(total=timeout)
        args: dict[str, Any] = {"method": method, "url": url, "timeout": timeout, "headers": headers}
        if data is not None:
            args["data"] = data
        if rest.proxy:
            args["proxy"] = rest.proxy
        if rest.proxy_headers:
            args["proxy_headers"] = rest.proxy_headers
        if rest.server_hostname:
            args["server_hostname"] = rest.server_hostname
        return await rest.pool_manager.request(**args)

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        """Send one request and return the parsed JSON answer (None for an empty body)."""
        response = await self._send(method, path, query=query, body=body, content_type=content_type)
        try:
            data = await response.read()
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransportError(f"{method} {path}: reading the answer: {exc}") from exc
        finally:
            response.release()
        if not data:
            return None
        with collection_paused():  # a list page is ~75k objects to decode (kruise.kube.gcpause)
            return orjson.loads(data)

    # ---- wire versions -----------------------------------------------------------------------

    async def read_wire_versions(self) -> WireVersions:
        """The versions to talk on the wire, from the CRDs: each convertible Kruise kind's storage
        version (`kruise.kube.wire`); assign the result to `wire` of the client that should talk them.
        A failed read is logged and yields no wire versions: each kind is then talked at code's
        version, which the server converts — slower, never wrong."""
        try:
            listing = await self.list(CRDS)
        except ApiError as exc:
            log.warning(
                "could not read the CRDs; Kruise kinds are talked at code's versions (the server converts)",
                error=str(exc),
            )
            return WireVersions()
        wire = WireVersions.from_crds(listing.get("items") or [])
        log.info("wire versions", storage=wire.describe())
        return wire

    # ---- reads -------------------------------------------------------------------------------

    async def server_version(self) -> ServerVersion:
        """GET /version (discovery's ServerVersion): the apiserver's gitVersion, major and minor."""
        info = await self.request("GET", "/version")
        return ServerVersion.from_info(info or {})

    async def get(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        query = [("resourceVersion", resource_version)] if resource_version is not None else []
        wire = self.wire.wire_ref(ref)
        if wire is None:
            return await self.request("GET", ref.path(namespace, name, subresource), query=query)
        obj = await self.request("GET", wire.path(namespace, name, subresource), query=query)
        return obj if scale_passes(subresource) else from_wire(obj, wire, ref)

    async def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> dict[str, Any]:
        """One page of a list (the whole list unless `limit` is set); see `list_all` for paging."""
        query = self._selectors(label_selector, field_selector)
        if limit:
            query.append(("limit", str(limit)))
        if continue_:
            query.append(("continue", continue_))
        if resource_version is not None:
            query.append(("resourceVersion", resource_version))
        if resource_version_match:
            query.append(("resourceVersionMatch", resource_version_match))
        wire = self.wire.wire_ref(ref)
        if wire is None:
            return await self.request("GET", ref.path(namespace), query=query)
        return list_from_wire(await self.request("GET", wire.path(namespace), query=query), wire, ref)

    async def list_all(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        page_size: int = 500,
        each: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> tuple[list[dict[str, Any]], str]:
        """Every item across pages, and the list's resourceVersion (where a watch should start).

        `each` maps every item as its page arrives (an informer's cached form): the page's full objects
        are dropped before the next page is read, so a list of 100k pods never holds 100k full pods at
        once — a peak the allocator keeps as resident memory long after the list is done."""
        items: list[dict[str, Any]] = []
        continue_: str | None = None
        while True:
            page = await self.list(ref, namespace, limit=page_size, continue_=continue_, **kwargs)
            page_items = page.get("items") or []
            if each is None:
                items.extend(page_items)
            else:
                for start in range(0, len(page_items), PROJECT_SLICE):
                    if start:  # a page of 500 pods is ~0.25 s to project: other tasks get turns
                        await asyncio.sleep(0)
                    with collection_paused():  # projecting allocates as much as decoding did
                        items.extend(map(each, page_items[start : start + PROJECT_SLICE]))
            meta = page.get("metadata") or {}
            del page, page_items
            continue_ = meta.get("continue")
            if not continue_:
                return items, meta.get("resourceVersion", "")
            # Later pages come from the snapshot named by the continue token.
            kwargs.pop("resource_version", None)
            kwargs.pop("resource_version_match", None)

    async def watch(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        timeout_seconds: int = 300,
        allow_watch_bookmarks: bool = True,
        read_timeout: float | None = None,
        opened: Callable[[], None] | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Stream changes after `resource_version` until the server ends the watch.

        The server closes the stream after `timeout_seconds`; the whole connection is additionally
        bounded client-side (`timeout_seconds + 30 s`), and `read_timeout`, when given, bounds the
        silence between two lines — pick it larger than the bookmark interval. Either bound ends the
        iteration quietly, exactly like the server's timeout. An ERROR event is raised as the
        matching ApiError (410 -> Gone: relist); a broken connection as TransportError. `opened`, when
        given, is called once the server accepted the watch and the lines that came with it (a resume's
        replay) are yielded: the first time no received line is left unread.
        """
        query = self._selectors(label_selector, field_selector)
        query += [("watch", "true"), ("timeoutSeconds", str(int(timeout_seconds)))]
        if allow_watch_bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        if resource_version is not None:
            query.append(("resourceVersion", resource_version))
        timeout = aiohttp.ClientTimeout(
            total=timeout_seconds + WATCH_GRACE,
            connect=self.request_timeout,
            sock_connect=self.request_timeout,
            sock_read=read_timeout,
        )
        wire = self.wire.wire_ref(ref)
        response = await self._send("GET", (wire or ref).path(namespace), query=query, timeout=timeout)
        try:
            while True:
                if opened is not None and not _buffered(response.content):
                    opened()  # what the server sent with the acceptance (a replay) is read by now
                    opened = None
                try:
                    line = await response.content.readline()
                except TimeoutError:
                    # Silence past read_timeout, or the client-side bound: the watch simply ended,
                    # like a server-side timeout. The caller resumes from its last resourceVersion.
                    return
                except aiohttp.ClientError as exc:
                    raise TransportError(f"watch {ref}: {type(exc).__name__}: {exc}") from exc
                if not line:
                    return
                line = line.strip()
                if not line:
                    continue
                event = orjson.loads(line)
                kind = event.get("type", "")
                obj = event.get("object") or {}
                if kind == "ERROR":
                    raise error_from_status(int(obj.get("code") or 500), obj)
                if wire is not None and kind != "BOOKMARK":
                    obj = from_wire(obj, wire, ref)
                yield WatchEvent(kind, obj)
        finally:
            response.release()

    # ---- writes ------------------------------------------------------------------------------

    async def create(
        self,
        ref: ResourceRef,
        body: dict[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        namespace = namespace or meta_of(body).get("namespace")
        if ref.namespaced and not namespace:
            raise ValueError(f"metadata.namespace: Required value: {ref} is namespaced")
        query = self._write_options(dry_run, field_manager)
        wire = self.wire.wire_ref(ref)
        if wire is None:
            return await self.request(
                "POST", ref.path(namespace if ref.namespaced else None), query=query, body=body
            )
        path = wire.path(namespace if ref.namespaced else None)
        return from_wire(await self.request("POST", path, query=query, body=to_wire(body, wire)), wire, ref)

    async def update(
        self,
        ref: ResourceRef,
        body: dict[str, Any],
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> dict[str, Any]:
        """PUT the whole object; its metadata.resourceVersion makes it a compare-and-swap.

        A projected cache object lacks what its cache drops, so PUTting it (or any copy of it,
        `kruise.kube.projection.is_projected`) would erase those fields on the server: refused. Read
        the object first."""
        if is_projected(body):
            raise ValueError(
                f"{ref}: a projected cache object cannot be PUT (it lacks the fields its cache drops); "
                "read the object from the apiserver first"
            )
        meta = body.get("metadata") or {}
        if ref.namespaced and not meta.get("namespace"):
            raise ValueError(f"metadata.namespace: Required value: {ref} is namespaced")
        query = self._write_options(dry_run, field_manager)
        wire = self.wire.wire_ref(ref)
        namespace = meta.get("namespace") if ref.namespaced else None
        path = (wire or ref).path(namespace, meta.get("name", ""), subresource)
        if wire is None or scale_passes(subresource):
            return await self.request("PUT", path, query=query, body=body)
        return from_wire(await self.request("PUT", path, query=query, body=to_wire(body, wire)), wire, ref)

    async def update_status(self, ref: ResourceRef, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return await self.update(ref, body, subresource="status", **kwargs)

    async def patch(
        self,
        ref: ResourceRef,
        name: str,
        patch: dict[str, Any] | list[dict[str, Any]],
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Patch with an explicit content type; server-side apply needs `field_manager`."""
        patch_type = PatchType(patch_type)
        if patch_type is PatchType.JSON and not isinstance(patch, list):
            raise ValueError("patch: a JSON patch must be a list of operations")
        if patch_type is not PatchType.JSON and not isinstance(patch, dict):
            raise ValueError(f"patch: a {patch_type.name.lower()} patch must be an object")
        if patch_type is PatchType.APPLY and not field_manager:
            raise ValueError("fieldManager: Required value: is required for apply patch")
        if force is not None and patch_type is not PatchType.APPLY:
            raise ValueError("force: Forbidden: may not be specified for non-apply patch")
        wire = self.wire.wire_ref(ref)
        if wire is not None and subresource in (None, "status") and patch_type in _IN_PROCESS_PATCHES:
            return await self._patch_in_process(
                ref, wire, name, namespace, patch, patch_type, subresource, dry_run, field_manager
            )
        query = self._write_options(dry_run, field_manager)
        if force is not None:
            query.append(("force", _bool(force)))
        # The scale subresource speaks Scale at any version; strategic merge (refused for custom
        # resources) and apply patches go out at code's version, which the server converts.
        target = wire if wire is not None and scale_passes(subresource) else ref
        return await self.request(
            "PATCH",
            target.path(namespace, name, subresource),
            query=query,
            body=patch,
            content_type=patch_type.value,
        )

    async def _patch_in_process(
        self,
        ref: ResourceRef,
        wire: ResourceRef,
        name: str,
        namespace: str | None,
        patch: dict[str, Any] | list[dict[str, Any]],
        patch_type: PatchType,
        subresource: str | None,
        dry_run: bool,
        field_manager: str | None,
    ) -> dict[str, Any]:
        """A JSON or merge patch of a kind talked at another version: get, convert, patch, convert,
        PUT under the resourceVersion read (why not convert the patch: `kruise.kube.wirepatch`)."""
        query = self._write_options(dry_run, field_manager)
        for attempt in range(1, WIRE_PATCH_ATTEMPTS + 1):
            current = from_wire(await self.request("GET", wire.path(namespace, name)), wire, ref)
            if patch_type is PatchType.JSON:
                patched = json_patch(current, patch)  # type: ignore[arg-type]
            else:
                patched = merge_patch(current, patch)
            if patched == current:
                return current  # the server writes nothing for a patch that changes nothing
            pinned = meta_of(patched).get("resourceVersion") != meta_of(current).get("resourceVersion")
            path = wire.path(namespace, name, subresource)
            try:
                answer = await self.request("PUT", path, query=query, body=to_wire(patched, wire))
            except Conflict:
                if pinned or attempt == WIRE_PATCH_ATTEMPTS:
                    raise
                continue
            return from_wire(answer, wire, ref)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def delete(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete with DeleteOptions; `uid`/`resource_version` become preconditions.

        Returns what the server answers: the object (still terminating, with finalizers) or a Status.
        """
        if propagation_policy not in (None, "Orphan", "Background", "Foreground"):
            raise ValueError(
                f'propagationPolicy: Unsupported value: "{propagation_policy}": supported values: '
                '"Background", "Foreground", "Orphan"'
            )
        options = self._delete_options(
            propagation_policy, grace_period_seconds, uid, resource_version, dry_run
        )
        wire = self.wire.wire_ref(ref)
        if wire is None:
            return await self.request("DELETE", ref.path(namespace, name), body=options)
        return from_wire(await self.request("DELETE", wire.path(namespace, name), body=options), wire, ref)

    async def delete_collection(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        *,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | Mapping[str, str] | None = None,
        propagation_policy: str | None = None,
    ) -> dict[str, Any]:
        query = self._selectors(label_selector, field_selector)
        options = self._delete_options(propagation_policy, None, None, None, False)
        wire = self.wire.wire_ref(ref)
        if wire is None:
            return await self.request("DELETE", ref.path(namespace), query=query, body=options)
        answer = await self.request("DELETE", wire.path(namespace), query=query, body=options)
        return answer if not answer or answer.get("kind") == "Status" else list_from_wire(answer, wire, ref)

    # ---- subresources ------------------------------------------------------------------------

    async def get_scale(self, ref: ResourceRef, name: str, namespace: str | None = None) -> dict[str, Any]:
        return await self.get(ref, name, namespace, subresource="scale")

    async def scale(
        self, ref: ResourceRef, name: str, namespace: str | None, replicas: int
    ) -> dict[str, Any]:
        """Set spec.replicas through the scale subresource (an autoscaling/v1 Scale answers)."""
        return await self.patch(ref, name, {"spec": {"replicas": replicas}}, namespace, subresource="scale")

    async def evict(
        self,
        name: str,
        namespace: str,
        *,
        grace_period_seconds: int | None = None,
        uid: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """POST a policy/v1 Eviction; a PDB refusal comes back as TooManyRequests (429)."""
        body: dict[str, Any] = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        options = self._delete_options(None, grace_period_seconds, uid, None, dry_run)
        if len(options) > 2:
            body["deleteOptions"] = options
        return await self.request("POST", PODS.path(namespace, name, "eviction"), body=body)

    async def bind(self, name: str, namespace: str, node_name: str) -> dict[str, Any]:
        """Bind a pending pod to a node, as a scheduler does."""
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        return await self.request("POST", PODS.path(namespace, name, "binding"), body=body)

    # ---- helpers -----------------------------------------------------------------------------

    @staticmethod
    def _selectors(
        label_selector: str | Mapping[str, str] | None, field_selector: str | Mapping[str, str] | None
    ) -> list[tuple[str, str]]:
        query: list[tuple[str, str]] = []
        if (labels := format_selector(label_selector)) is not None:
            query.append(("labelSelector", labels))
        if (fields := format_selector(field_selector)) is not None:
            query.append(("fieldSelector", fields))
        return query

    @staticmethod
    def _write_options(dry_run: bool, field_manager: str | None) -> list[tuple[str, str]]:
        query: list[tuple[str, str]] = []
        if dry_run:
            query.append(("dryRun", "All"))
        if field_manager:
            query.append(("fieldManager", field_manager))
        return query

    @staticmethod
    def _delete_options(
        propagation_policy: str | None,
        grace_period_seconds: int | None,
        uid: str | None,
        resource_version: str | None,
        dry_run: bool,
    ) -> dict[str, Any]:
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        preconditions = {}
        if uid:
            preconditions["uid"] = uid
        if resource_version:
            preconditions["resourceVersion"] = resource_version
        if preconditions:
            options["preconditions"] = preconditions
        if dry_run:
            options["dryRun"] = ["All"]
        return options


__all__ = ["ApiError", "Client", "PatchType", "WatchEvent", "format_selector"]


def _buffered(content: aiohttp.StreamReader) -> bool:
    """Whether received body bytes wait unread (aiohttp keeps them in the reader's `_buffer`)."""
    return bool(getattr(content, "_buffer", None))
