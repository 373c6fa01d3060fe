"""PersistentPodState (apps.kruise.io v1alpha1/v1beta1): remember where a StatefulSet's pods ran, and steer
them back.

v1beta1 (upstream master's storage version) names a topology term's keys `keys` (v1alpha1:
`nodeTopologyKeys`) and declares the retention policy's values and a non-negative weight in its schema;
validation is written against v1alpha1 and `kruise.api.conversion.persistentpodstate` maps between the two.

Upstream's webhook also reads the `PPS_Watch_Custom_Workload_WhiteList` from kruise-configuration and
lists the other PersistentPodStates of the namespace; both come in here as arguments so validation
stays a pure function.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from kruise.api.common import Int32, Int64, KruiseModel, KruiseObject, TargetReference
from kruise.api.crdgen import CRDInfo, CRDVersion
from kruise.api.validation import FieldError, invalid, required

GROUP = "apps.kruise.io"
VERSION = "v1alpha1"
KIND = "PersistentPodState"

RETENTION_WHEN_SCALED = "WhenScaled"
RETENTION_WHEN_DELETED = "WhenDeleted"

DEFAULT_SUPPORTED_GROUPS = ("apps.kruise.io", "apps")
"""StatefulSet of these groups is always allowed as targetRef; other kinds need the whitelist."""


class NodeTopologyTerm(KruiseModel):
    node_topology_keys: list[str] = Field(default_factory=list)
    """Node label keys (e.g. kubernetes.io/hostname, topology.kubernetes.io/zone) whose values the
    recreated pod must share with its previous node."""


class PreferredTopologyTerm(KruiseModel):
    weight: Int32
    """Weight of this preference, as in a node affinity preferred term (1 to 100): higher weighs more."""
    preference: NodeTopologyTerm
    """Node label keys whose values the recreated pod prefers to share with its previous node."""


class PersistentPodAnnotation(KruiseModel):
    key: str
    """The annotation key to record and put back on the recreated pod."""


class PersistentPodStateSpec(KruiseModel):
    target_ref: TargetReference = Field(alias="targetRef")
    """The workload whose pods' state is kept: a StatefulSet (apps or apps.kruise.io), or another kind the
    kruise-configuration whitelist allows."""
    persistent_pod_annotations: list[PersistentPodAnnotation] | None = None
    """Pod annotations to record while a pod runs and restore when it is recreated under the same name
    (e.g. a fixed pod IP)."""
    required_persistent_topology: NodeTopologyTerm | None = None
    """Topology a recreated pod must return to: the scheduler is required to place it on a node with the
    same values of these node labels."""
    preferred_persistent_topology: list[PreferredTopologyTerm] | None = None
    """Topology a recreated pod should return to if it can: weighted node-label preferences for the
    scheduler."""
    persistent_pod_state_retention_policy: str | None = None
    """When a pod's record is dropped: WhenScaled (the default) once the workload scales the pod away,
    WhenDeleted only when the workload is deleted."""


class PodState(KruiseModel):
    node_name: str | None = None
    """The node the pod ran on."""
    node_topology_labels: dict[str, str] | None = None
    """Values of the topology label keys on that node, e.g. kubernetes.io/hostname: node-1."""
    annotations: dict[str, str] | None = None
    """The recorded values of the persistent annotations."""


class PersistentPodStateStatus(KruiseModel):
    observed_generation: Int64 = 0
    """The metadata.generation the controller last acted on."""
    pod_states: dict[str, PodState] | None = None
    """Recorded state per pod name, taken when the pod was ready."""


class PersistentPodState(KruiseObject):
    api_version: Literal["apps.kruise.io/v1alpha1"] | None = None
    kind: Literal["PersistentPodState"] | None = None
    spec: PersistentPodStateSpec
    """Desired state of the PersistentPodState."""
    status: PersistentPodStateStatus | None = None
    """Observed state of the PersistentPodState, written by kruise-manager."""


class NodeTopologyTermV1beta1(KruiseModel):
    keys: list[str] = Field(default_factory=list)
    """Node label keys (e.g. kubernetes.io/hostname, topology.kubernetes.io/zone) whose values the
    recreated pod must share with its previous node."""


class PreferredTopologyTermV1beta1(KruiseModel):
    weight: Int32 = Field(json_schema_extra={"crd_minimum": 0})
    """Weight of this preference, as in a node affinity preferred term (1 to 100): higher weighs more."""
    preference: NodeTopologyTermV1beta1
    """Node label keys whose values the recreated pod prefers to share with its previous node."""


class PersistentPodStateSpecV1beta1(KruiseModel):
    target_ref: TargetReference = Field(alias="targetRef")
    """The workload whose pods' state is kept: a StatefulSet (apps or apps.kruise.io), or another kind the
    kruise-configuration whitelist allows."""
    persistent_pod_annotations: list[PersistentPodAnnotation] | None = None
    """Pod annotations to record while a pod runs and restore when it is recreated under the same name
    (e.g. a fixed pod IP)."""
    required_persistent_topology: NodeTopologyTermV1beta1 | None = None
    """Topology a recreated pod must return to: the scheduler is required to place it on a node with the
    same values of these node labels."""
    preferred_persistent_topology: list[PreferredTopologyTermV1beta1] | None = None
    """Topology a recreated pod should return to if it can: weighted node-label preferences for the
    scheduler."""
    persistent_pod_state_retention_policy: str | None = Field(
        default=None, json_schema_extra={"crd_enum": [RETENTION_WHEN_SCALED, RETENTION_WHEN_DELETED]}
    )
    """When a pod's record is dropped: WhenScaled (the default) once the workload scales the pod away,
    WhenDeleted only when the workload is deleted."""


class PersistentPodStateV1beta1(KruiseObject):
    """The v1beta1 (upstream's storage) form; controllers read v1alpha1, `/convert` maps between."""

    api_version: Literal["apps.kruise.io/v1beta1"] | None = None
    kind: Literal["PersistentPodState"] | None = None
    spec: PersistentPodStateSpecV1beta1
    """Desired state of the PersistentPodState."""
    status: PersistentPodStateStatus | None = None
    """Observed state of the PersistentPodState, written by kruise-manager."""


CRD = CRDInfo(
    group=GROUP,
    kind=KIND,
    plural="persistentpodstates",
    description="PersistentPodState records where the pods of a StatefulSet ran (node topology, chosen "
    "annotations) and steers a recreated pod of the same name back to that topology.",
    versions=(
        CRDVersion(VERSION, PersistentPodState, storage=True),
        CRDVersion("v1beta1", PersistentPodStateV1beta1, storage=False),
    ),
    conversion_webhook=True,
)


def parse_group(api_version: str) -> str | None:
    """schema.ParseGroupVersion's group; None when the string is not a group/version."""
    if api_version in ("", "v1"):
        return ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return ""
    if len(parts) == 2:
        return parts[0]
    return None


def target_allowed(ref: TargetReference, whitelist: Iterable[tuple[str, str]]) -> bool:
    """StatefulSet (apps or apps.kruise.io) always; otherwise (group, kind) must be whitelisted."""
    group = parse_group(ref.api_version or "")
    if group is None:
        return False
    if group in DEFAULT_SUPPORTED_GROUPS and ref.kind == "StatefulSet":
        return True
    return (group, ref.kind or "") in set(whitelist)


def validate(
    obj: PersistentPodState,
    old: PersistentPodState | None = None,
    whitelist: Iterable[tuple[str, str]] = (),
    others: Iterable[PersistentPodState] = (),
) -> list[FieldError]:
    """validatingPersistentPodStateFn: spec, targetRef immutability, one PPS per workload."""
    spec = obj.spec
    ref = spec.target_ref
    ref_value = ref.to_dict()
    errs: list[FieldError] = []
    if not ref.api_version or not ref.name or not ref.kind:
        errs.append(
            invalid(
                "spec.TargetReference",
                ref_value,
                "empty TargetReference is not valid for PersistentPodState.",
            )
        )
    if not target_allowed(ref, whitelist):
        errs.append(
            invalid(
                "spec.TargetReference",
                ref_value,
                "TargetReference.Kind must be StatefulSet or in PPS_Watch_Custom_Workload_WhiteList",
            )
        )
    if spec.required_persistent_topology is None and not spec.preferred_persistent_topology:
        errs.append(
            invalid(
                "spec",
                spec.to_dict(),
                "TopologyConstraint and TopologyPreference cannot be empty at the same time",
            )
        )
    if old is not None and old.spec.target_ref.to_dict() != ref_value:
        errs.append(required("spec.targetRef", "targetRef cannot be modified"))
    group = parse_group(ref.api_version or "")
    for other in others:
        if other.metadata.name == obj.metadata.name:
            continue
        other_ref = other.spec.target_ref
        if parse_group(other_ref.api_version or "") == group and (other_ref.kind, other_ref.name) == (
            ref.kind,
            ref.name,
        ):
            errs.append(
                invalid(
                    "spec.targetReference",
                    ref_value,
                    f"targetReference is in conflict with other PersistentPodState {other.metadata.name}",
                )
            )
            break
    return errs
