"""Adopting and releasing a controller's pods and ControllerRevisions (upstream's ControllerRefManager
``ClaimPods`` / ``ClaimControllerRevisions``, and the StatefulSet's ``adoptOrphanRevisions``).

The decisions are :func:`kruise.control.common.controllerref.claim`; this module sends the patches. The
objects a pass then works with are :func:`claimed_view` of the cache: what is ours plus what was
just adopted (a failed adoption raises, so the pass never acts on an object it did not get).
Shared by the Advanced DaemonSet, the Advanced StatefulSet (adopt and release) and CloneSet (release
only: upstream lists its pods by owner uid, so orphans never reach the claim); the owner's own
resource is passed in so the uncached re-read before the first adoption goes to the right kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import structlog

from kruise.api.common import LabelSelector
from kruise.api.controllerref import controller_of
from kruise.api.objects import Obj, labels_of, section
from kruise.control.common.controllerref import (
    Claim,
    adopt_patch,
    adoption_refusal,
    claim,
    release_patch,
)
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Invalid, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.store import NAMESPACE_INDEX

log = structlog.get_logger("kruise.manager.ownership")

Matches = Callable[[Obj], bool]


class AdoptionRefused(Exception):
    """The owner may not adopt (deleted, replaced, or unreadable on the fresh read)."""


def selector_of(owner: Obj) -> Matches:
    """The owner's ``spec.selector`` as a test on an object's labels (ValueError when malformed)."""
    selector = LabelSelector.model_validate(section(owner, "spec", "selector"))
    return lambda obj: selector.matches(labels_of(obj))


def claimed_view(owner: Obj, informer: SharedInformer, matches: Matches) -> list[Obj]:
    """The objects of ``informer`` in the owner's namespace that are (or are being made) ours."""
    namespace = owner["metadata"]["namespace"]
    return [
        obj
        for obj in informer.by_index(NAMESPACE_INDEX, namespace)
        if claim(owner, obj, matches) in (Claim.OURS, Claim.ADOPT)
    ]


def _where(resource: Any, obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{resource.kind} {meta.get('namespace', '')}/{meta['name']} ({meta.get('uid')})"


async def claim_objects(
    client: Client,
    owner: Obj,
    owner_resource: Any,
    resource: Any,
    informer: SharedInformer,
    matches: Matches,
) -> None:
    """Adopt matching orphans and release owned objects that stopped matching. The owner is read
    afresh once, before the first adoption; errors are collected and the first one raised, after
    every object had its turn (as ClaimPods aggregates them)."""
    namespace = owner["metadata"]["namespace"]
    owner_name = owner["metadata"]["name"]
    refusal: str | None = None
    checked = False
    errors: list[Exception] = []
    for obj in informer.by_index(NAMESPACE_INDEX, namespace):
        decision = claim(owner, obj, matches)
        meta = obj["metadata"]
        if decision is Claim.ADOPT:
            if not checked:
                refusal = await recheck(client, owner, owner_resource)
                checked = True
            if refusal is not None:
                errors.append(AdoptionRefused(f"can't adopt {_where(resource, obj)}: {refusal}"))
                continue
            try:
                await client.patch(
                    resource, meta["name"], adopt_patch(owner, obj), namespace, patch_type=PatchType.STRATEGIC
                )
            except NotFound:
                continue
            except Exception as exc:
                errors.append(exc)
                continue
            log.info("adopted", owner=owner_name, kind=resource.kind, name=meta["name"])
        elif decision is Claim.RELEASE:
            try:
                await client.patch(
                    resource,
                    meta["name"],
                    release_patch(owner, obj),
                    namespace,
                    patch_type=PatchType.STRATEGIC,
                )
            except (NotFound, Invalid):
                # gone, or replaced under the same name (uid mismatch): nothing of ours to release
                continue
            except Exception as exc:
                errors.append(exc)
                continue
            log.info("released", owner=owner_name, kind=resource.kind, name=meta["name"])
    if errors:
        raise errors[0]


async def release_strays(
    client: Client, owner: Obj, resource: Any, objects: Iterable[Obj], matches: Matches
) -> list[Obj]:
    """The CloneSet's ``RefManager.ClaimOwnedObjects``: ``objects`` were listed by the owner's uid,
    so nothing is adopted; one it controls that stopped matching is released (unless the owner is
    being deleted, then it just stops counting). Returns the objects still ours; release errors
    are collected and the first raised after every object had its turn."""
    namespace = owner["metadata"]["namespace"]
    kept: list[Obj] = []
    errors: list[Exception] = []
    for obj in objects:
        decision = claim(owner, obj, matches)
        if decision is Claim.OURS:
            kept.append(obj)
        elif decision is Claim.RELEASE:
            meta = obj["metadata"]
            try:
                await client.patch(
                    resource,
                    meta["name"],
                    release_patch(owner, obj),
                    namespace,
                    patch_type=PatchType.STRATEGIC,
                )
            except (NotFound, Invalid):
                continue
            except Exception as exc:
                errors.append(exc)
                continue
            log.info("released", owner=owner["metadata"]["name"], kind=resource.kind, name=meta["name"])
    if errors:
        raise errors[0]
    return kept


def selected_or_orphan(owner: Obj, objects: Iterable[Obj], matches: Matches) -> list[Obj]:
    """``history.ListControllerRevisions``: the objects that match and are controlled by the owner
    or by nobody (orphans are listed too: the StatefulSet adopts them before it uses the list)."""
    uid = owner["metadata"]["uid"]
    listed = []
    for obj in objects:
        if not matches(obj):
            continue
        ref = controller_of(obj)
        if ref is None or ref.get("uid") == uid:
            listed.append(obj)
    return listed


async def adopt_orphans(
    client: Client, owner: Obj, owner_resource: Any, resource: Any, objects: Iterable[Obj]
) -> int:
    """The StatefulSet's ``adoptOrphanRevisions``: when any of ``objects`` has no controller, read the
    owner afresh (its uid must be unchanged; upstream does not look at its deletionTimestamp here),
    then adopt each orphan in turn, stopping at the first failure. Returns how many were adopted."""
    orphans = [obj for obj in objects if controller_of(obj) is None]
    if not orphans:
        return 0
    meta = owner["metadata"]
    fresh = await client.get(owner_resource, meta["name"], meta["namespace"])
    refusal = adoption_refusal(owner, fresh, check_deletion=False)
    if refusal is not None:
        raise AdoptionRefused(refusal)
    for obj in orphans:
        await client.patch(
            resource,
            obj["metadata"]["name"],
            adopt_patch(owner, obj),
            meta["namespace"],
            patch_type=PatchType.STRATEGIC,
        )
        log.info("adopted", owner=meta["name"], kind=resource.kind, name=obj["metadata"]["name"])
    return len(orphans)


async def recheck(client: Client, owner: Obj, owner_resource: Any) -> str | None:
    """``RecheckDeletionTimestamp`` with an uncached read: why adoption must not happen, or None."""
    meta = owner["metadata"]
    try:
        fresh = await client.get(owner_resource, meta["name"], meta["namespace"])
    except NotFound:
        fresh = None
    except Exception as exc:
        return f"can't recheck DeletionTimestamp: {exc}"
    return adoption_refusal(owner, fresh)
