"""Writes of the kube-controller-manager controllers the emulator runs (garbage collector, namespace
controller), passed through admission as an API client's would be.

On a real cluster those controllers are ordinary clients of kube-apiserver: their DELETEs and their
PATCHes (an ownerReference dropped, a finalizer removed, `namespaces/<name>/finalize`) go through
mutating and validating admission with the controller's service account as the user, so a webhook
(kruise's PodUnavailableBudget, deletion protection) sees them and can refuse them. A refused write
raises here; the caller (a `lifecycle` work item) retries later, as the controller's work queue does.

Each write re-reads the stored object after admission: the webhooks are awaited, so the object may
have changed meanwhile; an update is then recomputed against the newer object (the client's conflict
retry), a delete of an object that is gone or was recreated under a new uid is dropped (the GC's uid
precondition).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kruise.sandbox.apiserver import errors
from kruise.sandbox.apiserver.admission import AdmissionAttributes
from kruise.sandbox.apiserver.equivalence import object_versions
from kruise.sandbox.apiserver.handlers.base import defaults_after_mutation
from kruise.sandbox.apiserver.resources import ResourceType

if TYPE_CHECKING:
    from kruise.sandbox.apiserver.server import ApiServer

GARBAGE_COLLECTOR = "generic-garbage-collector"
NAMESPACE_CONTROLLER = "namespace-controller"
_CONFLICT_RETRIES = 5


def service_account_user(name: str) -> dict[str, Any]:
    """The userInfo of a kube-system service account, as kube-controller-manager's controllers
    authenticate with `--use-service-account-credentials`."""
    return {
        "username": f"system:serviceaccount:kube-system:{name}",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
    }


class ControllerWrites:
    """The deletes and updates of one in-cluster controller, each through admission as `user`."""

    def __init__(self, server: ApiServer, controller: str):
        self.server = server
        self.user_info = service_account_user(controller)

    def _attrs(
        self,
        rt: ResourceType,
        operation: str,
        obj: dict[str, Any] | None,
        old: dict[str, Any],
        options: dict[str, Any],
        sub: str = "",
    ) -> AdmissionAttributes:
        meta = old["metadata"]
        return AdmissionAttributes(
            operation=operation,
            group=rt.group,
            version=rt.version,
            resource=rt.plural,
            subresource=sub,
            kind={"group": rt.group, "version": rt.version, "kind": rt.kind},
            namespace=meta.get("namespace", ""),
            name=meta["name"],
            object=obj,
            old_object=old,
            options=options,
            user_info=copy.deepcopy(self.user_info),
            defaulter=(lambda o: defaults_after_mutation(rt, o)) if operation == "UPDATE" else None,
            versions=object_versions(rt, self.server.types, self.server.conversion),
        )

    async def delete(self, rt: ResourceType, obj: dict[str, Any], propagation: str) -> None:
        """DELETE with a uid precondition; raises AdmissionDenied / StatusError when refused."""
        meta = obj["metadata"]
        options = {
            "kind": "DeleteOptions",
            "apiVersion": "meta.k8s.io/v1",
            "propagationPolicy": propagation,
            "preconditions": {"uid": meta["uid"]},
        }
        plugin = self.server.admission
        if plugin is not None:
            attrs = self._attrs(rt, "DELETE", None, obj, options)
            await plugin.mutate(attrs)
            await plugin.validate(attrs)
        current = self.server.store.get(rt.key, meta.get("namespace", ""), meta["name"])
        if current is None or current["metadata"]["uid"] != meta["uid"]:
            return
        if current["metadata"].get("deletionTimestamp") and propagation == "Background":
            return  # already being deleted: another worker got there first
        self.server.lifecycle.delete(rt, current, {"propagationPolicy": propagation}, False)

    async def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        change: Callable[[dict[str, Any]], dict[str, Any]],
        sub: str = "",
    ) -> None:
        """PATCH-like update: `change` maps a copy of the stored object to the wanted one; nothing
        happens when the object is gone or already as wanted. Raises when admission refuses."""
        for _ in range(_CONFLICT_RETRIES):
            current = self.server.store.get(rt.key, namespace, name)
            if current is None:
                return
            wanted = change(copy.deepcopy(current))
            if wanted == current:
                return
            options = {"kind": "UpdateOptions", "apiVersion": "meta.k8s.io/v1"}
            attrs = self._attrs(rt, "UPDATE", wanted, current, options, sub)
            plugin = self.server.admission
            if plugin is not None:
                await plugin.mutate(attrs)
            new = attrs.object
            assert new is not None
            causes = self.server.lifecycle.validate_builtin(rt, new, current)
            if causes:
                raise errors.invalid(rt.group, rt.kind, name, causes)
            if plugin is not None:
                await plugin.validate(attrs)
            if self.server.store.get(rt.key, namespace, name) is not current:
                continue  # written meanwhile: recompute against the newer object
            self.server.lifecycle.commit_update(rt.key, new, current)
            return
        raise errors.conflict(
            rt.group,
            rt.plural,
            name,
            "the object has been modified; please apply your changes to the latest version",
        )
