"""SidecarSet admission beyond the generic kind handlers.

Mutating: after defaulting, stamp the two hash annotations pods are later compared against.
Validating: the rules that need *other* objects — container, volume and annotation conflicts with
SidecarSets selecting the same pods, the canary/base pairing, and the patchPodMetadata whitelist in
ConfigMap kruise-configuration — read from the webhook's informer caches instead of the apiserver.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from kruise.api import features
from kruise.api import sidecarset as api
from kruise.api.keys import ANNOTATION_SIDECARSET_BASE
from kruise.api.objects import annotations_of, meta_of, section
from kruise.api.validation import FieldError, aggregate_message, invalid, pydantic_errors, required
from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.control.sidecarset.matching import canary_base
from kruise.control.sidecarset.whitelist import whitelist_error
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny, mutable, patched
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers import kinddefaulting, kindvalidation
from kruise.webhook.handlers.kindhooks import KindHooks
from kruise.webhook.handlers.kindregistration import kind_registration
from kruise.webhook.handlers.pod import SidecarSetSource


def mutating_handler(hooks: KindHooks) -> Callable[[AdmissionRequest], Any]:
    defaulting = kinddefaulting.mutating_handler(hooks)

    async def handle(req: AdmissionRequest) -> Decision:
        decision = await defaulting(req)
        if decision.mutated is None or req.operation not in ("CREATE", "UPDATE"):
            return decision
        mutated = mutable(decision.mutated)
        meta = mutated.setdefault("metadata", {})
        meta["annotations"] = dict(section(meta, "annotations"))
        set_hash_annotations(mutated)
        return patched(mutated)

    return handle


def canary_errors(
    obj: dict[str, Any], old: dict[str, Any] | None, source: SidecarSetSource
) -> list[FieldError]:
    """`validateSidecarSetCanaryAnnotations`."""
    base = canary_base(obj)
    if base is None:
        return []
    annotations = annotations_of(obj)
    errs: list[FieldError] = []
    if base == meta_of(obj).get("name"):
        errs.append(invalid("metadata", annotations, "base sidecarSet cannot be itself"))
    if old is not None:
        old_base = annotations_of(old).get(ANNOTATION_SIDECARSET_BASE, "")
        if old_base != base:
            errs.append(
                invalid("metadata", annotations, f"annotations[{ANNOTATION_SIDECARSET_BASE}] is immutable")
            )
    found = source.get(base)
    if found is None:
        errs.append(
            invalid(
                "metadata",
                annotations,
                f'fetch base sidecarSet[{base}] failed: sidecarsets.apps.kruise.io "{base}" not found',
            )
        )
    elif canary_base(found) is not None:
        errs.append(invalid("metadata", annotations, "base sidecarSet cannot be canary"))
    strategy = section(obj, "spec", "updateStrategy").get("type")
    if strategy != api.STRATEGY_NOT_UPDATE:
        errs.append(invalid("metadata", annotations, "RollingUpdate is not supported for canary sidecarSet"))
    return errs


def _others(obj: dict[str, Any], source: SidecarSetSource) -> list[api.SidecarSet]:
    """Every other SidecarSet, parsed; a canary's base is not a conflict (it replaces it)."""
    base = canary_base(obj)
    others = []
    for item in source.list():
        if base is not None and meta_of(item).get("name") == base:
            continue
        try:
            others.append(api.SidecarSet.model_validate(mutable(item)))
        except ValidationError:
            continue  # a stored object the schema no longer accepts cannot conflict by name reliably
    return others


def validating_handler(
    hooks: KindHooks, source: SidecarSetSource, *, patch_metadata_defaults_allowed: bool = False
) -> Callable[[AdmissionRequest], Any]:
    """`patch_metadata_defaults_allowed` is gate SidecarSetPatchPodMetadataDefaultsAllowed."""
    generic = kindvalidation.validating_handler(hooks)

    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation not in ("CREATE", "UPDATE") or req.object is None:
            return await generic(req)
        try:
            obj = api.SidecarSet.model_validate(mutable(req.object))
            old = (
                api.SidecarSet.model_validate(mutable(req.old_object))
                if req.operation == "UPDATE" and req.old_object
                else None
            )
        except ValidationError as exc:
            return deny(422, aggregate_message(pydantic_errors(exc)))
        errors = api.validate(obj, old=old)
        refused = whitelist_error(req.object, source.configuration(), patch_metadata_defaults_allowed)
        if refused:
            errors.append(required("spec.patchPodMetadata", refused))
        errors.extend(canary_errors(req.object, req.old_object if old is not None else None, source))
        if not errors:
            errors = api.conflict_errors(obj, _others(req.object, source), source.namespace_labels)
        return deny(422, aggregate_message(errors)) if errors else allow()

    return handle


def _validating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    """Without the SidecarSet cache (kind not served) only the generic checks apply."""
    if ctx.sidecarsets is None:
        return kindvalidation.default_validating(ctx, hooks)
    allowed = ctx.enabled(features.SIDECARSET_PATCH_POD_METADATA_DEFAULTS_ALLOWED)
    return validating_handler(hooks, ctx.sidecarsets, patch_metadata_defaults_allowed=allowed)


REGISTRATIONS = (
    kind_registration(
        api.GROUP,
        "SidecarSet",
        "mutate",
        lambda _ctx, hooks: mutating_handler(hooks),
        webhook="msidecarset.kb.io",
    ),
    kind_registration(api.GROUP, "SidecarSet", "validate", _validating, webhook="vsidecarset.kb.io"),
)
