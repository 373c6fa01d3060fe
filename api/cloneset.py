"""CloneSet (apps.kruise.io/v1alpha1): stateless workload with in-place update, partition and surge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from kruise.api.common import (
    Condition,
    Int32,
    Int64,
    IntOrString,
    IntOrStringError,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    Schemaless,
    scaled_value_round_up,
    selector_matches,
)
from kruise.api.controllerref import controller_of
from kruise.api.crdgen import (
    CRD_REQUIRED,
    CRDInfo,
    CRDVersion,
    PrinterColumn,
    ScaleSubresource,
    age_column,
)
from kruise.api.objects import meta_of, spec_of
from kruise.api.podtemplate_defaults import default_pod_template, default_pvc
from kruise.api.podtemplate_validation import (
    first_non_image_change,
    template_labels,
    template_spec,
    validate_pod_template,
)
from kruise.api.validation import (
    FieldError,
    changed_outside,
    forbidden,
    invalid,
    not_supported,
    required,
    validate_label_selector,
    validate_nonnegative,
)
from kruise.api.workload_common import (
    POD_UPDATE_TYPES,
    UPDATE_TYPE_IN_PLACE_IF_POSSIBLE,
    UPDATE_TYPE_IN_PLACE_ONLY,
    UPDATE_TYPE_RECREATE,
    InPlaceUpdateStrategy,
    Lifecycle,
    UpdatePriorityStrategy,
    UpdateScatterTerm,
    validate_priority_and_scatter,
)

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "CloneSet"
DEFAULT_MAX_UNAVAILABLE = "20%"
MAX_INT32 = 2**31 - 1


class CloneSetScaleStrategy(KruiseModel):
    pods_to_delete: list[str] | None = None
    max_unavailable: IntOrString | None = None
    disable_pvc_reuse: bool | None = Field(default=None, alias="disablePVCReuse")


class CloneSetUpdateStrategy(KruiseModel):
    type: str | None = None
    partition: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None
    paused: bool | None = None
    priority_strategy: UpdatePriorityStrategy | None = None
    scatter_strategy: list[UpdateScatterTerm] | None = None
    in_place_update_strategy: InPlaceUpdateStrategy | None = None


class CloneSetSpec(KruiseModel):
    replicas: Int32 | None = None
    selector: LabelSelector | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    template: Schemaless
    volume_claim_templates: list[Schemaless] | None = None
    scale_strategy: CloneSetScaleStrategy = Field(default_factory=CloneSetScaleStrategy)
    update_strategy: CloneSetUpdateStrategy = Field(default_factory=CloneSetUpdateStrategy)
    revision_history_limit: Int32 | None = None
    min_ready_seconds: Int32 | None = None
    lifecycle: Lifecycle | None = None
    progress_deadline_seconds: Int32 | None = None


class CloneSetStatus(KruiseModel):
    observed_generation: Int64 | None = None
    replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    available_replicas: Int32 | None = None
    updated_replicas: Int32 | None = None
    updated_ready_replicas: Int32 | None = None
    updated_available_replicas: Int32 | None = None
    expected_updated_replicas: Int32 | None = None
    update_revision: str | None = None
    current_revision: str | None = None
    collision_count: Int32 | None = None
    conditions: list[Condition] | None = None
    label_selector: str | None = None


class CloneSet(KruiseObject):
    spec: CloneSetSpec
    status: CloneSetStatus | None = None


class CloneSetScaleStrategyV1beta1(KruiseModel):
    """v1beta1: `enablePVCReuse` (default off) replaces `disablePVCReuse`; `excludePreparingDelete`
    replaces label apps.kruise.io/cloneset-scaling-exclude-preparing-delete."""

    pods_to_delete: list[str] | None = None
    max_unavailable: IntOrString | None = None
    enable_pvc_reuse: bool | None = Field(default=None, alias="enablePVCReuse")
    exclude_preparing_delete: bool | None = None


class InPlaceUpdateStrategyV1beta1(InPlaceUpdateStrategy):
    """v1beta1 holds the image pre-download settings v1alpha1 keeps in annotations."""

    image_pre_download_parallelism: IntOrString | None = None
    image_pre_download_timeout_seconds: Int32 | None = None
    image_pre_download_min_updated_ready_pods: Int32 | None = None


class RollingUpdateCloneSetStrategy(KruiseModel):
    """v1beta1 `updateStrategy.rollingUpdate`: v1alpha1's updateStrategy fields plus `podUpdatePolicy`
    (v1alpha1's ReCreate / InPlaceIfPossible / InPlaceOnly type)."""

    partition: IntOrString | None = None
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None
    pod_update_policy: str | None = None
    paused: bool | None = None
    priority_strategy: UpdatePriorityStrategy | None = None
    scatter_strategy: list[UpdateScatterTerm] | None = None
    in_place_update_strategy: InPlaceUpdateStrategyV1beta1 | None = None


class CloneSetUpdateStrategyV1beta1(KruiseModel):
    """v1beta1: `type` is RollingUpdate or OnDelete."""

    type: str | None = None
    rolling_update: RollingUpdateCloneSetStrategy | None = None


class CloneSetSpecV1beta1(CloneSetSpec):
    scale_strategy: CloneSetScaleStrategyV1beta1 = Field(  # type: ignore[assignment]
        default_factory=CloneSetScaleStrategyV1beta1
    )
    update_strategy: CloneSetUpdateStrategyV1beta1 = Field(  # type: ignore[assignment]
        default_factory=CloneSetUpdateStrategyV1beta1
    )


class CloneSetV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    spec: CloneSetSpecV1beta1
    status: CloneSetStatus | None = None


_COLUMNS = (
    PrinterColumn("DESIRED", "integer", ".spec.replicas"),
    PrinterColumn("UPDATED", "integer", ".status.updatedReplicas"),
    PrinterColumn("UPDATED_READY", "integer", ".status.updatedReadyReplicas"),
    PrinterColumn("UPDATED_AVAILABLE", "integer", ".status.updatedAvailableReplicas"),
    PrinterColumn("READY", "integer", ".status.readyReplicas"),
    PrinterColumn("TOTAL", "integer", ".status.replicas"),
    age_column(),
    PrinterColumn("CONTAINERS", "string", ".spec.template.spec.containers[*].name", priority=1),
    PrinterColumn("IMAGES", "string", ".spec.template.spec.containers[*].image", priority=1),
    PrinterColumn("SELECTOR", "string", ".status.labelSelector", priority=1),
)

CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="clonesets",
    short_names=("clone",),
    versions=(
        CRDVersion(VERSION, CloneSet, storage=True, printer_columns=_COLUMNS, scale=ScaleSubresource()),
        CRDVersion(
            "v1beta1",
            CloneSetV1beta1,
            storage=False,
            printer_columns=_COLUMNS,
            scale=ScaleSubresource(),
        ),
    ),
    conversion_webhook=True,
)


def set_defaults(
    obj: CloneSet, inject_template_defaults: bool = True, host_network_host_ports: bool = False
) -> None:
    """SetDefaultsCloneSet."""
    spec = obj.spec
    if spec.replicas is None:
        spec.replicas = 1
    if spec.revision_history_limit is None:
        spec.revision_history_limit = 10
    if inject_template_defaults:
        default_pod_template(spec.template, host_network_host_ports)
        for pvc in spec.volume_claim_templates or []:
            default_pvc(pvc)
    strategy = spec.update_strategy
    if not strategy.type:
        strategy.type = UPDATE_TYPE_RECREATE
    elif (
        strategy.type in (UPDATE_TYPE_IN_PLACE_IF_POSSIBLE, UPDATE_TYPE_IN_PLACE_ONLY)
        and strategy.in_place_update_strategy is None
    ):
        strategy.in_place_update_strategy = InPlaceUpdateStrategy()
    if strategy.partition is None:
        strategy.partition = 0
    if strategy.max_unavailable is None:
        strategy.max_unavailable = DEFAULT_MAX_UNAVAILABLE
    if strategy.max_surge is None:
        strategy.max_surge = 0
    spec.update_strategy = strategy
    spec.scale_strategy = spec.scale_strategy


def _scaled(value: IntOrString | None, replicas: int, field: str, path: str) -> tuple[int, list[FieldError]]:
    if value is None:
        return 0, []
    try:
        return scaled_value_round_up(value, replicas), []
    except IntOrStringError as err:
        return 0, [invalid(path, str(value), f"failed getValueFromIntOrPercent for {field}: {err}")]


def validate_update_strategy(strategy: CloneSetUpdateStrategy, replicas: int, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if strategy.type not in POD_UPDATE_TYPES:
        errs.append(
            invalid(
                f"{path}.type",
                strategy.type or "",
                f"must be '{UPDATE_TYPE_RECREATE}', {UPDATE_TYPE_IN_PLACE_IF_POSSIBLE} "
                f"or '{UPDATE_TYPE_IN_PLACE_ONLY}'",
            )
        )
    partition, perrs = _scaled(strategy.partition, replicas, "partition", f"{path}.partition")
    errs.extend(perrs)
    errs.extend(validate_nonnegative(partition, f"{path}.partition"))
    errs.extend(validate_priority_and_scatter(strategy.priority_strategy, strategy.scatter_strategy, path))
    max_unavailable, uerrs = _scaled(
        strategy.max_unavailable, replicas, "maxUnavailable", f"{path}.maxUnavailable"
    )
    errs.extend(uerrs)
    max_surge, serrs = _scaled(strategy.max_surge, replicas, "maxSurge", f"{path}.maxSurge")
    errs.extend(serrs)
    if strategy.type == UPDATE_TYPE_IN_PLACE_ONLY and max_surge > 0:
        errs.append(
            invalid(
                f"{path}.maxSurge",
                str(strategy.max_surge),
                "can not use maxSurge with strategy type InPlaceOnly",
            )
        )
    if replicas > 0 and max_unavailable < 1 and max_surge < 1:
        errs.append(
            invalid(
                f"{path}.maxUnavailable",
                strategy.max_unavailable,
                "maxUnavailable and maxSurge should not both be less than 1",
            )
        )
    return errs


def validate_spec(spec: CloneSetSpec, path: str = "spec") -> list[FieldError]:
    errs: list[FieldError] = []
    replicas = spec.replicas if spec.replicas is not None else 1
    errs.extend(validate_nonnegative(replicas, f"{path}.replicas"))
    if spec.selector is None:
        errs.append(required(f"{path}.selector"))
    else:
        errs.extend(validate_label_selector(spec.selector, f"{path}.selector"))
        if spec.selector.is_empty():
            errs.append(
                invalid(f"{path}.selector", spec.selector.to_dict(), "empty selector is invalid for cloneset")
            )
        else:
            try:
                matched = selector_matches(spec.selector, template_labels(spec.template))
            except ValueError:
                matched = True  # the operator error is already reported above
            if not matched:
                errs.append(
                    invalid(
                        f"{path}.template.metadata.labels",
                        template_labels(spec.template),
                        "`selector` does not match template `labels`",
                    )
                )
    claims = [meta_of(pvc).get("name", "") for pvc in spec.volume_claim_templates or []]
    errs.extend(validate_pod_template(spec.template, f"{path}.template", claim_names=claims))
    pod_spec = template_spec(spec.template)
    restart = pod_spec.get("restartPolicy")
    if restart and restart != "Always":
        errs.append(not_supported(f"{path}.template.spec.restartPolicy", restart, ["Always"]))
    if pod_spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                f"{path}.template.spec.activeDeadlineSeconds",
                "activeDeadlineSeconds in cloneset is not Supported",
            )
        )
    pods = spec.scale_strategy.pods_to_delete or []
    dups = sorted({p for p in pods if pods.count(p) > 1})
    if dups:
        errs.append(
            invalid(f"{path}.scaleStrategy.podsToDelete", pods, f"duplicated items [{' '.join(dups)}]")
        )
    errs.extend(validate_update_strategy(spec.update_strategy, replicas, f"{path}.updateStrategy"))
    deadline = spec.progress_deadline_seconds
    if deadline is not None:
        errs.extend(validate_nonnegative(deadline, f"{path}.progressDeadlineSeconds"))
        if deadline != MAX_INT32 and deadline <= (spec.min_ready_seconds or 0):
            detail = "must be greater than minReadySeconds"
            errs.append(invalid(f"{path}.progressDeadlineSeconds", deadline, detail))
    return errs


PodLookup = Callable[[str, str], dict[str, Any] | None]
"""(namespace, name) -> the pod as a dict, or None when it does not exist."""


def pods_to_delete_errors(obj: CloneSet, old: CloneSet | None, get_pod: PodLookup) -> list[FieldError]:
    """Newly listed scaleStrategy.podsToDelete must exist, not be terminating, and be owned by this CloneSet.

    Kept apart from `validate` because it needs cluster reads; the webhook calls it with its cache.
    """
    path = "spec.scaleStrategy.podsToDelete"
    listed = obj.spec.scale_strategy.pods_to_delete or []
    if len(set(listed)) != len(listed):
        return []  # reported by validate() as duplicated items
    already = set(old.spec.scale_strategy.pods_to_delete or []) if old is not None else set()
    namespace = obj.metadata.namespace or ""
    errs: list[FieldError] = []
    for name in sorted(set(listed) - already):
        pod = get_pod(namespace, name)
        if pod is None:
            errs.append(invalid(path, name, f'find pod {name} failed: pods "{name}" not found'))
            continue
        meta = pod.get("metadata") or {}
        controller = controller_of(pod)
        if meta.get("deletionTimestamp"):
            errs.append(invalid(path, name, f"find pod {name} already terminating"))
        elif controller is None or controller.get("uid") != obj.metadata.uid:
            errs.append(invalid(path, name, f"find pod {name} owner is not this CloneSet"))
    return errs


MUTABLE_SPEC_FIELDS = (
    "replicas",
    "template",
    "scaleStrategy",
    "updateStrategy",
    "minReadySeconds",
    "progressDeadlineSeconds",
    "lifecycle",
    "revisionHistoryLimit",
    "volumeClaimTemplates",
)


def validate_v1beta1_values(obj: dict[str, Any]) -> list[FieldError]:
    """upstream's validateUpdateStrategyV1beta1 type checks, on a v1beta1 object as the client wrote it.

    The admission webhook converts a v1beta1 CloneSet to v1alpha1 for `validate`; the conversion reads any
    `type` but OnDelete as RollingUpdate and any unknown `podUpdatePolicy` as ReCreate (as upstream's
    does), so a v1alpha1 value written at v1beta1 (`type: InPlaceIfPossible`) would silently become a
    ReCreate CloneSet. These are checked first, with upstream's messages."""
    errs: list[FieldError] = []
    strategy = spec_of(obj).get("updateStrategy")
    if not isinstance(strategy, dict):
        return errs
    kind = strategy.get("type")
    if kind not in (None, "", "RollingUpdate", "OnDelete"):
        errs.append(invalid("spec.updateStrategy.type", kind, "must be 'RollingUpdate' or 'OnDelete'"))
    rolling = strategy.get("rollingUpdate")
    policy = rolling.get("podUpdatePolicy") if isinstance(rolling, dict) else None
    if policy not in (None, "", *POD_UPDATE_TYPES):
        errs.append(
            invalid(
                "spec.updateStrategy.rollingUpdate.podUpdatePolicy",
                policy,
                "must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'",
            )
        )
    return errs


def validate(obj: CloneSet, old: CloneSet | None = None) -> list[FieldError]:
    """The validating webhook: create when `old` is None, update otherwise."""
    errs: list[FieldError] = []
    if old is not None:
        if changed_outside(obj.spec.to_dict(), old.spec.to_dict(), MUTABLE_SPEC_FIELDS):
            errs.append(
                forbidden(
                    "spec",
                    "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', "
                    "'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', "
                    "'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden",
                )
            )
        if obj.spec.update_strategy.type == UPDATE_TYPE_IN_PLACE_ONLY:
            change = first_non_image_change(old.spec.template, obj.spec.template, anchored=True)
            if change:
                errs.append(
                    forbidden(
                        "spec", f"only allowed to update images in spec for InPlaceOnly, but found {change}"
                    )
                )
    errs.extend(validate_spec(obj.spec))
    return errs
