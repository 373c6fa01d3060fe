"""Shared building blocks of every Kruise kind: the base model, int-or-string, metadata, selectors.

Models follow the apiserver's rules for custom resources: camelCase on the wire, unknown fields
pruned (except inside schemaless embedded Kubernetes types such as pod templates, which are kept
as plain dicts), and serialization that omits what the user never set so a round-trip keeps the
user's YAML shape.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any, Self

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from kruise.api import shapes


@dataclass(frozen=True)
class SchemaFormat:
    """Annotated marker: the OpenAPI `format` of an integer/string field (int32, int64, date-time)."""

    format: str


@dataclass(frozen=True)
class IntOrStringSchema:
    """Annotated marker: the field is a Kubernetes IntOrString (`x-kubernetes-int-or-string`)."""


@dataclass(frozen=True)
class PreserveUnknown:
    """Annotated marker: an embedded Kubernetes object the CRD keeps schemaless, like upstream."""


@dataclass(frozen=True)
class ListMapKeys:
    """Annotated marker: a list the apiserver merges by these keys (`x-kubernetes-list-type: map`)."""

    keys: tuple[str, ...]


Int32 = Annotated[int, SchemaFormat("int32")]
Int64 = Annotated[int, SchemaFormat("int64")]
Time = Annotated[str, SchemaFormat("date-time")]
IntOrString = Annotated[int | str, IntOrStringSchema()]
Schemaless = Annotated[dict[str, Any], PreserveUnknown()]
"""An embedded object (PodTemplateSpec, PersistentVolumeClaim, Container ...) kept as a dict."""

SHAPE_ERROR = "kruise_shape"
"""The pydantic error type of a shape mismatch inside a schemaless embedded object: its context holds
the path below the field (`at`), the offending value and the rule, which `pydantic_errors` renders as
one field error at the full path."""


def shaped(shape: shapes.Shape) -> AfterValidator:
    """A schemaless embedded object whose JSON types are checked (`kruise.api.shapes`): code that walks
    the dict can trust them, and a wrong type is refused naming its field, as upstream's decoder does."""

    def check(value: Any) -> Any:
        found = shapes.first_mismatch(value, shape)
        if found is not None:
            at, wrong, rule = found
            raise PydanticCustomError(SHAPE_ERROR, "{rule}", {"at": at, "value": wrong, "rule": rule})
        return shapes.without_nulls(value, shape)

    return AfterValidator(check)


PodTemplate = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.POD_TEMPLATE)]
"""A core PodTemplateSpec kept as a dict, its field types checked."""
ClaimTemplate = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.CLAIM_TEMPLATE)]
"""A core PersistentVolumeClaim template kept as a dict, its field types checked."""
ContainerDict = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.CONTAINER)]
TolerationDict = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.TOLERATION)]
NodeSelectorTermDict = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.NODE_SELECTOR_TERM)]
ProbeDict = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.PROBE)]
WorkloadSpecDict = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.WORKLOAD_SPEC)]
DistributedDict = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.DISTRIBUTED)]
PreferredTermDict = Annotated[dict[str, Any], PreserveUnknown(), shaped(shapes.PREFERRED_TERM)]


class KruiseModel(BaseModel):
    """Base of every API model: camelCase aliases, pruning of unknown fields, sparse output.

    A field's attribute docstring (the string literal right below it) is its user-facing description:
    pydantic reads it into the field's `description` and `kruise.api.crdgen` writes it into the CRD
    schema, where `kubectl explain` shows it. Notes for developers go in `#` comments instead."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        validate_assignment=False,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
    )

    def to_dict(self) -> dict[str, Any]:
        """The wire form: only fields that were set (by the user or by defaulting), none that are None."""
        return self.model_dump(by_alias=True, exclude_unset=True, exclude_none=True, mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        return cls.model_validate(data)


class ObjectMeta(KruiseModel):
    """metav1.ObjectMeta; fields not named here (managedFields, ...) are kept untouched."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    """Name of the object, unique in its namespace for its kind."""
    generate_name: str | None = None
    """Prefix the apiserver adds a random suffix to for a name, when name is empty."""
    namespace: str | None = None
    """Namespace of the object; empty for cluster-scoped kinds."""
    uid: str | None = None
    """Unique ID the apiserver gives the object when creating it; read-only."""
    resource_version: str | None = None
    """Opaque version the apiserver bumps on every change, used for optimistic concurrency and watches;
    read-only."""
    generation: int | None = None
    """Number the apiserver increments on every change to the desired state (spec); read-only."""
    creation_timestamp: str | None = None
    """When the object was created (RFC 3339, UTC); read-only."""
    deletion_timestamp: str | None = None
    """When deletion was asked for, set while finalizers still hold the object; read-only."""
    deletion_grace_period_seconds: int | None = None
    """Seconds the object was given to stop gracefully once deletion was asked for; read-only."""
    labels: dict[str, str] | None = None
    """Key/value pairs that selectors match objects by."""
    annotations: dict[str, str] | None = None
    """Key/value pairs for tools and controllers; not used for selection."""
    owner_references: list[dict[str, Any]] | None = None
    """The objects this one belongs to; it is garbage-collected when they are all gone."""
    finalizers: list[str] | None = None
    """Names of controllers that must clean up before the object is deleted."""


class LabelSelectorRequirement(KruiseModel):
    key: str
    """The label key the requirement is about."""
    operator: str
    """How the key's value is compared with `values`: In, NotIn, Exists or DoesNotExist."""
    values: list[str] | None = None
    """The values for In and NotIn (must not be empty for them); must be empty for Exists and
    DoesNotExist."""


class LabelSelector(KruiseModel):
    """metav1.LabelSelector. An empty selector selects everything; a missing one (None) selects nothing."""

    match_labels: dict[str, str] | None = None
    """Labels an object must carry with exactly these values. Each entry is the same as a
    matchExpressions term with operator In and a single value; all terms must hold."""
    match_expressions: list[LabelSelectorRequirement] | None = None
    """Requirements on label values, all of which must hold (together with matchLabels)."""

    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: dict[str, str] | None) -> bool:
        return selector_matches(self, labels)


def selector_matches(selector: LabelSelector | None, labels: dict[str, str] | None) -> bool:
    """Like metav1.LabelSelectorAsSelector(...).Matches: nil matches nothing, empty matches all.

    Raises ValueError for an operator the apiserver would not accept, as upstream returns an error.
    """
    if selector is None:
        return False
    labels = labels or {}
    for key, value in (selector.match_labels or {}).items():
        if labels.get(key) != value:
            return False
    for req in selector.match_expressions or []:
        values = req.values or []
        present = req.key in labels
        if req.operator == "In":
            if not present or labels[req.key] not in values:
                return False
        elif req.operator == "NotIn":
            if present and labels[req.key] in values:
                return False
        elif req.operator == "Exists":
            if not present:
                return False
        elif req.operator == "DoesNotExist":
            if present:
                return False
        else:
            raise ValueError(f'"{req.operator}" is not a valid label selector operator')
    return True


def selector_to_string(selector: LabelSelector | None) -> str:
    """metav1.FormatLabelSelector-like string, as CloneSet/ASTS publish in status.labelSelector."""
    if selector is None:
        return "<none>"
    parts: list[str] = []
    for key in sorted(selector.match_labels or {}):
        parts.append(f"{key}={(selector.match_labels or {})[key]}")
    for req in selector.match_expressions or []:
        values = ",".join(sorted(req.values or []))
        if req.operator == "In":
            parts.append(f"{req.key} in ({values})")
        elif req.operator == "NotIn":
            parts.append(f"{req.key} notin ({values})")
        elif req.operator == "Exists":
            parts.append(req.key)
        elif req.operator == "DoesNotExist":
            parts.append(f"!{req.key}")
    return ",".join(sorted(parts)) if parts else ""


class Condition(KruiseModel):
    """The condition shape shared by Kruise workload statuses (type/status/reason/message/times)."""

    type: str
    """The kind of condition, e.g. a CloneSet's FailedScale, FailedUpdate or Progressing."""
    status: str
    """Whether the condition holds: True, False or Unknown."""
    last_transition_time: Time | None = None
    """When the status last changed from one value to another."""
    last_update_time: Time | None = None
    """When the condition was last written."""
    reason: str | None = None
    """A CamelCase word saying why the condition last changed."""
    message: str | None = None
    """Details of the last change, for humans."""


class LocalObjectReference(KruiseModel):
    name: str | None = None
    """Name of an object in the same namespace."""


class TargetReference(KruiseModel):
    """A reference to a workload by apiVersion/kind/name (PUB targetRef, WorkloadSpread targetRef ...)."""

    api_version: str | None = None
    """API group and version of the referenced workload, e.g. apps.kruise.io/v1alpha1."""
    kind: str | None = None
    """Kind of the referenced workload, e.g. CloneSet."""
    name: str | None = None
    """Name of the referenced workload, in the same namespace."""


class KruiseObject(KruiseModel):
    """The envelope of every Kruise object; concrete kinds narrow `spec` and `status`."""

    api_version: str | None = None
    """The versioned schema this object is written in (group/version, e.g. apps.kruise.io/v1alpha1). The
    apiserver converts known versions to the one it stores and rejects unknown ones. See
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"""
    kind: str | None = None
    """The REST resource this object represents, in CamelCase (e.g. CloneSet). The apiserver can infer it
    from the URL a client writes to; it cannot be changed. See
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata: name, namespace, labels, annotations, owners and so on. See
    https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"""


# --- int-or-string arithmetic (k8s.io/apimachinery/pkg/util/intstr) ---

_ATOI = re.compile(r"[+-]?[0-9]+")


class IntOrStringError(ValueError):
    """Raised with the same text as upstream's intstr helpers."""


def _int_or_percent(value: int | str) -> tuple[int, bool]:
    if isinstance(value, bool):
        raise IntOrStringError("invalid type: neither int nor percentage")
    if isinstance(value, int):
        return value, False
    if isinstance(value, str):
        if not value.endswith("%"):
            raise IntOrStringError("invalid type: string is not a percentage")
        digits = value[:-1]
        if not _ATOI.fullmatch(digits):
            raise IntOrStringError(
                f'invalid value "{value}": strconv.Atoi: parsing "{digits}": invalid syntax'
            )
        return int(digits), True
    raise IntOrStringError("invalid type: neither int nor percentage")


def is_percent(value: int | str | None) -> bool:
    return isinstance(value, str) and value.endswith("%")


def scaled_value(value: int | str | None, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: ints as-is, "N%" of total rounded up or down."""
    if value is None:
        raise IntOrStringError("nil value for IntOrString")
    try:
        number, percent = _int_or_percent(value)
    except IntOrStringError as err:
        raise IntOrStringError(f"invalid value for IntOrString: {err}") from None
    if not percent:
        return number
    scaled = float(number) * float(total) / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def scaled_value_round_up(value: int | str | None, total: int) -> int:
    return scaled_value(value, total, round_up=True)


def scaled_value_round_down(value: int | str | None, total: int) -> int:
    return scaled_value(value, total, round_up=False)


def percent_value(value: int | str) -> int:
    """The number inside "N%" (errors like upstream for other strings)."""
    number, percent = _int_or_percent(value)
    if not percent:
        raise IntOrStringError("invalid type: string is not a percentage")
    return number
