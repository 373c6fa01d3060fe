"""`RecordingClient`: the `kruise.kube.client.Client` calls reconcilers make, against memory.

Every call is recorded as a `Call` (verb, resource, namespace, name, subresource, body or patch,
options, error), so a unit test asserts on exactly what a reconcile wrote. Behind the record is a
small object store with the apiserver rules reconcilers rely on: create assigns uid,
resourceVersion, creationTimestamp and generation; an update or patch carrying a stale
resourceVersion gets Conflict; the main resource ignores status changes and the status
subresource ignores everything else; delete honours uid/resourceVersion preconditions and leaves
an object with finalizers terminating. Patches are applied by the emulator's own patch code, so
merge, strategic-merge and JSON patches mean the same here as against the emulator.

`fail_next` makes the next matching call (or every one, `times=None`) raise (Conflict, NotFound,
TransportError, ... — any ApiError), and `sync` mirrors the store of one resource into a
`FakeInformer`, so a second reconcile sees the first one's writes as the watch would deliver them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kruise.kube.client import PatchType
from kruise.kube.clock import Clock, FakeClock, rfc3339
from kruise.kube.errors import AlreadyExists, ApiError, Conflict, NotFound, error_from_status
from kruise.kube.projection import is_projected
from kruise.kube.resources import ResourceRef, object_key
from kruise.kube.store import mutable_copy
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.patches import json_patch, merge_patch, strategic_merge_patch
from kruise.sandbox.apiserver.podresize import prepare as resize_prepare
from tests.kit.informers import FakeInformer

Obj = dict[str, Any]
VERBS = ("get", "create", "update", "patch", "delete")
_StoreKey = tuple[ResourceRef, str | None, str]


@dataclass(frozen=True)
class Call:
    """One client call as the reconciler made it (`body` is the object sent or the patch document)."""

    verb: str
    resource: ResourceRef
    namespace: str | None
    name: str
    subresource: str | None = None
    body: Any = None
    patch_type: PatchType | None = None
    options: dict[str, Any] = field(default_factory=dict)
    error: ApiError | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def is_write(self) -> bool:
        return self.verb != "get"

    @property
    def succeeded(self) -> bool:
        return self.error is None


@dataclass
class _Fault:
    verb: str
    resource: ResourceRef
    namespace: str | None
    name: str
    error: ApiError | type[ApiError]
    times: int | None  # None: every matching call from now on

    def matches(self, verb: str, resource: ResourceRef, namespace: str | None, name: str) -> bool:
        return (
            self.verb in ("*", verb)
            and self.resource == resource
            and self.namespace == namespace
            and self.name == name
        )


class RecordingClient:
    """Records every call and serves them from an in-memory store (see the module docstring)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or FakeClock()
        self.calls: list[Call] = []
        self._objects: dict[_StoreKey, Obj] = {}
        self._faults: list[_Fault] = []
        self._informers: dict[ResourceRef, FakeInformer] = {}
        self._versions = itertools.count(1)
        self._uids = itertools.count(1)

    # ---- arranging a test --------------------------------------------------------------------

    def put(self, resource: ResourceRef, *objects: Obj) -> None:
        """Seed objects without recording a call (uid, resourceVersion, generation filled in when missing)."""
        for obj in objects:
            own = mutable_copy(obj)
            meta = own.setdefault("metadata", {})
            namespace = self._namespace(resource, meta.get("namespace"))
            if not meta.get("name"):
                raise ValueError("metadata.name: Required value")
            meta.setdefault("uid", f"uid-{next(self._uids)}")
            meta.setdefault("resourceVersion", str(next(self._versions)))
            meta.setdefault("generation", 1)
            own.setdefault("apiVersion", resource.api_version)
            own.setdefault("kind", resource.kind)
            self._store(resource, namespace, meta["name"], own)

    def sync(self, resource: ResourceRef, informer: FakeInformer) -> None:
        """Mirror this resource's objects into `informer` now and after every successful write."""
        self._informers[resource] = informer
        for (ref, _, _), obj in self._objects.items():
            if ref == resource:
                informer.add(obj)

    def fail_next(
        self,
        verb: str,
        resource: ResourceRef,
        name: str,
        namespace: str | None = None,
        *,
        error: ApiError | type[ApiError] = Conflict,
        times: int | None = 1,
    ) -> None:
        """Make the next `times` calls of `verb` ("*" for any) on that object raise `error`;
        `times=None` makes every one from now on fail (an apiserver that stays unreachable)."""
        if verb != "*" and verb not in VERBS:
            raise ValueError(f'verb: Unsupported value: "{verb}": supported values: "*", {", ".join(VERBS)}')
        if times is not None and times < 1:
            raise ValueError(f"times: must be >= 1, got {times}")
        namespace = self._namespace(resource, namespace)
        self._faults.append(_Fault(verb, resource, namespace, name, error, times))

    # ---- inspecting ---------------------------------------------------------------------------

    def object(self, resource: ResourceRef, name: str, namespace: str | None = None) -> Obj | None:
        """A copy of the stored object, or None."""
        obj = self._objects.get((resource, self._namespace(resource, namespace), name))
        return mutable_copy(obj) if obj is not None else None

    def objects(self, resource: ResourceRef) -> list[Obj]:
        return [
            mutable_copy(o) for (ref, _, _), o in sorted(self._objects.items(), key=_order) if ref == resource
        ]

    @property
    def writes(self) -> list[Call]:
        """Every call but reads, failed ones included."""
        return [c for c in self.calls if c.is_write]

    def calls_to(
        self,
        verb: str | None = None,
        resource: ResourceRef | None = None,
        name: str | None = None,
        *,
        subresource: str | None = None,
    ) -> list[Call]:
        """Calls filtered by whichever of verb, resource, name and subresource are given."""
        return [
            c
            for c in self.calls
            if (verb is None or c.verb == verb)
            and (resource is None or c.resource == resource)
            and (name is None or c.name == name)
            and (subresource is None or c.subresource == subresource)
        ]

    def clear(self) -> None:
        """Forget the recorded calls (the store stays)."""
        self.calls.clear()

    # ---- the Client surface -------------------------------------------------------------------

    async def get(
        self,
        ref: ResourceRef,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        resource_version: str | None = None,
    ) -> Obj:
        namespace = self._namespace(ref, namespace)
        call = Call("get", ref, namespace, name, subresource)
        return mutable_copy(self._run(call, lambda: self._existing(ref, namespace, name)))

    async def create(
        self,
        ref: ResourceRef,
        body: Obj,
        namespace: str | None = None,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        sent = mutable_copy(body)
        meta = sent.get("metadata") or {}
        namespace = namespace or meta.get("namespace")
        if ref.namespaced and not namespace:
            raise ValueError(f"metadata.namespace: Required value: {ref} is namespaced")
        namespace = namespace if ref.namespaced else None
        name = meta.get("name") or ""
        if not name and meta.get("generateName"):
            name = f"{meta['generateName']}{next(self._uids):05d}"
        if not name:
            raise ValueError("metadata.name: Required value: name or generateName is required")
        call = Call("create", ref, namespace, name, body=sent, options=_options(dry_run=dry_run))

        def apply() -> Obj:
            if (ref, namespace, name) in self._objects:
                raise _error(AlreadyExists, ref, name, "already exists")
            obj = mutable_copy(sent)
            obj.setdefault("apiVersion", ref.api_version)
            obj.setdefault("kind", ref.kind)
            new_meta = obj.setdefault("metadata", {})
            new_meta.update(name=name, uid=f"uid-{next(self._uids)}", generation=1)
            new_meta["creationTimestamp"] = rfc3339(self.clock.wall())
            if namespace:
                new_meta["namespace"] = namespace
            if dry_run:
                return obj
            return self._write(ref, namespace, name, obj)

        return mutable_copy(self._run(call, apply))

    async def update(
        self,
        ref: ResourceRef,
        body: Obj,
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        if is_projected(body):  # as kruise.kube.client.Client.update
            raise ValueError(
                f"{ref}: a projected cache object cannot be PUT; read the object from the apiserver first"
            )
        sent = mutable_copy(body)
        meta = sent.get("metadata") or {}
        if ref.namespaced and not meta.get("namespace"):
            raise ValueError(f"metadata.namespace: Required value: {ref} is namespaced")
        namespace = meta.get("namespace") if ref.namespaced else None
        name = meta.get("name") or ""
        call = Call("update", ref, namespace, name, subresource, body=sent, options=_options(dry_run=dry_run))

        def apply() -> Obj:
            current = self._existing(ref, namespace, name)
            self._check_version(ref, current, meta.get("resourceVersion"))
            merged = self._merged(current, sent, subresource, pods=_is_pods(ref))
            return merged if dry_run else self._write(ref, namespace, name, merged)

        return mutable_copy(self._run(call, apply))

    async def update_status(self, ref: ResourceRef, body: Obj, **kwargs: Any) -> Obj:
        return await self.update(ref, body, subresource="status", **kwargs)

    async def patch(
        self,
        ref: ResourceRef,
        name: str,
        patch: Obj | list[Obj],
        namespace: str | None = None,
        *,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
    ) -> Obj:
        patch_type = PatchType(patch_type)
        if patch_type is PatchType.APPLY:
            raise ValueError("patch_type: server-side apply is not modelled by RecordingClient")
        if patch_type is PatchType.JSON and not isinstance(patch, list):
            raise ValueError("patch: a JSON patch must be a list of operations")
        if patch_type is not PatchType.JSON and not isinstance(patch, dict):
            raise ValueError(f"patch: a {patch_type.name.lower()} patch must be an object")
        namespace = self._namespace(ref, namespace)
        sent = mutable_copy(patch)
        call = Call("patch", ref, namespace, name, subresource, body=sent, patch_type=patch_type,
                    options=_options(dry_run=dry_run))  # fmt: skip

        def apply() -> Obj:
            current = self._existing(ref, namespace, name)
            if isinstance(sent, dict):
                self._check_version(ref, current, (sent.get("metadata") or {}).get("resourceVersion"))
            try:
                if patch_type is PatchType.JSON:
                    patched = json_patch(mutable_copy(current), sent)
                elif patch_type is PatchType.STRATEGIC:
                    patched = strategic_merge_patch(current, sent)
                else:
                    patched = merge_patch(current, sent)
            except StatusError as exc:
                raise error_from_status(exc.code, exc.status()) from None
            merged = self._merged(current, patched, subresource, pods=_is_pods(ref))
            return merged if dry_run else self._write(ref, namespace, name, merged)

        return mutable_copy(self._run(call, apply))

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
    ) -> Obj:
        namespace = self._namespace(ref, namespace)
        options = _options(
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            uid=uid,
            resource_version=resource_version,
            dry_run=dry_run,
        )
        call = Call("delete", ref, namespace, name, options=options)

        def apply() -> Obj:
            current = self._existing(ref, namespace, name)
            meta = current["metadata"]
            _check_precondition(ref, name, "UID", uid, meta.get("uid"))
            _check_precondition(ref, name, "ResourceVersion", resource_version, meta.get("resourceVersion"))
            if dry_run:
                return current
            if meta.get("finalizers"):
                if meta.get("deletionTimestamp"):
                    return current
                terminating = mutable_copy(current)
                terminating["metadata"]["deletionTimestamp"] = rfc3339(self.clock.wall())
                return self._write(ref, namespace, name, terminating)
            del self._objects[(ref, namespace, name)]
            informer = self._informers.get(ref)
            if informer is not None:
                informer.remove(object_key(current))
            return current

        return mutable_copy(self._run(call, apply))

    # ---- internals -----------------------------------------------------------------------------

    def _run(self, call: Call, apply: Callable[[], Obj]) -> Obj:
        """Raise an injected fault or run `apply`; either way the call is recorded."""
        for fault in self._faults:
            if fault.matches(call.verb, call.resource, call.namespace, call.name):
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times == 0:
                        self._faults.remove(fault)
                error = fault.error
                if isinstance(error, type):
                    error = _error(error, call.resource, call.name, "injected by fail_next")
                self.calls.append(_with_error(call, error))
                raise error
        try:
            result = apply()
        except ApiError as exc:
            self.calls.append(_with_error(call, exc))
            raise
        self.calls.append(call)
        return result

    @staticmethod
    def _namespace(ref: ResourceRef, namespace: str | None) -> str | None:
        if not ref.namespaced:
            if namespace:
                raise ValueError(f"namespace: {ref} is cluster-scoped, got namespace {namespace!r}")
            return None
        if not namespace:
            raise ValueError(f"namespace: Required value: {ref} is namespaced")
        return namespace

    def _existing(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj:
        obj = self._objects.get((ref, namespace, name))
        if obj is None:
            raise _error(NotFound, ref, name, "not found")
        return obj

    @staticmethod
    def _check_version(ref: ResourceRef, current: Obj, sent: str | None) -> None:
        if sent and sent != current["metadata"].get("resourceVersion"):
            raise _error(
                Conflict,
                ref,
                current["metadata"]["name"],
                "the object has been modified; please apply your changes to the latest version and try again",
            )

    @staticmethod
    def _merged(current: Obj, new: Obj, subresource: str | None, *, pods: bool = False) -> Obj:
        """The main resource keeps the stored status; the status subresource keeps all but status
        (pods/status also takes labels, annotations and finalizers, as kube-apiserver's pod status
        strategy does); pods/ephemeralcontainers keeps all but the ephemeral containers; pods/resize keeps
        all but the containers' resources and resizePolicy (the emulator's resize strategy, unvalidated)."""
        if subresource == "status":
            merged = mutable_copy(current)
            if pods:
                for key in ("labels", "annotations", "finalizers"):
                    merged["metadata"].pop(key, None)
                    if key in (new.get("metadata") or {}):
                        merged["metadata"][key] = mutable_copy(new["metadata"][key])
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            return merged
        if subresource == "ephemeralcontainers":
            # pods/ephemeralcontainers takes only the ephemeral containers from the body
            merged = mutable_copy(current)
            containers = (new.get("spec") or {}).get("ephemeralContainers")
            merged.setdefault("spec", {})["ephemeralContainers"] = mutable_copy(containers or [])
            return merged
        if subresource == "resize" and pods:
            return resize_prepare(new, current)
        if subresource is not None:
            raise ValueError(f"subresource: {subresource!r} is not modelled by RecordingClient")
        merged = mutable_copy(new)
        if "status" in current:
            merged["status"] = current["status"]
        else:
            merged.pop("status", None)
        meta, old_meta = merged.setdefault("metadata", {}), current["metadata"]
        for kept in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "generation"):
            if kept in old_meta:
                meta[kept] = old_meta[kept]
            else:
                meta.pop(kept, None)
        if merged.get("spec") != current.get("spec"):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        return merged

    def _write(self, ref: ResourceRef, namespace: str | None, name: str, obj: Obj) -> Obj:
        obj["metadata"]["resourceVersion"] = str(next(self._versions))
        if obj["metadata"].get("deletionTimestamp") and not obj["metadata"].get("finalizers"):
            # The last finalizer is gone from a terminating object: the apiserver removes it.
            self._objects.pop((ref, namespace, name), None)
            informer = self._informers.get(ref)
            if informer is not None and informer.get(object_key(obj)) is not None:
                informer.remove(object_key(obj))
            return obj
        self._store(ref, namespace, name, obj)
        return obj

    def _store(self, ref: ResourceRef, namespace: str | None, name: str, obj: Obj) -> None:
        self._objects[(ref, namespace, name)] = obj
        informer = self._informers.get(ref)
        if informer is not None:
            informer.add(obj)


def _order(item: tuple[_StoreKey, Obj]) -> tuple[str, str]:
    (_, namespace, name), _ = item
    return namespace or "", name


def _options(**options: Any) -> dict[str, Any]:
    """The options a call set (defaults left out, so assertions stay short)."""
    return {k: v for k, v in options.items() if v not in (None, False)}


def _check_precondition(
    ref: ResourceRef, name: str, what: str, wanted: str | None, actual: str | None
) -> None:
    """A delete precondition (uid or resourceVersion) that does not hold is a Conflict, as upstream."""
    if wanted and wanted != actual:
        raise _error(
            Conflict,
            ref,
            name,
            f"Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {actual}",
        )


def _with_error(call: Call, error: ApiError) -> Call:
    return Call(call.verb, call.resource, call.namespace, call.name, call.subresource, call.body,
                call.patch_type, call.options, error)  # fmt: skip


def _error(cls: type[ApiError], ref: ResourceRef, name: str, what: str) -> ApiError:
    """An error worded as the apiserver words it (`<plural>.<group> "<name>" ...`)."""
    qualified = f"{ref.plural}.{ref.group}" if ref.group else ref.plural
    if cls is Conflict:
        message = f'Operation cannot be fulfilled on {qualified} "{name}": {what}'
    else:
        message = f'{qualified} "{name}" {what}'
    return cls(message, status={"kind": "Status", "reason": cls.reason, "code": cls.code, "message": message})


def _is_pods(ref: ResourceRef) -> bool:
    return ref.group == "" and ref.plural == "pods"
