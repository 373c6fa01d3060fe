"""Adopting and releasing the DaemonSet's pods and ControllerRevisions (upstream's getDaemonPods /
controlledHistories through a ControllerRefManager).

The decisions are :func:`kruise.control.controllerref.claim`; this module sends the patches. The
objects a pass then works with are :func:`claimed_view` of the cache: what is ours plus what was
just adopted (a failed adoption raises, so the pass never acts on an object it did not get).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from kruise.api.common import LabelSelector
from kruise.control.controllerref import Claim, adopt_patch, adoption_refusal, claim, release_patch
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Invalid, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import ADVANCED_DAEMONSETS
from kruise.kube.store import NAMESPACE_INDEX

log = structlog.get_logger("kruise.manager.daemonset")

Obj = Mapping[str, Any]


class AdoptionRefused(Exception):
    """The DaemonSet may not adopt (deleted, replaced, or unreadable on the fresh read)."""


def selector_of(ds: Obj) -> Callable[[Obj], bool]:
    """The DaemonSet's selector as a test on an object's labels."""
    selector = LabelSelector.model_validate((ds.get("spec") or {}).get("selector") or {})
    return lambda obj: selector.matches((obj.get("metadata") or {}).get("labels") or {})


def claimed_view(ds: Obj, informer: SharedInformer, matches: Callable[[Obj], bool]) -> list[Obj]:
    """The objects of ``informer`` in the DaemonSet's namespace that are (or are being made) ours."""
    namespace = ds["metadata"]["namespace"]
    return [
        obj
        for obj in informer.by_index(NAMESPACE_INDEX, namespace)
        if claim(ds, obj, matches) in (Claim.OURS, Claim.ADOPT)
    ]


async def claim_objects(
    client: Client, ds: Obj, resource: Any, informer: SharedInformer, matches: Callable[[Obj], bool]
) -> None:
    """Adopt matching orphans and release owned objects that stopped matching. The DaemonSet is read
    afresh once, before the first adoption; errors are collected and the first one raised, after
    every object had its turn (as ClaimPods aggregates them)."""
    namespace = ds["metadata"]["namespace"]
    refusal: str | None = None
    checked = False
    errors: list[Exception] = []
    for obj in informer.by_index(NAMESPACE_INDEX, namespace):
        decision = claim(ds, obj, matches)
        meta = obj["metadata"]
        if decision is Claim.ADOPT:
            if not checked:
                refusal = await _recheck(client, ds)
                checked = True
            if refusal is not None:
                what = f"{resource.kind} {namespace}/{meta['name']} ({meta.get('uid')})"
                errors.append(AdoptionRefused(f"can't adopt {what}: {refusal}"))
                continue
            try:
                await client.patch(
                    resource, meta["name"], adopt_patch(ds, obj), namespace, patch_type=PatchType.STRATEGIC
                )
            except NotFound:
                continue
            except Exception as exc:
                errors.append(exc)
                continue
            log.info("adopted", daemonset=ds["metadata"]["name"], kind=resource.kind, name=meta["name"])
        elif decision is Claim.RELEASE:
            try:
                await client.patch(
                    resource, meta["name"], release_patch(ds, obj), namespace, patch_type=PatchType.STRATEGIC
                )
            except (NotFound, Invalid):
                # gone, or replaced under the same name (uid mismatch): nothing of ours to release
                continue
            except Exception as exc:
                errors.append(exc)
                continue
            log.info("released", daemonset=ds["metadata"]["name"], kind=resource.kind, name=meta["name"])
    if errors:
        raise errors[0]


async def _recheck(client: Client, ds: Obj) -> str | None:
    meta = ds["metadata"]
    try:
        fresh = await client.get(ADVANCED_DAEMONSETS, meta["name"], meta["namespace"])
    except NotFound:
        fresh = None
    except Exception as exc:
        return f"can't recheck DeletionTimestamp: {exc}"
    return adoption_refusal(ds, fresh)
