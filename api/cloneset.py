"""CloneSet (apps.kruise.io/v1alpha1): stateless workload with in-place update, partition and surge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import Field

from kruise.api.common import (
    ClaimTemplate,
    Condition,
    Int32,
    Int64,
    IntOrString,
    IntOrStringError,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    PodTemplate,
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
    """Names of pods to delete. The CloneSet deletes them (and creates replacements unless replicas is
    lowered at the same time); names of pods that no longer exist are dropped from the list."""
    max_unavailable: IntOrString | None = None
    """Most newly created pods that may be not yet available while scaling up: creation waits while more
    are. A number (e.g. 5) or a percentage of replicas (e.g. 10%). Unset: no limit."""
    disable_pvc_reuse: bool | None = Field(default=None, alias="disablePVCReuse")
    """Do not give a new pod the claims left behind by a deleted one: delete those claims and create new
    ones. Default false (claims are reused)."""


class CloneSetUpdateStrategy(KruiseModel):
    type: str | None = None
    """How pods get a new template: ReCreate (delete and create, the default), InPlaceIfPossible (update
    images and other in-place changeable fields without recreating, recreate otherwise) or InPlaceOnly
    (in place only; other template changes are rejected)."""
    partition: IntOrString | None = None
    """Pods to keep at old revisions, as a number (e.g. 5) or a percentage of replicas (e.g. 10%, rounded
    up): updating stops once replicas minus partition pods run the new template. Lower it step by step for
    a canary or batched release. Default 0 (update all)."""
    max_unavailable: IntOrString | None = None
    """Most pods that may be unavailable at once while updating or scaling: a number (e.g. 5) or a
    percentage of replicas (e.g. 10%; rounded up, or down when maxSurge is above 0). Default 20%."""
    max_surge: IntOrString | None = None
    """Most pods that may be created above replicas while updating or replacing podsToDelete: a number
    (e.g. 5) or a percentage of replicas (e.g. 10%, rounded up). Default 0."""
    paused: bool | None = None
    """Stop updating pods (scaling goes on) until set back to false. Default false."""
    priority_strategy: UpdatePriorityStrategy | None = None
    """Which pods to update first: by label value order, or by the weights of label selectors."""
    scatter_strategy: list[UpdateScatterTerm] | None = None
    """Labels whose pods are spread over the whole update instead of being updated in one batch. Applied
    after priorityStrategy; using only one of the two, with a single term, keeps the order easy to
    follow."""
    in_place_update_strategy: InPlaceUpdateStrategy | None = None
    """Settings of in-place updates (type InPlaceIfPossible or InPlaceOnly)."""


class CloneSetSpec(KruiseModel):
    replicas: Int32 | None = None
    """Desired number of pods created from template. Default 1."""
    selector: LabelSelector | None = Field(default=None, json_schema_extra=CRD_REQUIRED)
    """Label query over the pods this CloneSet owns; must match the template's labels and cannot be
    changed. See https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"""
    template: PodTemplate
    """The pod template (a core PodTemplateSpec) every pod is created from."""
    volume_claim_templates: list[ClaimTemplate] | None = None
    """PersistentVolumeClaims created for every pod, one per template (referenced by name from the pod
    template's volumes). A pod's claims are deleted together with the pod."""
    scale_strategy: CloneSetScaleStrategy = Field(default_factory=CloneSetScaleStrategy)
    """How pods are created and deleted when scaling, and which pods to delete."""
    update_strategy: CloneSetUpdateStrategy = Field(default_factory=CloneSetUpdateStrategy)
    """How pods are updated when the template changes."""
    revision_history_limit: Int32 | None = None
    """How many old revisions (ControllerRevisions no pod uses) to keep. Default 10."""
    min_ready_seconds: Int32 | None = None
    """Seconds a new pod must be ready, with no container crashing, before it counts as available.
    Default 0."""
    lifecycle: Lifecycle | None = None
    """Hooks that hold pods after creation (preNormal), before deletion (preDelete) and around in-place
    updates (inPlaceUpdate)."""
    progress_deadline_seconds: Int32 | None = None
    """Seconds the CloneSet may take to become available (or paused by its partition) after a change;
    past it, its Progressing condition turns False with reason ProgressDeadlineExceeded. Time spent
    paused does not count. Unset: progress is not tracked."""


class CloneSetStatus(KruiseModel):
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    replicas: Int32 | None = None
    """Number of pods the CloneSet owns."""
    ready_replicas: Int32 | None = None
    """Number of its pods that are ready."""
    available_replicas: Int32 | None = None
    """Number of its pods that have been ready for at least minReadySeconds."""
    updated_replicas: Int32 | None = None
    """Number of its pods at updateRevision."""
    updated_ready_replicas: Int32 | None = None
    """Number of its pods at updateRevision that are ready."""
    updated_available_replicas: Int32 | None = None
    """Number of its pods at updateRevision that have been ready for at least minReadySeconds (a pod
    whose resources are being resized in place is not available)."""
    expected_updated_replicas: Int32 | None = None
    """Number of pods that should be at updateRevision: replicas minus partition."""
    update_revision: str | None = None
    """Name of the ControllerRevision of the current template."""
    current_revision: str | None = None
    """Name of the ControllerRevision most pods ran before the update in progress."""
    collision_count: Int32 | None = None
    """Count of revision name hash collisions, mixed into the next revision's name to avoid another."""
    conditions: list[Condition] | None = None
    """Latest observations of the CloneSet's state (FailedScale, FailedUpdate, Progressing)."""
    label_selector: str | None = None
    """spec.selector as a string, for the scale subresource (HorizontalPodAutoscaler)."""


class CloneSet(KruiseObject):
    spec: CloneSetSpec
    """Desired state of the CloneSet."""
    status: CloneSetStatus | None = None
    """Observed state of the CloneSet, written by kruise-manager."""


class CloneSetScaleStrategyV1beta1(KruiseModel):
    """v1beta1: `enablePVCReuse` (default off) replaces `disablePVCReuse`; `excludePreparingDelete`
    replaces label apps.kruise.io/cloneset-scaling-exclude-preparing-delete."""

    pods_to_delete: list[str] | None = None
    """Names of pods to delete. The CloneSet deletes them (and creates replacements unless replicas is
    lowered at the same time); names of pods that no longer exist are dropped from the list."""
    max_unavailable: IntOrString | None = None
    """Most newly created pods that may be not yet available while scaling up: creation waits while more
    are. A number (e.g. 5) or a percentage of replicas (e.g. 10%). Unset: no limit."""
    enable_pvc_reuse: bool | None = Field(default=None, alias="enablePVCReuse")
    """Give a new pod the claims left behind by a deleted one instead of creating new ones. Default
    false."""
    exclude_preparing_delete: bool | None = None
    """Do not count pods in the PreparingDelete lifecycle state as replicas when scaling, so replacements
    are created for them. Default false."""


class InPlaceUpdateStrategyV1beta1(InPlaceUpdateStrategy):
    """v1beta1 holds the image pre-download settings v1alpha1 keeps in annotations."""

    image_pre_download_parallelism: IntOrString | None = None
    """How many nodes pull the new images at once before pods are updated (needs the
    PreDownloadImageForInPlaceUpdate feature gate)."""
    image_pre_download_timeout_seconds: Int32 | None = None
    """Seconds each node may spend pulling the new images in advance."""
    image_pre_download_min_updated_ready_pods: Int32 | None = None
    """Number of updated pods that must be ready before the new images are pulled in advance on the
    other nodes."""


class RollingUpdateCloneSetStrategy(KruiseModel):
    """v1beta1 `updateStrategy.rollingUpdate`: v1alpha1's updateStrategy fields plus `podUpdatePolicy`
    (v1alpha1's ReCreate / InPlaceIfPossible / InPlaceOnly type)."""

    partition: IntOrString | None = None
    """Pods to keep at old revisions, as a number (e.g. 5) or a percentage of replicas (e.g. 10%, rounded
    up): updating stops once replicas minus partition pods run the new template. Lower it step by step for
    a canary or batched release. Default 0 (update all)."""
    max_unavailable: IntOrString | None = None
    """Most pods that may be unavailable at once while updating or scaling: a number (e.g. 5) or a
    percentage of replicas (e.g. 10%; rounded up, or down when maxSurge is above 0). Default 20%."""
    max_surge: IntOrString | None = None
    """Most pods that may be created above replicas while updating or replacing podsToDelete: a number
    (e.g. 5) or a percentage of replicas (e.g. 10%, rounded up). Default 0."""
    pod_update_policy: str | None = None
    """How a pod gets the new template: ReCreate (delete and create, the default), InPlaceIfPossible
    (update images and other in-place changeable fields without recreating, recreate otherwise) or
    InPlaceOnly (in place only; other template changes are rejected)."""
    paused: bool | None = None
    """Stop updating pods (scaling goes on) until set back to false. Default false."""
    priority_strategy: UpdatePriorityStrategy | None = None
    """Which pods to update first: by label value order, or by the weights of label selectors."""
    scatter_strategy: list[UpdateScatterTerm] | None = None
    """Labels whose pods are spread over the whole update instead of being updated in one batch. Applied
    after priorityStrategy; using only one of the two, with a single term, keeps the order easy to
    follow."""
    in_place_update_strategy: InPlaceUpdateStrategyV1beta1 | None = None
    """Settings of in-place updates and of pulling their images in advance."""


class CloneSetUpdateStrategyV1beta1(KruiseModel):
    """v1beta1: `type` is RollingUpdate or OnDelete."""

    type: str | None = None
    """RollingUpdate (the default): the CloneSet updates its pods as rollingUpdate says; OnDelete: a pod
    gets the new template only when it is deleted and replaced."""
    rolling_update: RollingUpdateCloneSetStrategy | None = None
    """How pods are updated when type is RollingUpdate."""


class CloneSetSpecV1beta1(CloneSetSpec):
    scale_strategy: CloneSetScaleStrategyV1beta1 = Field(  # type: ignore[assignment]
        default_factory=CloneSetScaleStrategyV1beta1
    )
    """How pods are created and deleted when scaling, and which pods to delete."""
    update_strategy: CloneSetUpdateStrategyV1beta1 = Field(  # type: ignore[assignment]
        default_factory=CloneSetUpdateStrategyV1beta1
    )
    """How pods are updated when the template changes."""


class CloneSetV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    spec: CloneSetSpecV1beta1
    """Desired state of the CloneSet."""
    status: CloneSetStatus | None = None
    """Observed state of the CloneSet, written by kruise-manager."""


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
    description="CloneSet runs a set of interchangeable (stateless) pods from one template, with in-place "
    "update, partitioned and surging rollouts, selective pod deletion and lifecycle hooks.",
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
