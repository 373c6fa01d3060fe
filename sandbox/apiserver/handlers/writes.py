"""Writes of one object: create, update (incl. /status and namespaces/finalize), patch and apply.

Every write runs kube-apiserver's pipeline in its order: decode and check the body, default and (for
custom resources) prune, the in-tree mutating plugins (ServiceAccount for pods), mutating webhooks,
the strategy's PrepareForCreate / PrepareForUpdate, validation (name, CRD schema, built-in rules),
validating webhooks, then the store. Around it: generateName, namespace existence and termination,
optimistic concurrency (resourceVersion), create-on-update for the kinds that allow it, the status /
spec split of the status strategies, generation bumps, managedFields, and no-op updates that keep
the resourceVersion. PATCH decodes json-patch, merge-patch, strategic-merge-patch or a server-side
apply configuration (applyset.py) against the stored object and then runs the update (or, for apply
of a missing object, the create) path. A PUT or PATCH of /scale is handed to subresources.py.
"""

from __future__ import annotations

import copy
import random
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson

from kruise.sandbox.apiserver import (
    defaults,
    errors,
    preconditions,
    priority,
    revisiondata,
    schema,
    serviceaccounts,
)
from kruise.sandbox.apiserver.applyset import changed_paths, owned_paths, record_manager, server_side_apply
from kruise.sandbox.apiserver.claims import admit_claim_resize, admit_default_class
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.handlers.base import RequestContext, now_iso
from kruise.sandbox.apiserver.handlers.subresources import scale_of
from kruise.sandbox.apiserver.patches import json_patch, merge_patch, strategic_merge_patch
from kruise.sandbox.apiserver.resources import ResourceType
from kruise.sandbox.apiserver.statusstrategy import prepare_status_update

PRIORITY_CLASSES = ("scheduling.k8s.io", "priorityclasses")
STORAGE_CLASSES = ("storage.k8s.io", "storageclasses")

# utilrand's alphabet for generateName suffixes: no vowels, no digits that look like letters.
T = TypeVar("T")
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


_PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)


def stamp_new(obj: dict[str, Any], rt: ResourceType) -> None:
    """Identity fields a new object gets at creation."""
    meta = obj.setdefault("metadata", {})
    meta["uid"] = str(uuid.uuid4())
    meta["creationTimestamp"] = now_iso()
    if has_generation(rt):
        meta["generation"] = 1
    for key in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
        meta.pop(key, None)


def has_generation(rt: ResourceType) -> bool:
    return rt.is_custom or "status" in rt.subresources


def validate_name(rt: ResourceType, name: str) -> list[dict[str, str]]:

    if rt.key == ("", "pods") or rt.key[1] in ("namespaces", "services"):
        ok = re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name) and len(name) <= 63
        rule = (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
            "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
        if rt.key == ("", "pods"):
            ok = (
                re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", name)
                and len(name) <= 253
            )
            rule = (
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            )
    else:
        ok = (
            re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", name)
            and len(name) <= 253
        )
        rule = (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    if ok:
        return []
    return [errors.field_error("FieldValueInvalid", "metadata.name", name, rule)]


def _manager_from_agent(agent: str) -> str:
    """kube-apiserver's default manager: the user agent up to the first '/'."""
    return (agent.split("/", 1)[0] or "unknown")[:128]


def _meta_changed_only(old: dict[str, Any], new: dict[str, Any]) -> bool:
    keys = (set(old) | set(new)) - {"metadata", "status", "apiVersion", "kind"}
    return all(old.get(k) == new.get(k) for k in keys)


def _same_ignoring(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """An update that changes nothing (managedFields aside) is a no-op: no new resourceVersion."""

    def strip(o: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in o["metadata"].items() if k not in ("managedFields", "resourceVersion")}
        return {**{k: v for k, v in o.items() if k != "metadata"}, "metadata": meta}

    return strip(old) == strip(new)


class WriteRaced(Exception):
    """The stored object changed between the read an update started from and its commit."""


class Writes(RequestContext):
    """POST (create), PUT (update, and /status, /finalize) and PATCH (all four patch types) of one object."""

    async def guaranteed(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run the update or patch `write` as kube-apiserver's GuaranteedUpdate does: when another
        write lands while this one awaits a webhook, redo it from the current object. A request that
        named a resourceVersion then fails its own precondition (409 Conflict) on the redo; one that
        did not (a patch, an unconditional update) applies to the current object instead of failing
        or overwriting what was written meanwhile."""
        warnings = list(self.warnings)
        while True:
            try:
                return await write()
            except WriteRaced:
                self.warnings = list(warnings)
                self._applied = None

    async def create(self, body: Any = None) -> dict[str, Any]:
        obj = self._object_body(copy.deepcopy(body) if body is not None else await self._body())
        meta = obj["metadata"]
        if self.rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != self.namespace:
                raise StatusError(
                    400,
                    "BadRequest",
                    "the namespace of the provided object does not match the namespace sent on the request",
                )
            meta["namespace"] = self.namespace
        else:
            meta.pop("namespace", None)
        # NamespaceLifecycle admits before the name is generated, so its message names the prefix.
        admission_name = meta.get("name") or meta.get("generateName") or ""
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = meta["generateName"] + "".join(random.choices(_NAME_ALPHABET, k=5))
            else:
                raise errors.invalid(
                    self.rt.group,
                    self.rt.kind,
                    "",
                    [
                        errors.field_error(
                            "FieldValueRequired", "metadata.name", detail="name or generateName is required"
                        )
                    ],
                )
        self._require_namespace()
        if self.rt.namespaced:
            ns = self.store.get(("", "namespaces"), "", self.namespace)
            if ns and (ns.get("status") or {}).get("phase") == "Terminating":
                raise errors.forbidden_terminating(
                    self.rt.plural, self.rt.group, admission_name, self.namespace
                )
        stamp_new(obj, self.rt)
        if "status" in self.rt.subresources and self.rt.key != ("", "nodes"):
            obj.pop("status", None)  # PrepareForCreate: status is the controllers' to write, via /status
        self._default_and_prune(obj, creating=True)
        if self.rt.key == ("batch", "jobs"):
            defaults.job(obj)
        in_tree = None
        if self.rt.key == ("", "pods"):

            def in_tree(pod: dict[str, Any]) -> None:
                serviceaccounts.admit_pod(
                    pod, lambda ns, name: self.store.get(("", "serviceaccounts"), ns, name)
                )
                priority.admit_pod(
                    pod,
                    lambda name: self.store.get(PRIORITY_CLASSES, "", name),
                    lambda: self.store.list(PRIORITY_CLASSES),
                )

            in_tree(obj)
        elif self.rt.key == ("", "persistentvolumeclaims"):

            def in_tree(claim: dict[str, Any]) -> None:
                admit_default_class(claim, self.store.list(STORAGE_CLASSES))

            in_tree(obj)
        self.server.lifecycle.prepare_create(self.rt, obj)
        options = {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
        if self.query.get("fieldManager"):
            options["fieldManager"] = self.query["fieldManager"]
        obj = await self._admit(
            self._attrs("CREATE", obj, None, options),
            lambda o: (self._prepare_for_create(o), self._validate(o, None)),
            in_tree,
        )
        assert obj is not None
        self._track_manager(obj, None, "Apply" if self._applied is not None else "Update", self._applied)
        obj = await self._stored_form(obj)
        if self.store.get(self.rt.key, self.namespace, obj["metadata"]["name"]) is not None:
            raise errors.already_exists(self.rt.group, self.rt.plural, obj["metadata"]["name"])
        if self.dry_run:
            return obj  # a dry run is encoded for storage too; the response converts it back
        stored = self.store.put(self.rt.key, obj, "ADDED")
        self.server.lifecycle.after_write(self.rt, stored, None)
        return stored

    async def update(
        self,
        body: Any = None,
        *,
        old: tuple[dict[str, Any], dict[str, Any]] | None = None,
        operation: str = "Update",
    ) -> dict[str, Any]:
        """`old`, when the caller (PATCH) has read it: the stored object and that object as seen
        at the request's version."""
        from_put = old is None  # PATCH hands over what it read; its uid is checked by validation
        new = self._object_body(body if body is not None else await self._body())
        if self.sub == "scale":
            return await self._update_scale(new)  # Subresources, in subresources.py
        if self.sub == "ephemeralcontainers":
            stored = old[0] if old is not None else self._stored()
            return await self._update_ephemeral_containers(new, stored)  # Subresources, in subresources.py
        if self.sub == "resize" and self.rt.key == ("", "pods"):
            stored = old[0] if old is not None else self._stored()
            return await self._update_resize(new, stored)  # Subresources, in subresources.py
        if self.rt.key == ("", "namespaces") and self.sub == "finalize":
            self.sub = "finalize"
        if old is not None:
            old_stored, served_old = old
        else:
            old_stored = self.store.get(self.rt.key, self.namespace, self.name)
            served_old = await self._served(old_stored) if old_stored is not None else None
        old = served_old
        meta = new["metadata"]
        if meta.get("name") and meta["name"] != self.name:
            raise StatusError(
                400,
                "BadRequest",
                "the name of the object (" + meta["name"] + ") does not match the "
                "name on the URL (" + self.name + ")",
            )
        if self.rt.namespaced and meta.get("namespace") and meta["namespace"] != self.namespace:
            raise StatusError(
                400,
                "BadRequest",
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        # a PUT body's uid is a storage precondition, checked before anything about the stored object
        if from_put and (old is not None or (self._allow_create_on_update() and not self.sub)):
            preconditions.check_update_uid(self.rt, self.namespace, self.name, new, old)
        if old is None:
            if self.sub or not self._allow_create_on_update():
                raise errors.not_found(self.rt.group, self.rt.plural, self.name)
            meta["name"] = self.name
            return await self.create(new)
        rv = meta.get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise errors.stale(self.rt.group, self.rt.plural, self.name)
        if not rv and not self._allow_unconditional_update():
            raise errors.invalid(
                self.rt.group,
                self.rt.kind,
                self.name,
                [
                    errors.field_error(
                        "FieldValueInvalid",
                        "metadata.resourceVersion",
                        "",
                        "must be specified for an update",
                        show_value=False,
                    )
                ],
            )
        new = self._merge_split(old, new)
        if self.sub != "status" or self.rt.is_custom:
            self._default_and_prune(new, creating=False)
        options = {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}

        def prepare_and_validate(obj: dict[str, Any]) -> None:
            if self.sub == "status":
                self._status_strategy(obj, old)  # PrepareForUpdate follows mutating admission
            elif not self.sub:
                self.server.lifecycle.prepare_update(self.rt, obj, old)
            self._validate(obj, old)
            if self.rt.key == ("", "persistentvolumeclaims") and not self.sub:
                refusal = admit_claim_resize(obj, old, self._storage_class)
                if refusal is not None:  # the in-tree PersistentVolumeClaimResize plugin
                    raise refusal

        new = await self._admit(self._attrs("UPDATE", new, old, options), prepare_and_validate)
        assert new is not None and old_stored is not None
        return await self._commit_update(old_stored, old, new, operation)

    async def patch(self) -> tuple[dict[str, Any], bool]:
        ctype = self.request.content_type
        if ctype not in _PATCH_TYPES:
            raise StatusError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - "
                f"accepted media types include: {', '.join(_PATCH_TYPES)}",
            )
        if ctype == "application/strategic-merge-patch+json" and self.rt.is_custom:
            raise StatusError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - "
                "accepted media types include: application/json-patch+json, "
                "application/merge-patch+json, application/apply-patch+yaml",
            )
        body = await self._body()
        old_stored = self.store.get(self.rt.key, self.namespace, self.name)
        old = await self._served(old_stored) if old_stored is not None else None  # patched as seen
        if ctype == "application/apply-patch+yaml":
            if not isinstance(body, dict):
                raise StatusError(400, "BadRequest", "error decoding YAML: expected an object")
            if not self.query.get("fieldManager"):
                raise StatusError(
                    400, "BadRequest", "PATCH, application/apply-patch+yaml requires fieldManager to be set"
                )
            self._applied = body
            if old is None and not self.sub:
                refusal = preconditions.uid_mismatch_on_apply_create(self.rt, self.name, body)
                if refusal is not None:
                    raise refusal
                body = copy.deepcopy(body)
                body.setdefault("metadata", {})["name"] = self.name
                return await self.create(body), True
            if old is None:
                raise errors.not_found(self.rt.group, self.rt.plural, self.name)
            current = scale_of(self.rt, old) if self.sub == "scale" else old
            merged = server_side_apply(
                current, body, self.query["fieldManager"], strategic=not self.rt.is_custom
            )
            merged["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            return await self.update(merged, old=(old_stored, old), operation="Apply"), False
        if old is None:
            raise errors.not_found(self.rt.group, self.rt.plural, self.name)
        assert old_stored is not None
        current = scale_of(self.rt, old) if self.sub == "scale" else old
        if ctype == "application/json-patch+json":
            patched = json_patch(copy.deepcopy(current), body)
        elif ctype == "application/merge-patch+json":
            patched = merge_patch(current, body)
        else:
            patched = strategic_merge_patch(current, body)
        if not isinstance(patched, dict):
            raise StatusError(422, "Invalid", "the patched object is not an object")
        patched_rv = (patched.get("metadata") or {}).get("resourceVersion")
        if patched_rv and patched_rv != old["metadata"]["resourceVersion"]:
            raise errors.stale(self.rt.group, self.rt.plural, self.name)
        patched.setdefault("metadata", {})["resourceVersion"] = old["metadata"]["resourceVersion"]
        return await self.update(patched, old=(old_stored, old)), False

    def _default_and_prune(self, obj: dict[str, Any], creating: bool) -> None:
        fn = (defaults.CREATE_DEFAULTS if creating else defaults.SCHEME_DEFAULTS).get(self.rt.key)
        if fn is not None:
            fn(obj)
        if self.rt.is_custom and self.rt.schema:
            pruned = schema.prune(obj, self.rt.schema)
            if pruned.unknown:
                mode = self.query.get("fieldValidation", "Warn")
                if mode == "Strict":
                    detail = ", ".join(f'unknown field "{p}"' for p in pruned.unknown)
                    raise StatusError(
                        400,
                        "BadRequest",
                        f'{self.rt.kind} in version "{self.rt.version}" cannot be '
                        f"handled as a {self.rt.kind}: strict decoding error: {detail}",
                    )
                if mode == "Warn":
                    self.warnings.extend(f'unknown field "{p}"' for p in pruned.unknown)
            schema.apply_defaults(obj, self.rt.schema)

    def _prepare_for_create(self, obj: dict[str, Any]) -> None:
        """podStrategy.PrepareForCreate, which runs after mutating admission: a pod's status is reset
        and its QoS class computed from the final spec (an injected sidecar's resources count)."""
        if self.rt.key == ("", "pods"):
            obj["status"] = {"phase": "Pending", "qosClass": defaults.qos_class(obj.get("spec") or {})}

    def _validate(self, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        causes: list[dict[str, str]] = []
        name = obj["metadata"].get("name", "")
        if old is None:
            causes += validate_name(self.rt, name)
        elif obj["metadata"].get("uid") != old["metadata"].get("uid"):
            # validateCommonFields: reached by a PATCH that sets another uid (a PUT was refused earlier)
            causes.append(
                errors.field_error(
                    "FieldValueInvalid", "metadata.uid", obj["metadata"].get("uid"), "field is immutable"
                )
            )
        if self.rt.is_custom and self.rt.schema:
            causes += schema.validate(obj, self.rt.schema)
        if not (self.sub == "status" and old is not None):
            # A status write keeps the stored spec (see _status_strategy); built-in status
            # validation never looks at the spec, so nothing in it can refuse the write.
            causes += self.server.lifecycle.validate_builtin(self.rt, obj, old)
        causes += revisiondata.check(self, obj, old)
        if causes:
            raise errors.invalid(self.rt.group, self.rt.kind, name, causes)

    def _require_namespace(self) -> None:
        if not self.rt.namespaced:
            return
        ns = self.store.get(("", "namespaces"), "", self.namespace)
        if ns is None:
            raise errors.not_found("", "namespaces", self.namespace)

    def _track_manager(
        self,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        operation: str,
        applied: dict[str, Any] | None = None,
    ) -> None:
        """managedFields: Apply owns exactly what was applied; Update owns what it changed."""
        manager = self.query.get("fieldManager") or _manager_from_agent(
            self.request.headers.get("User-Agent", "")
        )
        entry: dict[str, Any] = {
            "manager": manager,
            "operation": operation,
            "apiVersion": self.rt.api_version,
            "time": now_iso(),
            "fieldsType": "FieldsV1",
        }
        if self.sub:
            entry["subresource"] = self.sub
        if applied is not None:
            paths = owned_paths(applied)
        else:
            paths = changed_paths(old, obj, self.sub)
        entries = list((old or obj)["metadata"].get("managedFields") or []) if old is not None else []
        obj["metadata"]["managedFields"] = record_manager(entries, entry, paths, replace=applied is not None)
        if not obj["metadata"]["managedFields"]:
            del obj["metadata"]["managedFields"]

    def _storage_class(self, name: str) -> dict[str, Any] | None:
        return self.store.get(STORAGE_CLASSES, "", name)

    def _allow_create_on_update(self) -> bool:
        return self.rt.is_custom is False and self.rt.key in {
            ("", "events"),
            ("coordination.k8s.io", "leases"),
            ("", "configmaps"),
            ("", "secrets"),
            ("", "endpoints"),
            ("", "nodes"),
            ("events.k8s.io", "events"),
        }

    def _allow_unconditional_update(self) -> bool:
        return not self.rt.is_custom

    def _merge_split(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """Keep identity from the stored object and split status from the rest like the real strategies."""
        merged = copy.deepcopy(new)
        meta = merged["metadata"]
        old_meta = old["metadata"]
        if not meta.get("uid") and "uid" in old_meta:
            meta["uid"] = old_meta["uid"]  # BeforeUpdate: the stored uid when the body names none
        for key in (
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        if self.rt.namespaced:
            meta["namespace"] = self.namespace
        meta["name"] = self.name
        if self.sub == "status":
            self._status_strategy(merged, old)
            self._refuse_new_finalizers_if_deleting(old_meta, merged["metadata"])
            return merged
        if self.sub == "finalize":
            result = copy.deepcopy(old)
            result.setdefault("spec", {})["finalizers"] = (merged.get("spec") or {}).get("finalizers") or []
            return result
        if "status" in self.rt.subresources:
            if "status" in old:
                merged["status"] = copy.deepcopy(old["status"])
            else:
                merged.pop("status", None)
        self._refuse_new_finalizers_if_deleting(old_meta, meta)
        return merged

    def _status_strategy(self, obj: dict[str, Any], old: dict[str, Any]) -> None:
        """The kind's status strategy PrepareForUpdate, in place (statusstrategy.py says what each
        kind keeps from the stored object); a pod's QoS class, once set, also stays."""
        prepare_status_update(self.rt, obj, old)
        if self.rt.key == ("", "pods"):
            old_qos = (old.get("status") or {}).get("qosClass")
            if old_qos and not (obj.get("status") or {}).get("qosClass"):
                obj.setdefault("status", {})["qosClass"] = old_qos  # QoS is immutable once set

    def _refuse_new_finalizers_if_deleting(self, old_meta: dict[str, Any], meta: dict[str, Any]) -> None:
        """BeforeUpdate's rule for every update, status writes included: an object being deleted
        takes no new finalizers."""
        if old_meta.get("deletionTimestamp") and not self._finalizers_shrink(old_meta, meta):
            added = set(meta.get("finalizers") or []) - set(old_meta.get("finalizers") or [])
            if added:
                raise errors.invalid(
                    self.rt.group,
                    self.rt.kind,
                    self.name,
                    [
                        errors.field_error(
                            "FieldValueForbidden",
                            "metadata.finalizers",
                            detail="no new finalizers can be added if the object is being deleted, "
                            f"found new finalizers {orjson.dumps(sorted(added)).decode()}",
                        )
                    ],
                )

    @staticmethod
    def _finalizers_shrink(old_meta: dict[str, Any], meta: dict[str, Any]) -> bool:
        return set(meta.get("finalizers") or []) <= set(old_meta.get("finalizers") or [])

    async def _commit_update(
        self, old_stored: dict[str, Any], old: dict[str, Any], new: dict[str, Any], operation: str
    ) -> dict[str, Any]:
        """Store `new` (at the request's version) over `old_stored` (`old`: it at the request's version)."""
        if has_generation(self.rt) and self.sub != "status" and not _meta_changed_only(old, new):
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        self._track_manager(new, old, operation, self._applied)
        new = await self._stored_form(new)
        old = old_stored
        if self.store.get(self.rt.key, self.namespace, self.name) is not old:
            # written (or deleted) while a conversion or admission webhook was awaited: etcd's
            # compare-and-swap fails and the whole write is redone on the current object
            raise WriteRaced(self.name)
        unchanged = _same_ignoring(old, new)
        if self.dry_run:
            return new
        if unchanged:
            return old
        meta = new["metadata"]
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and self.server.lifecycle.can_finish(self.rt, new)
        ):
            self.store.put(self.rt.key, new, "MODIFIED", old)
            self.server.lifecycle.remove(self.rt, new)
            return new
        stored = self.store.put(self.rt.key, new, "MODIFIED", old)
        self.server.lifecycle.after_write(self.rt, stored, old)
        return stored
