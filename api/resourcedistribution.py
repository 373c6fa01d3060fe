"""ResourceDistribution (apps.kruise.io v1alpha1/v1beta1, cluster-scoped): copy a Secret/ConfigMap into
namespaces.

v1beta1 (upstream master's storage version) renames `targets.namespaceLabelSelector` to
`targets.namespaceSelector` and a condition's `failedNamespace` to `failedNamespaces`; validation is
written against v1alpha1 and `kruise.api.conversion.resourcedistribution` maps between the two.

Validation mirrors upstream's webhook except its last step, a dry-run create of the resource, which
needs the apiserver and therefore belongs to the webhook layer.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field

from kruise.api.common import (
    DistributedDict,
    Int32,
    Int64,
    KruiseModel,
    KruiseObject,
    LabelSelector,
    Time,
)
from kruise.api.crdgen import CRDInfo, CRDVersion, PrinterColumn
from kruise.api.objects import meta_of
from kruise.api.validation import (
    ErrorType,
    FieldError,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    invalid,
    validate_label_selector,
)

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "ResourceDistribution"

SUPPORTED_KINDS = ("Secret", "ConfigMap")
"""Core-group kinds only (GroupKind {"" Secret} and {"" ConfigMap})."""
ALWAYS_EXCLUDED_NAMESPACES = ("kube-system", "kube-public")

CONDITION_TYPES = (
    "ConflictOccurred",
    "NamespaceNotExists",
    "GetResourceFailed",
    "CreateResourceFailed",
    "UpdateResourceFailed",
    "DeleteResourceFailed",
)


class TargetNamespace(KruiseModel):
    name: str | None = None
    """Name of the namespace."""


class TargetNamespaces(KruiseModel):
    items: list[TargetNamespace] | None = Field(default=None, alias="list")
    """The namespaces, by name."""


class _TargetsCommon(KruiseModel):
    all_namespaces: bool | None = None
    """Distribute to every namespace except kube-system, kube-public and excludedNamespaces. Default
    false."""
    excluded_namespaces: TargetNamespaces | None = None
    """Namespaces never to distribute to, whatever else matches them."""
    included_namespaces: TargetNamespaces | None = None
    """Namespaces to distribute to by name, in addition to those the selector matches."""


class ResourceDistributionTargets(_TargetsCommon):
    namespace_label_selector: LabelSelector | None = None
    """Distribute to the namespaces whose labels match this query, in addition to includedNamespaces."""


class ResourceDistributionSpec(KruiseModel):
    # the Secret or ConfigMap to distribute (a RawExtension upstream, kept as written)
    resource: DistributedDict
    """The Secret or ConfigMap to copy, written in full (apiVersion, kind, metadata.name and its data);
    each copy is made in its target namespace."""
    targets: ResourceDistributionTargets
    """The namespaces to copy the resource into. A copy is made in a namespace that matches any target and
    no exclusion."""


class _ConditionCommon(KruiseModel):
    type: str
    """What went wrong: ConflictOccurred, NamespaceNotExists, GetResourceFailed, CreateResourceFailed,
    UpdateResourceFailed or DeleteResourceFailed."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    last_transition_time: Time | None = None
    """When the status last changed from one value to another."""
    reason: str | None = None
    """Why the condition last changed, for humans."""


class ResourceDistributionCondition(_ConditionCommon):
    failed_namespaces: list[str] | None = Field(default=None, alias="failedNamespace")
    """The namespaces where the problem occurred."""


class ResourceDistributionStatus(KruiseModel):
    desired: Int32 | None = None
    """Number of target namespaces that should hold a copy."""
    succeeded: Int32 | None = None
    """Number of target namespaces whose copy is up to date."""
    failed: Int32 | None = None
    """Number of target namespaces whose copy could not be created or updated."""
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    conditions: list[ResourceDistributionCondition] | None = None
    """Problems met while distributing, one condition per kind of failure."""


class ResourceDistribution(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["ResourceDistribution"] | None = None
    spec: ResourceDistributionSpec
    """Desired state of the ResourceDistribution."""
    status: ResourceDistributionStatus | None = None
    """Observed state of the ResourceDistribution, written by kruise-manager."""


class ResourceDistributionTargetsV1beta1(_TargetsCommon):
    namespace_selector: LabelSelector | None = None
    """Distribute to the namespaces whose labels match this query, in addition to includedNamespaces."""


class ResourceDistributionSpecV1beta1(KruiseModel):
    resource: DistributedDict
    """The Secret or ConfigMap to copy, written in full (apiVersion, kind, metadata.name and its data);
    each copy is made in its target namespace."""
    targets: ResourceDistributionTargetsV1beta1
    """The namespaces to copy the resource into. A copy is made in a namespace that matches any target and
    no exclusion."""


class ResourceDistributionConditionV1beta1(_ConditionCommon):
    failed_namespaces: list[str] | None = None
    """The namespaces where the problem occurred."""


class ResourceDistributionStatusV1beta1(KruiseModel):
    desired: Int32 | None = None
    """Number of target namespaces that should hold a copy."""
    succeeded: Int32 | None = None
    """Number of target namespaces whose copy is up to date."""
    failed: Int32 | None = None
    """Number of target namespaces whose copy could not be created or updated."""
    observed_generation: Int64 | None = None
    """The metadata.generation the controller last acted on."""
    conditions: list[ResourceDistributionConditionV1beta1] | None = None
    """Problems met while distributing, one condition per kind of failure."""


class ResourceDistributionV1beta1(KruiseObject):
    """The v1beta1 (upstream's storage) form; controllers read v1alpha1, `/convert` maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["ResourceDistribution"] | None = None
    spec: ResourceDistributionSpecV1beta1
    """Desired state of the ResourceDistribution."""
    status: ResourceDistributionStatusV1beta1 | None = None
    """Observed state of the ResourceDistribution, written by kruise-manager."""


_COLUMNS = (
    PrinterColumn(
        "TOTAL",
        "integer",
        ".status.desired",
        description="The desired number of desired distribution and syncs.",
    ),
    PrinterColumn(
        "SUCCEED",
        "integer",
        ".status.succeeded",
        description="The number of successful distribution and syncs.",
    ),
    PrinterColumn(
        "FAILED", "integer", ".status.failed", description="The number of failed distributions and syncs."
    ),
)


CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="resourcedistributions",
    description="ResourceDistribution copies one Secret or ConfigMap into many namespaces and keeps the "
    "copies in sync with it, including namespaces created later.",
    scope="Cluster",
    short_names=("distributor",),
    versions=(
        CRDVersion(VERSION, ResourceDistribution, storage=True, printer_columns=_COLUMNS),
        CRDVersion(
            "v1beta1",
            ResourceDistributionV1beta1,
            storage=False,
            printer_columns=_COLUMNS,
        ),
    ),
    conversion_webhook=True,
)


def _names(namespaces: TargetNamespaces | None) -> list[str]:
    return [ns.name or "" for ns in ((namespaces.items if namespaces else None) or [])]


def _resource_problem(resource: dict[str, Any], path: str) -> FieldError | None:
    """DeserializeResource: an object with apiVersion and kind (unstructured decoding rules)."""
    if not resource:
        return invalid(path, None, "empty resource is not allowed")
    raw = json.dumps(resource, separators=(",", ":"))
    if not resource.get("kind"):
        detail = f"Object 'Kind' is missing in '{raw}'"
    elif "apiVersion" not in resource:
        detail = f"Object 'apiVersion' is missing in '{raw}'"
    else:
        return None
    return FieldError(
        ErrorType.Internal,
        path,
        detail=f"failed to deserialize resource, please check your spec.resource, err {detail}",
    )


def _group_kind(resource: dict[str, Any]) -> tuple[str, str]:
    api_version = str(resource.get("apiVersion") or "")
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    return group, str(resource.get("kind") or "")


def _name_of(resource: dict[str, Any]) -> str:
    return str(meta_of(resource).get("name") or "")


def validate_resource(resource: dict[str, Any], old: dict[str, Any] | None, path: str) -> list[FieldError]:
    group, kind = _group_kind(resource)
    if group != "" or kind not in SUPPORTED_KINDS:
        return [
            invalid(
                path, resource, "unknown or unsupported resource GroupKind, only support [Secret ConfigMap]"
            )
        ]
    if old is not None:
        same = resource.get("apiVersion") == old.get("apiVersion") and kind == old.get("kind")
        if not same or _name_of(resource) != _name_of(old):
            return [invalid(path, None, "resource apiVersion, kind, and name are immutable")]
    return []


def validate_targets(targets: ResourceDistributionTargets, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    included = _names(targets.included_namespaces)
    for name in included:
        for msg in dns1123_label_errors(name):
            errs.append(invalid(f"{path}.includedNamespaces", _dump(targets.included_namespaces), msg))
    conflicted: list[str] = []
    for name in _names(targets.excluded_namespaces):
        for msg in dns1123_label_errors(name):
            errs.append(invalid(f"{path}.excludedNamespaces", _dump(targets.excluded_namespaces), msg))
        if name in included:
            conflicted.append(name)
    if conflicted:
        errs.append(
            invalid(
                path,
                _dump(targets),
                f"ambiguous targets because namespace [{' '.join(conflicted)}] "
                "is in both IncludedNamespaces.List and ExcludedNamespaces.List",
            )
        )
    selector_errs = validate_label_selector(
        targets.namespace_label_selector, f"{path}.namespaceLabelSelector"
    )
    if selector_errs:
        errs.append(
            invalid(
                f"{path}.namespaceLabelSelector",
                _dump(targets.namespace_label_selector),
                f"labelSelectorAsSelector error: {selector_errs[0].body()}",
            )
        )
    return errs


def _dump(model: KruiseModel | None) -> dict[str, Any]:
    return model.to_dict() if model is not None else {}


def validate(obj: ResourceDistribution, old: ResourceDistribution | None = None) -> list[FieldError]:
    """validateResourceDistribution for CREATE (old None) and UPDATE, minus the dry-run create."""
    errs: list[FieldError] = []
    name = obj.metadata.name or obj.metadata.generate_name or ""
    name_path = "metadata.name" if obj.metadata.name else "metadata.generateName"
    if not name:
        errs.append(
            FieldError(ErrorType.Required, "metadata.name", detail="name or generateName is required")
        )
    else:
        errs.extend(invalid(name_path, name, m) for m in dns1123_subdomain_errors(name))
    problem = _resource_problem(obj.spec.resource, "spec")
    if problem:
        return [*errs, problem]
    old_resource = None
    if old is not None:
        old_problem = _resource_problem(old.spec.resource, "spec")
        if old_problem:
            errs.append(old_problem)
        else:
            old_resource = old.spec.resource
    errs.extend(validate_resource(obj.spec.resource, old_resource, "spec.resource"))
    errs.extend(validate_targets(obj.spec.targets, "spec.targets"))
    return errs


def target_namespace_excluded(name: str, targets: ResourceDistributionTargets) -> bool:
    """kube-system/kube-public are never targets, nor are explicitly excluded namespaces."""
    return name in ALWAYS_EXCLUDED_NAMESPACES or name in _names(targets.excluded_namespaces)
