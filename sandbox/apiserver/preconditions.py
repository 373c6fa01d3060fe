"""The uid / resourceVersion preconditions of updates and deletes, with kube-apiserver's answers.

Two different code paths refuse a write aimed at another incarnation of an object, and they answer
differently, so clients (and kruise's controllers) see different errors:

- PUT (update, /status, /finalize): the body's `metadata.uid`, when set, becomes a storage
  precondition (rest.defaultUpdatedObjectInfo.Preconditions), checked against the stored object
  before anything else; a mismatch is etcd's invalid-object error, which InterpretUpdateError turns
  into 409 Conflict "Operation cannot be fulfilled on <resource> "<name>": StorageError: invalid
  object, Code: 4, Key: <etcd key>, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed:
  UID in precondition: <body uid>, UID in object meta: <stored uid>".
- PATCH (all types, apply included) carries no precondition: a patched `metadata.uid` that differs
  from the stored one fails generic update validation instead — 422 Invalid
  "metadata.uid: Invalid value: ...: field is immutable" (upstream's ReleasePod ignores exactly this
  Invalid for that reason). That check lives with the update pipeline in handlers/writes.py.
- DELETE: DeleteOptions.preconditions.uid / .resourceVersion are checked by rest.BeforeDelete, whose
  409 Conflict names the kind (not the resource): "Operation cannot be fulfilled on <Kind.group>
  "<name>": the UID in the precondition (<a>) does not match the UID in record (<b>). The object
  might have been deleted and then recreated".
"""

from __future__ import annotations

from typing import Any

from kruise.sandbox.apiserver import errors
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.apiserver.resources import ResourceType

# kube-apiserver's etcd prefixes that are not simply the resource name (SetResourceEtcdPrefix and
# the apiextensions / aggregator servers, which prefix with the group).
_ETCD_PREFIX = {
    ("", "nodes"): "minions",
    ("", "services"): "services/specs",
    ("", "endpoints"): "services/endpoints",
    ("", "replicationcontrollers"): "controllers",
    ("networking.k8s.io", "ingresses"): "ingress",
    ("apiextensions.k8s.io", "customresourcedefinitions"): "apiextensions.k8s.io/customresourcedefinitions",
    ("apiregistration.k8s.io", "apiservices"): "apiregistration.k8s.io/apiservices",
}


def storage_key(rt: ResourceType, namespace: str, name: str) -> str:
    """The etcd key kube-apiserver (default --etcd-prefix /registry) stores the object under."""
    prefix = f"{rt.group}/{rt.plural}" if rt.is_custom else _ETCD_PREFIX.get(rt.key, rt.plural)
    where = f"{namespace}/{name}" if rt.namespaced else name
    return f"/registry/{prefix}/{where}"


def check_update_uid(
    rt: ResourceType, namespace: str, name: str, body: dict[str, Any], stored: dict[str, Any] | None
) -> None:
    """A PUT whose body names a uid must hit the object with that uid (a missing object has none)."""
    wanted = (body.get("metadata") or {}).get("uid")
    if not wanted:
        return
    actual = ((stored or {}).get("metadata") or {}).get("uid", "")
    if wanted != actual:
        raise errors.conflict(
            rt.group,
            rt.plural,
            name,
            f"StorageError: invalid object, Code: 4, Key: {storage_key(rt, namespace, name)}, "
            f"ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: "
            f"{wanted}, UID in object meta: {actual}",
        )


def check_delete(rt: ResourceType, stored: dict[str, Any], options: dict[str, Any]) -> None:
    """rest.BeforeDelete's early precondition check: uid first, then resourceVersion."""
    pre = options.get("preconditions") or {}
    meta = stored["metadata"]
    why = ""
    if pre.get("uid") is not None and pre["uid"] != meta.get("uid"):
        why = (
            f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
            f"({meta.get('uid')}). The object might have been deleted and then recreated"
        )
    elif pre.get("resourceVersion") is not None and pre["resourceVersion"] != meta.get("resourceVersion"):
        why = (
            f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not match the "
            f"ResourceVersion in record ({meta.get('resourceVersion')}). The object might have been modified"
        )
    if why:
        raise errors.conflict(rt.group, rt.kind, meta["name"], why)


def uid_mismatch_on_apply_create(rt: ResourceType, name: str, body: dict[str, Any]) -> StatusError | None:
    """Server-side apply of a missing object whose configuration names a uid (patcher.applyPatch)."""
    uid = (body.get("metadata") or {}).get("uid")
    if not uid:
        return None
    return errors.conflict(
        rt.group,
        rt.plural,
        name,
        f"uid mismatch: the provided object specified uid {uid}, and no existing object was found",
    )
