"""Advanced StatefulSet admission beyond the generic kind hooks: the checks upstream runs only on
UPDATE after the spec validation passed.

- Gate StatefulSetAutoResizePVCGate on: with ``volumeClaimUpdateStrategy.type: OnPodRollingUpdate``
  the claim templates may only change in size (the controller patches live claims to follow), and
  only when their storage class allows volume expansion.
- ``podUpdatePolicy: InPlaceOnly``: the template may change nothing but container images.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from pydantic import ValidationError

from kruise.api import features
from kruise.api import statefulset as sts_api
from kruise.api.goquantity import Quantity
from kruise.api.objects import Obj, meta_of, section, spec_of
from kruise.api.validation import FieldError, aggregate_message, forbidden, invalid
from kruise.api.workload_common import UPDATE_TYPE_IN_PLACE_ONLY
from kruise.control.statefulset.claims import compatible_without_size
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, deny
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers.kinddefaulting import mutating_handler
from kruise.webhook.handlers.kindhooks import KindHooks
from kruise.webhook.handlers.kindregistration import CREATE_UPDATE_DELETE, kind_registration
from kruise.webhook.handlers.kindvalidation import validating_handler

ANNOTATION_DEFAULT_STORAGE_CLASS = "storageclass.kubernetes.io/is-default-class"


class StorageClassSource(Protocol):
    """StorageClasses as the webhook's informer sees them."""

    def get(self, name: str) -> Obj | None: ...

    def list(self) -> list[Obj]: ...


def default_storage_class(classes: StorageClassSource) -> Obj | None:
    """The class annotated as the cluster default; the newest one when several claim it (the
    apiserver's DefaultStorageClass admission picks the same), None when there is none."""
    chosen: Obj | None = None
    for sc in classes.list():
        meta = sc.get("metadata") or {}
        if section(meta, "annotations").get(ANNOTATION_DEFAULT_STORAGE_CLASS) != "true":
            continue
        stamp = meta.get("creationTimestamp") or ""
        if chosen is None or meta_of(chosen).get("creationTimestamp", "") < stamp:
            chosen = sc
    return chosen


def _storage(claim: Obj, kind: str) -> Any:
    value = section(claim, "spec", "resources", kind).get("storage")
    return Quantity.of(value).value if value is not None else Quantity.of("0").value


def _size_changed(old: Obj, new: Obj) -> bool:
    """Requests or limits of storage differ (a missing one reads as zero, as Go's Storage())."""
    return _storage(old, "requests") != _storage(new, "requests") or _storage(old, "limits") != _storage(
        new, "limits"
    )


def volume_claim_template_update_errors(
    new: sts_api.StatefulSet, old: sts_api.StatefulSet, classes: StorageClassSource
) -> list[FieldError]:
    """ValidateVolumeClaimTemplateUpdate: first failing template only, as upstream returns early.

    Only ``OnPodRollingUpdate`` restricts the templates (``OnDelete`` and unset leave them free:
    new claims simply follow the new template)."""
    strategy = new.spec.volume_claim_update_strategy.type or ""
    if strategy in ("", sts_api.VOLUME_CLAIM_UPDATE_ON_DELETE):
        return []
    templates = new.spec.volume_claim_templates or []
    old_templates = old.spec.volume_claim_templates or []
    if len(templates) != len(old_templates):
        return [
            invalid(
                "spec.volumeClaimTemplates",
                templates,
                "volumeClaimTemplate can not be added or deleted when OnRollingUpdate",
            )
        ]
    by_name = {meta_of(t).get("name"): t for t in old_templates}
    for template in templates:
        name = meta_of(template).get("name")
        path = f"spec.volumeClaimTemplates[{name}]"
        previous = by_name.get(name)
        if previous is None:
            return [forbidden(f"{path}.name", "volumeClaimTemplate name can not be modified")]
        if not compatible_without_size(previous, template):
            return [invalid(path, template, "volumeClaimTemplate can not be modified when OnRollingUpdate")]
        if not _size_changed(previous, template):
            continue
        class_name = spec_of(template).get("storageClassName")
        if class_name is None:
            sc = default_storage_class(classes)
            if sc is None:
                continue  # no default class: nothing to check against, as upstream
        else:
            sc = classes.get(class_name)
            if sc is None:
                return [invalid(f"{path}.spec.storageClassName", class_name, "can not get sc")]
        if sc.get("allowVolumeExpansion") is False:
            sc_name = meta_of(sc).get("name")
            return [
                forbidden(
                    f"{path}.spec.resources.requests.storage",
                    f"storage class {sc_name} does not support volume expansion",
                )
            ]
    return []


def _in_place_only_problem(new: sts_api.StatefulSet, old: sts_api.StatefulSet) -> str | None:
    rolling = new.spec.update_strategy.rolling_update
    if rolling is None or rolling.pod_update_policy != UPDATE_TYPE_IN_PLACE_ONLY:
        return None
    return sts_api.in_place_only_problem(old.spec.template, new.spec.template)


def statefulset_hooks(hooks: KindHooks, auto_resize_pvc: bool, auto_delete_pvc: bool = True) -> KindHooks:
    """The kind's hooks with the gates' defaulting: ``OnDelete`` for an unset claim strategy
    (StatefulSetAutoResizePVCGate), Retain/Retain retention policy (StatefulSetAutoDeletePVC)."""
    if hooks.set_defaults is None:
        return hooks
    defaults = partial(sts_api.set_defaults, auto_resize_pvc=auto_resize_pvc, auto_delete_pvc=auto_delete_pvc)
    return dataclasses.replace(hooks, set_defaults=defaults)


def statefulset_mutating_handler(
    hooks: KindHooks,
    auto_resize_pvc: bool,
    template_no_defaults: bool = False,
    host_network_host_ports: bool = False,
    auto_delete_pvc: bool = True,
) -> Callable[[AdmissionRequest], Any]:
    return mutating_handler(
        statefulset_hooks(hooks, auto_resize_pvc, auto_delete_pvc),
        template_no_defaults,
        host_network_host_ports,
    )


def statefulset_validating_handler(
    hooks: KindHooks,
    classes: StorageClassSource | None,
    auto_resize_pvc: bool,
    deletion_protection: bool = False,
) -> Callable[[AdmissionRequest], Any]:
    """The generic spec checks, then on UPDATE the claim-template rule (gate on) and InPlaceOnly.

    ``classes`` None with the gate on: no StorageClass is known, so a named class "can not get sc"."""
    generic = validating_handler(hooks, deletion_protection=deletion_protection)
    known: StorageClassSource = classes if classes is not None else _NoStorageClasses()

    async def handle(req: AdmissionRequest) -> Decision:
        decision = await generic(req)
        if not decision.allowed or req.operation != "UPDATE" or not req.object or not req.old_object:
            return decision
        try:
            model = hooks.model_for(req.kind.version)
            new = sts_api.to_v1beta1(model.model_validate(req.object))
            old = sts_api.to_v1beta1(model.model_validate(req.old_object))
        except ValidationError:  # the generic handler already refused what does not parse
            return decision
        if auto_resize_pvc:
            errors = volume_claim_template_update_errors(new, old, known)
            if errors:
                return deny(422, aggregate_message(errors))
        problem = _in_place_only_problem(new, old)
        if problem is not None:
            return deny(422, problem)
        return decision

    return handle


class _NoStorageClasses:
    def get(self, name: str) -> Obj | None:
        return None

    def list(self) -> list[Obj]:
        return []


def _mutating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    return statefulset_mutating_handler(
        hooks,
        ctx.enabled(features.STATEFULSET_AUTO_RESIZE_PVC_GATE),
        ctx.enabled(features.TEMPLATE_NO_DEFAULTS),
        ctx.enabled(features.DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES),
        auto_delete_pvc=ctx.enabled(features.STATEFULSET_AUTO_DELETE_PVC),
    )


def _validating(ctx: WebhookContext, hooks: KindHooks) -> Handler:
    return statefulset_validating_handler(
        hooks,
        ctx.storage_classes,
        ctx.enabled(features.STATEFULSET_AUTO_RESIZE_PVC_GATE),
        deletion_protection=ctx.enabled(features.RESOURCES_DELETION_PROTECTION),
    )


REGISTRATIONS = (
    kind_registration(sts_api.GROUP, "StatefulSet", "mutate", _mutating, webhook="mstatefulset.kb.io"),
    kind_registration(
        sts_api.GROUP,
        "StatefulSet",
        "validate",
        _validating,
        webhook="vstatefulset.kb.io",
        operations=CREATE_UPDATE_DELETE,
    ),
)
