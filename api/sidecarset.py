"""SidecarSet (apps.kruise.io/v1alpha1, cluster-scoped): sidecar containers injected into matching pods
and upgraded in place, independently of the workloads that own the pods.

Validation needs the other SidecarSets (name conflicts) and, for namespace selectors, namespace
labels; the webhook passes those in, so the rules themselves stay pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import ConfigDict, Field

from kruise.api.common import (
    Int32,
    Int64,
    IntOrString,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    LocalObjectReference,
    Schemaless,
    selector_matches,
)
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn, age_column
from kruise.api.podtemplate_defaults import default_container, default_volumes
from kruise.api.podtemplate_validation import validate_pod_spec
from kruise.api.sidecarset_resources import (
    DEFAULT_NAME_REGEX,
    ResourcesPolicy,
    init_container_policy_errors,
    resources_policy_errors,
)
from kruise.api.validation import (
    FieldError,
    int_or_percent_errors,
    invalid,
    qualified_name_errors,
    required,
    validate_label_selector,
)
from kruise.api.workload_common import (
    UpdatePriorityStrategy,
    UpdateScatterTerm,
    validate_priority_and_scatter,
)

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "SidecarSet"

INJECT_BEFORE_APP = "BeforeAppContainer"
INJECT_AFTER_APP = "AfterAppContainer"
SHARE_VOLUME_ENABLED = "enabled"
SHARE_VOLUME_DISABLED = "disabled"
UPGRADE_COLD = "ColdUpgrade"
UPGRADE_HOT = "HotUpgrade"
REVISION_POLICY_ALWAYS = "Always"
REVISION_POLICY_PARTIAL = "Partial"
STRATEGY_NOT_UPDATE = "NotUpdate"
STRATEGY_ROLLING_UPDATE = "RollingUpdate"
PATCH_RETAIN = "Retain"
PATCH_OVERWRITE = "Overwrite"
PATCH_MERGE_JSON = "MergePatchJson"
NAME_MAX_LEN = 63
_NAME = re.compile(r"^[a-zA-Z0-9\-]+$")
DOWNWARD_API_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name")


class ObjectFieldSelector(KruiseModel):
    api_version: str | None = None
    """Version of the pod schema fieldPath is written in: v1."""
    field_path: str
    """The pod field to read: metadata.labels['<key>'] or metadata.annotations['<key>']."""


def split_subscripted_path(field_path: str) -> tuple[str, str] | None:
    """`fieldpath.SplitMaybeSubscriptedPath`: `metadata.labels['k']` -> (`metadata.labels`, `k`)."""
    if not field_path.endswith("']"):
        return None
    head, sep, key = field_path[:-2].partition("['")
    return (head, key) if sep and head else None


def field_ref_errors(ref: ObjectFieldSelector, path: str) -> list[FieldError]:
    """Upstream `validateObjectFieldSelector` for `transferEnv[].sourceContainerNameFrom.fieldRef`.

    Only a subscripted `metadata.labels['k']` / `metadata.annotations['k']` passes: that is all injection can
    read a container name from, and upstream's conversion step refuses a bare `metadata.name` or
    `metadata.labels` ("field label not supported") before the list of supported paths is consulted.
    The key must be a qualified name (an annotation key compared lower-cased)."""
    if not ref.api_version:
        return [required(f"{path}.apiVersion")]
    if not ref.field_path:
        return [required(f"{path}.fieldPath")]
    if ref.api_version != "v1":
        reason = f"unsupported pod version: {ref.api_version}"
        return [invalid(f"{path}.fieldPath", ref.field_path, f"error converting fieldPath: {reason}")]
    split = split_subscripted_path(ref.field_path)
    if split is None:
        reason = f"field label not supported: {ref.field_path}"
        return [invalid(f"{path}.fieldPath", ref.field_path, f"error converting fieldPath: {reason}")]
    source, key = split
    if source not in ("metadata.annotations", "metadata.labels"):
        reason = f"field path not supported: {source}"
        return [invalid(f"{path}.fieldPath", ref.field_path, f"error converting fieldPath: {reason}")]
    subject = key.lower() if source == "metadata.annotations" else key
    return [invalid(path, key, msg) for msg in qualified_name_errors(subject)]


class SourceContainerNameSource(KruiseModel):
    field_ref: ObjectFieldSelector | None = None
    """A pod label or annotation whose value is the name of the container to copy env from."""


class TransferEnvVar(KruiseModel):
    source_container_name: str | None = None
    """Name of the pod's container to copy env from."""
    source_container_name_from: SourceContainerNameSource | None = None
    """Where to read that container's name from when it differs between pods (instead of
    sourceContainerName)."""
    env_name: str | None = None
    """Name of one env variable of the source container to copy into the sidecar."""
    env_names: list[str] | None = None
    """Names of env variables of the source container to copy into the sidecar."""


class SidecarContainerUpgradeStrategy(KruiseModel):
    upgrade_type: str | None = None
    """How a changed sidecar is rolled out to injected pods: ColdUpgrade (the default; restart the
    container with the new image, for stateless sidecars) or HotUpgrade (start the new version in a
    second container beside the old one and swap, for proxies such as envoy that must not stop)."""
    hot_upgrade_empty_image: str | None = None
    """For HotUpgrade: an image that behaves like the sidecar (same command, args and probes) but does no
    work, run in the idle one of the two containers."""


class ShareVolumePolicy(KruiseModel):
    type: str | None = None
    """enabled or disabled (the default)."""


class SidecarContainer(KruiseModel):
    """A core Container (kept as-is: unknown container fields survive) plus Kruise's injection knobs."""

    model_config = ConfigDict(extra="allow")

    name: str = ""
    """Name of the container, unique in the pod; the other core Container fields (command, env,
    resources, volumeMounts ...) are accepted as in a pod."""
    image: str | None = None
    """Container image to inject."""
    pod_inject_policy: str | None = None
    """Where the container goes among the pod's containers: BeforeAppContainer (the default) or
    AfterAppContainer. Ignored for initContainers."""
    upgrade_strategy: SidecarContainerUpgradeStrategy = Field(default_factory=SidecarContainerUpgradeStrategy)
    """How the container is upgraded in pods it is already injected into."""
    share_volume_policy: ShareVolumePolicy = Field(default_factory=ShareVolumePolicy)
    """When enabled, the container also gets the volumeMounts of the pod's own containers."""
    # a pointer upstream, so that SidecarSets not using it keep their hash
    share_volume_device_policy: ShareVolumePolicy | None = None
    """When enabled, the container also gets the volumeDevices of the pod's own containers."""
    transfer_env: list[TransferEnvVar] | None = None
    """Env variables to copy from the pod's own containers into this one."""
    resources_policy: ResourcesPolicy | None = None
    """Compute the container's resources from the pod's own containers when the pod is created, instead
    of setting resources (the two cannot be combined)."""

    def container_dict(self) -> dict[str, Any]:
        """The plain core Container part, as injected into pods."""
        data = self.to_dict()
        for key in (
            "podInjectPolicy",
            "upgradeStrategy",
            "shareVolumePolicy",
            "shareVolumeDevicePolicy",
            "transferEnv",
            "resourcesPolicy",
        ):
            data.pop(key, None)
        return data


class SidecarSetInjectRevision(KruiseModel):
    custom_version: str | None = None
    """Inject the revision whose SidecarSet carried this apps.kruise.io/sidecarset-custom-version label
    (v1alpha1) or spec.customVersion (v1beta1)."""
    revision_name: str | None = None
    """Inject this ControllerRevision of the SidecarSet (its name)."""
    policy: str | None = None
    """Always (the default): new pods always get the chosen revision, except pods the update selector
    matches; Partial: new pods get the chosen or the latest revision according to updateStrategy, the
    latest with a probability of 1 - partition (a percentage; otherwise 0%)."""


class SidecarSetInjectionStrategy(KruiseModel):
    paused: bool | None = None
    """Stop injecting into new pods; containers already injected keep running and being updated.
    Default false."""
    revision: SidecarSetInjectRevision | None = None
    """Inject a chosen earlier revision of the SidecarSet into new pods instead of the latest, for a safe
    rollout."""


class SidecarSetUpdateStrategy(KruiseModel):
    type: str | None = None
    """RollingUpdate (the default): pods already injected are updated to the latest sidecars; NotUpdate:
    only new pods get them."""
    paused: bool | None = None
    """Stop updating injected pods until set back to false. Default false."""
    selector: LabelSelector | None = None
    """Update only the injected pods whose labels match; new pods it matches are also injected with the
    latest revision when injectionStrategy.revision is set."""
    partition: IntOrString | None = None
    """Injected pods to keep at old revisions, as a number (e.g. 5) or a percentage of matched pods
    (e.g. 10%): updating stops once matched pods minus partition run the latest sidecars. Default 0."""
    max_unavailable: IntOrString | None = None
    """Most injected pods that may be unavailable at once while updating: a number (e.g. 5) or a
    percentage of matched pods (e.g. 10%, rounded up). Cannot be 0. Default 1."""
    priority_strategy: UpdatePriorityStrategy | None = None
    """Which pods to update first: by label value order, or by the weights of label selectors."""
    scatter_strategy: list[UpdateScatterTerm] | None = None
    """Labels whose pods are spread over the whole update instead of being updated in one batch. Applied
    after priorityStrategy; using only one of the two, with a single term, keeps the order easy to
    follow."""


class SidecarSetPatchPodMetadata(KruiseModel):
    annotations: dict[str, str] | None = None
    """Annotations to set on matched pods."""
    patch_policy: str | None = None
    """What happens when a pod already has one of the annotations: Retain (the default; keep the pod's
    value, only applied at injection), Overwrite (replace it, also on in-place updates) or MergePatchJson
    (merge JSON object values, e.g. {"a": 1} and {"b": 2} give {"a": 1, "b": 2})."""


class _SidecarSetSpecCommon(KruiseModel):
    selector: LabelSelector | None = None
    """Label query over the pods to inject the sidecars into."""
    namespace_selector: LabelSelector | None = None
    """Label query over the namespaces whose pods are injected. Unset: every namespace."""
    init_containers: list[SidecarContainer] | None = None
    """Init containers to inject, in ascending name order; only into pods being created."""
    containers: list[SidecarContainer] | None = None
    """Sidecar containers to inject into matched pods (and update in place in pods already injected)."""
    volumes: list[Schemaless] | None = None
    """Volumes (core Volume objects) the sidecar containers mount, added to matched pods."""
    update_strategy: SidecarSetUpdateStrategy = Field(default_factory=SidecarSetUpdateStrategy)
    """How pods already injected are updated when the sidecars change."""
    injection_strategy: SidecarSetInjectionStrategy = Field(default_factory=SidecarSetInjectionStrategy)
    """How sidecars are injected into new pods."""
    image_pull_secrets: list[LocalObjectReference] | None = None
    """Secrets to pull the sidecar images with, added to matched pods."""
    revision_history_limit: Int32 | None = None
    """How many old revisions (ControllerRevisions) of the SidecarSet to keep. Default 10."""
    patch_pod_metadata: list[SidecarSetPatchPodMetadata] | None = None
    """Pod metadata (annotations) to set at injection and on in-place updates."""


class SidecarSetSpec(_SidecarSetSpecCommon):
    namespace: str | None = None
    """Inject only pods of this namespace. Unset: every namespace."""


class SidecarSetSpecV1beta1(_SidecarSetSpecCommon):
    """v1beta1: no `namespace` (a namespaceSelector says it), `customVersion` instead of the label."""

    custom_version: str | None = None
    """A name of your own for the current sidecars, recorded on their revision so that
    injectionStrategy.revision.customVersion can pick it later."""


class SidecarSetStatus(KruiseModel):
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    matched_pods: Int32 | None = None
    """Number of pods the selector matches that were created after the SidecarSet."""
    updated_pods: Int32 | None = None
    """Number of matched pods running the latest sidecars."""
    ready_pods: Int32 | None = None
    """Number of matched pods that are ready."""
    updated_ready_pods: Int32 | None = None
    """Number of matched pods running the latest sidecars that are ready."""
    latest_revision: str | None = None
    """Name of the ControllerRevision of the latest sidecars."""
    collision_count: Int32 | None = None
    """Count of revision name hash collisions, mixed into the next revision's name to avoid another."""


class SidecarSet(KruiseObject):
    spec: SidecarSetSpec = Field(default_factory=SidecarSetSpec)
    """Desired state of the SidecarSet."""
    status: SidecarSetStatus | None = None
    """Observed state of the SidecarSet, written by kruise-manager."""


class SidecarSetV1beta1(KruiseObject):
    """The v1beta1 (storage) form; controllers read v1alpha1, the conversion webhook maps between."""

    spec: SidecarSetSpecV1beta1 = Field(default_factory=SidecarSetSpecV1beta1)
    """Desired state of the SidecarSet."""
    status: SidecarSetStatus | None = None
    """Observed state of the SidecarSet, written by kruise-manager."""


_COLUMNS = (
    PrinterColumn("MATCHED", "integer", ".status.matchedPods"),
    PrinterColumn("UPDATED", "integer", ".status.updatedPods"),
    PrinterColumn("READY", "integer", ".status.readyPods"),
    age_column(),
)


CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="sidecarsets",
    scope="Cluster",
    description="SidecarSet injects sidecar containers (and their volumes) into the pods its selectors "
    "match when they are created, and updates those containers in the running pods when it changes.",
    versions=(
        CRDVersion(VERSION, SidecarSet, storage=True, printer_columns=_COLUMNS),
        CRDVersion("v1beta1", SidecarSetV1beta1, storage=False, printer_columns=_COLUMNS),
    ),
    conversion_webhook=True,
)


# --- defaults ---


def _default_sidecar_container(container: SidecarContainer, inject_policy: str) -> None:
    if not container.pod_inject_policy:
        container.pod_inject_policy = inject_policy
    if not container.upgrade_strategy.upgrade_type:
        container.upgrade_strategy.upgrade_type = UPGRADE_COLD
    container.upgrade_strategy = container.upgrade_strategy
    if not container.share_volume_policy.type:
        container.share_volume_policy.type = SHARE_VOLUME_DISABLED
    container.share_volume_policy = container.share_volume_policy
    core = container.container_dict()
    default_container(core, app_container=False)
    for key, value in core.items():
        if key not in ("name", "image"):
            setattr(container, key, value)
    for env in container.transfer_env or []:
        ref = env.source_container_name_from.field_ref if env.source_container_name_from else None
        if ref is not None and not ref.api_version:
            ref.api_version = "v1"
    policy = container.resources_policy
    if policy is not None and policy.target_containers_name_regex is None:
        # the CRD schema's default (`+kubebuilder:default=".*"`); an explicit "" stays and is refused
        policy.target_containers_name_regex = DEFAULT_NAME_REGEX
        container.resources_policy = policy


def set_defaults(obj: SidecarSet) -> None:
    """SetDefaultsSidecarSet."""
    spec = obj.spec
    strategy = spec.update_strategy
    if not strategy.type:
        strategy.type = STRATEGY_ROLLING_UPDATE
    if strategy.max_unavailable is None:
        strategy.max_unavailable = 1
    if strategy.partition is None:
        strategy.partition = 0
    spec.update_strategy = strategy
    for container in spec.init_containers or []:
        _default_sidecar_container(container, INJECT_AFTER_APP)
    for container in spec.containers or []:
        _default_sidecar_container(container, INJECT_BEFORE_APP)
    default_volumes(spec.volumes)
    if spec.revision_history_limit is None:
        spec.revision_history_limit = 10
    for patch in spec.patch_pod_metadata or []:
        if not patch.patch_policy:
            patch.patch_policy = PATCH_RETAIN
    revision = spec.injection_strategy.revision
    if revision is not None and not revision.policy:
        revision.policy = REVISION_POLICY_ALWAYS
    spec.injection_strategy = spec.injection_strategy


# --- validation ---


def _selector_errors(selector: LabelSelector, path: str) -> list[FieldError]:
    errs = validate_label_selector(selector, path)
    if selector.is_empty():
        errs.append(invalid(path, selector.to_dict(), "empty selector is not valid for sidecarset."))
    return errs


def _name_errors(name: str | None) -> list[FieldError]:
    if not name:
        return [required("metadata.name", "name or generateName is required")]
    errs = []
    if not _NAME.match(name):
        errs.append(
            invalid(
                "metadata.name",
                name,
                "sidecarset name must consist of alphanumeric characters or '-' (e.g. 'example-com', "
                "regex used for validation is '^[a-zA-Z0-9\\-]+$')",
            )
        )
    if len(name) > NAME_MAX_LEN:
        errs.append(invalid("metadata.name", name, f"must be no more than {NAME_MAX_LEN} characters"))
    return errs


def _update_strategy_errors(strategy: SidecarSetUpdateStrategy, path: str) -> list[FieldError]:
    if strategy.type != STRATEGY_ROLLING_UPDATE:
        return []
    errs: list[FieldError] = []
    partition_set = isinstance(strategy.partition, str) or bool(strategy.partition)
    if partition_set and strategy.selector is not None:
        errs.append(
            invalid("updateStrategy", strategy.to_dict(), "Partition and Selector cannot be used together")
        )
    if strategy.selector is not None:
        errs.extend(_selector_errors(strategy.selector, f"{path}.selector"))
    errs.extend(int_or_percent_errors(strategy.partition, f"{path}.partition"))
    errs.extend(int_or_percent_errors(strategy.max_unavailable, f"{path}.maxUnavailable"))
    errs.extend(validate_priority_and_scatter(strategy.priority_strategy, strategy.scatter_strategy, path))
    return errs


def _containers_errors(spec: SidecarSetSpec) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, container in enumerate(spec.init_containers or []):
        if container.resources_policy is not None:
            errs.extend(
                init_container_policy_errors(
                    container.resources_policy, container.container_dict(), f"spec[{i}].resourcesPolicy"
                )
            )
    for i, container in enumerate(spec.containers or []):
        if container.pod_inject_policy not in (INJECT_BEFORE_APP, INJECT_AFTER_APP):
            errs.append(
                invalid(
                    "spec.container.podInjectPolicy",
                    container.pod_inject_policy or "",
                    "unsupported pod inject policy",
                )
            )
        if container.share_volume_policy.type not in (SHARE_VOLUME_ENABLED, SHARE_VOLUME_DISABLED):
            errs.append(
                invalid(
                    "spec.container.shareVolumePolicy",
                    container.share_volume_policy.to_dict(),
                    "unsupported share volume policy",
                )
            )
        for env in container.transfer_env or []:
            ref = env.source_container_name_from.field_ref if env.source_container_name_from else None
            if ref is not None:
                errs.extend(field_ref_errors(ref, f"[{i}].transferEnv.fieldRef"))
        if container.resources_policy is not None:
            errs.extend(
                resources_policy_errors(
                    container.resources_policy,
                    container.container_dict().get("resources"),
                    f"spec[{i}].resourcesPolicy",
                )
            )
    containers = [c.container_dict() for c in spec.containers or []] or [
        {"name": "test", "image": "busybox", "imagePullPolicy": "IfNotPresent"}
    ]
    fake_pod_spec = {
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "initContainers": [c.container_dict() for c in spec.init_containers or []],
        "containers": containers,
        "volumes": spec.volumes or [],
    }
    errs.extend(validate_pod_spec(fake_pod_spec, "spec"))
    return errs


def _patch_metadata_errors(spec: SidecarSetSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for patch in spec.patch_pod_metadata or []:
        if not patch.annotations:
            errs.append(required(path, "no annotations defined for SidecarSet"))
        else:
            for key in patch.annotations:
                errs.extend(
                    invalid("patchPodMetadata.annotations", key, m)
                    for m in qualified_name_errors(key.lower())
                )
        if not patch.patch_policy:
            errs.append(required(path, "no patchPolicy defined for patchPodMetadata"))
        for key in patch.annotations or {}:
            if key in seen:
                errs.append(required(path, f"patch annotation[{key}] already exist"))
            seen.add(key)
    return errs


def validate_spec(obj: SidecarSet) -> list[FieldError]:
    spec = obj.spec
    path = "spec"
    errs: list[FieldError] = []
    for container in spec.init_containers or []:
        native_sidecar = (container.model_extra or {}).get("restartPolicy") == "Always"
        if native_sidecar and spec.update_strategy.type == STRATEGY_ROLLING_UPDATE:
            errs.append(
                required(
                    f"{path}.updateStrategy", "The initContainer in-place upgrade is not currently supported."
                )
            )
    if spec.selector is None:
        errs.append(required(f"{path}.selector", "no selector defined for SidecarSet"))
    else:
        errs.extend(_selector_errors(spec.selector, f"{path}.selector"))
    if spec.namespace and spec.namespace_selector is not None:
        errs.append(
            required(
                f"{path}.namespace, namespaceSelector",
                "namespace and namespaceSelector are mutually exclusive",
            )
        )
    elif spec.namespace_selector is not None:
        errs.extend(_selector_errors(spec.namespace_selector, f"{path}.namespaceSelector"))
    revision = spec.injection_strategy.revision
    if revision is not None:
        if revision.revision_name is None and revision.custom_version is None:
            errs.append(
                invalid(
                    "revision",
                    revision.to_dict(),
                    "revisionName and customVersion cannot be empty simultaneously",
                )
            )
        if revision.policy not in (None, "", REVISION_POLICY_ALWAYS, REVISION_POLICY_PARTIAL):
            errs.append(
                invalid(
                    "revision.policy",
                    revision.to_dict(),
                    f"Invalid policy {revision.policy}, "
                    f"supported: [{REVISION_POLICY_ALWAYS}, {REVISION_POLICY_PARTIAL}]",
                )
            )
    errs.extend(_update_strategy_errors(spec.update_strategy, f"{path}.updateStrategy"))
    if not spec.init_containers and not spec.containers:
        errs.append(required("spec", "no initContainer or container defined for SidecarSet"))
    else:
        errs.extend(_containers_errors(spec))
    errs.extend(_patch_metadata_errors(spec, f"{path}.patchPodMetadata"))
    return errs


def container_conflict_errors(new: SidecarSet, old: SidecarSet) -> list[FieldError]:
    """On update: containers cannot be renamed away and their upgradeType is immutable."""
    errs: list[FieldError] = []
    old_types = {c.name: c.upgrade_strategy.upgrade_type or "" for c in old.spec.containers or []}
    for container in new.spec.containers or []:
        if container.name in old_types:
            previous = old_types[container.name]
            if previous and container.upgrade_strategy.upgrade_type != previous:
                errs.append(
                    invalid(
                        "spec.containers.upgradeStrategy.upgradeType",
                        container.name,
                        f"container {container.name} upgradeType is immutable",
                    )
                )
        else:
            errs.append(
                invalid("spec.containers.name", container.name, f"container {container.name} is not found")
            )
    return errs


def _values_of(selector: LabelSelector) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {k: [v] for k, v in (selector.match_labels or {}).items()}
    for req in selector.match_expressions or []:
        if req.operator == "In":
            values.setdefault(req.key, []).extend(req.values or [])
        elif req.operator == "Exists":
            values[req.key] = ["ALL"]
    return values


def _disjoint(first: LabelSelector, second: LabelSelector) -> bool:
    """util.isDisjoint: whether `second` certainly selects nothing `first` selects (one direction)."""
    known = _values_of(first)
    for key, value in (second.match_labels or {}).items():
        if key in known and "ALL" not in known[key] and value not in known[key]:
            return True
    for req in second.match_expressions or []:
        values = known.get(req.key)
        if req.operator == "In":
            if values is not None and "ALL" not in values and not set(values) & set(req.values or []):
                return True
        elif req.operator == "NotIn":
            if values is not None and set(values) <= set(req.values or []):
                return True
        elif req.operator == "Exists":
            if values is None:
                return True
        elif req.operator == "DoesNotExist" and values is not None:
            return True
    return False


def selectors_overlap(first: LabelSelector | None, second: LabelSelector | None) -> bool:
    first, second = first or LabelSelector(), second or LabelSelector()
    return not (_disjoint(first, second) or _disjoint(second, first))


NamespaceLabels = Callable[[str], dict[str, str] | None]


def _namespace_overlap(
    origin: SidecarSet, other: SidecarSet, namespace_labels: NamespaceLabels | None
) -> bool:
    """isSidecarSetNamespaceOverlapping; without `namespace_labels` any namespace matches a selector."""
    a, b = origin.spec, other.spec
    if a.namespace and b.namespace and a.namespace != b.namespace:
        return False
    both_selectors = a.namespace_selector is not None and b.namespace_selector is not None
    if both_selectors and not selectors_overlap(a.namespace_selector, b.namespace_selector):
        return False

    def in_selector(namespace: str, selector: LabelSelector | None) -> bool:
        if selector is None:
            return False
        if namespace_labels is None:
            return True
        return selector_matches(selector, namespace_labels(namespace) or {})

    if (
        a.namespace
        and b.namespace_selector is not None
        and not in_selector(a.namespace, b.namespace_selector)
    ):
        return False
    # upstream tests the other namespace against the *other* selector here (nil selects nothing); kept as is
    return not (
        b.namespace
        and a.namespace_selector is not None
        and not in_selector(b.namespace, b.namespace_selector)
    )


def conflict_errors(
    obj: SidecarSet, others: Iterable[SidecarSet], namespace_labels: NamespaceLabels | None = None
) -> list[FieldError]:
    """Names other SidecarSets selecting the same pods already use (containers, volumes, annotations)."""
    init_in_others: dict[str, str] = {}
    containers_in_others: dict[str, str] = {}
    volumes_in_others: dict[str, tuple[str, dict[str, Any]]] = {}
    annotations_in_others: dict[str, tuple[str, str]] = {}
    for other in others:
        if other.metadata.name == obj.metadata.name:
            continue
        if not (
            _namespace_overlap(obj, other, namespace_labels)
            and selectors_overlap(obj.spec.selector, other.spec.selector)
        ):
            continue
        name = other.metadata.name or ""
        for c in other.spec.init_containers or []:
            init_in_others[c.name] = name
        for c in other.spec.containers or []:
            containers_in_others[c.name] = name
        for v in other.spec.volumes or []:
            volumes_in_others[v.get("name", "")] = (name, v)
        for patch in other.spec.patch_pod_metadata or []:
            if patch.patch_policy == PATCH_RETAIN:
                continue
            for key in patch.annotations or {}:
                annotations_in_others[key] = (name, patch.patch_policy or "")
    errs: list[FieldError] = []
    for c in obj.spec.init_containers or []:
        if c.name in init_in_others:
            errs.append(
                invalid(
                    "spec.containers", c.name, f"container {c.name} already exist in {init_in_others[c.name]}"
                )
            )
    for c in obj.spec.containers or []:
        if c.name in containers_in_others:
            errs.append(
                invalid(
                    "spec.containers",
                    c.name,
                    f"container {c.name} already exist in {containers_in_others[c.name]}",
                )
            )
    for v in obj.spec.volumes or []:
        vname = v.get("name", "")
        if vname in volumes_in_others and volumes_in_others[vname][1] != v:
            errs.append(
                invalid(
                    "spec.volumes",
                    vname,
                    f"volume {vname} is in conflict with sidecarset {volumes_in_others[vname][0]}",
                )
            )
    for patch in obj.spec.patch_pod_metadata or []:
        if patch.patch_policy == PATCH_RETAIN:
            continue
        for key in patch.annotations or {}:
            if key not in annotations_in_others:
                continue
            other_name, other_policy = annotations_in_others[key]
            if PATCH_OVERWRITE in (patch.patch_policy, other_policy):
                errs.append(
                    invalid(
                        "spec.patchPodMetadata",
                        key,
                        f"annotation {key} is in conflict with sidecarset {other_name}",
                    )
                )
    return errs


def validate(
    obj: SidecarSet,
    old: SidecarSet | None = None,
    others: Iterable[SidecarSet] = (),
    namespace_labels: NamespaceLabels | None = None,
) -> list[FieldError]:
    """The validating webhook. Conflicts with `others` are only checked once the object itself is valid."""
    errs = _name_errors(obj.metadata.name) + validate_spec(obj)
    if old is not None:
        errs.extend(container_conflict_errors(obj, old))
    if errs:
        return errs
    return conflict_errors(obj, others, namespace_labels)
