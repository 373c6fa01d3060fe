"""Controller references: which owner reference controls an object, and the one a controller
stamps on what it creates (``metav1.GetControllerOf`` / ``IsControlledBy`` / ``NewControllerRef``).

The rules for adopting and releasing objects build on these in ``kruise.control.common.controllerref``;
they live here, below every layer, because informer indexers and event mappers need them too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kruise.api.objects import Obj, meta_of, owner_refs_of


def controller_of(obj: Obj | None) -> Mapping[str, Any] | None:
    """The owner reference with ``controller: true``, if any (the apiserver allows one)."""
    return next((ref for ref in owner_refs_of(obj) if ref.get("controller")), None)


def controlled_by(obj: Obj | None, uid: str | None) -> bool:
    """Whether the object's controller is the owner with this uid."""
    ref = controller_of(obj)
    return ref is not None and ref.get("uid") == uid


def controller_uid(obj: Obj | None) -> str | None:
    ref = controller_of(obj)
    return None if ref is None else ref.get("uid")


def new_controller_ref(
    owner: Obj, *, api_version: str = "", kind: str = "", block_owner_deletion: bool = True
) -> dict[str, Any]:
    """The reference marking ``owner`` as the controller of a new object; ``api_version``/``kind``
    stand in for an owner that does not carry its own. It blocks the owner's foreground deletion
    unless ``block_owner_deletion`` is False (upstream's auto-generated PersistentPodState spells its
    reference out without ``blockOwnerDeletion``)."""
    meta = meta_of(owner)
    ref = {
        "apiVersion": owner.get("apiVersion") or api_version,
        "kind": owner.get("kind") or kind,
        "name": meta["name"],
        "uid": meta.get("uid", ""),
        "controller": True,
    }
    if block_owner_deletion:
        ref["blockOwnerDeletion"] = True
    return ref


def with_controller(refs: Iterable[Mapping[str, Any]], controller: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``refs`` with ``controller`` as their controller, last: any other controlling reference and an
    earlier reference to the same owner are dropped (the apiserver allows one controller)."""
    uid = controller.get("uid")
    kept = [dict(ref) for ref in refs if ref.get("uid") != uid and not ref.get("controller")]
    return [*kept, dict(controller)]
