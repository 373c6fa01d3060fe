"""PersistentPodState planning (pure): what to remember of each pod, and how to steer it back.

A PersistentPodState targets one StatefulSet (apps/v1 or Advanced), or a statefulset-like custom
workload whitelisted in kruise-configuration (`kruise.control.common.customworkloads`). For every Ready
pod of it that runs on a node, the controller records in `status.podStates[<pod name>]` the node
name, the values of the node's labels named by `requiredPersistentTopology` /
`preferredPersistentTopology`, and the pod's annotations named by `persistentPodAnnotations`.
StatefulSet pods keep their names, so when a pod of that name is created again the pod webhook
turns the recorded values into a `nodeSelector` (required keys) and preferred node-affinity terms
(one per preferred term, its weight kept) and marks the pod with
`kruise.io/injected-persistent-pod-state: <pps name>`.

Records of ordinals outside the workload's replicas (reserved ordinals skipped, as Advanced
StatefulSet numbers its pods) are dropped once their pod is gone, unless the retention policy is
`WhenDeleted`; all records are dropped when the workload is deleted.

A StatefulSet annotated `kruise.io/auto-generate-persistent-pod-state: "true"` with a required or
preferred topology annotation (comma-separated node label keys) gets a PersistentPodState of its own
name, controlled by it; removing the annotation deletes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.controllerref import controller_of, new_controller_ref
from kruise.api.keys import (
    ANNOTATION_AUTO_GENERATE_PERSISTENT_POD_STATE,
    ANNOTATION_INJECTED_PERSISTENT_POD_STATE,
    ANNOTATION_PERSISTENT_POD_ANNOTATIONS,
    ANNOTATION_PREFERRED_PERSISTENT_TOPOLOGY,
    ANNOTATION_REQUIRED_PERSISTENT_TOPOLOGY,
)
from kruise.api.objects import Obj, annotations_of, labels_of, meta_of, section, spec_of, status_of
from kruise.api.persistentpodstate import DEFAULT_SUPPORTED_GROUPS, RETENTION_WHEN_DELETED
from kruise.control.common import podstatus
from kruise.control.common.customworkloads import StatefulSetLikeWhitelist
from kruise.control.statefulset.identity import parent_and_ordinal, reserved_ordinals

KIND = "PersistentPodState"
API_VERSION = "apps.kruise.io/v1alpha1"
GENERATE_PREFIX = "generate#"
"""Work-queue names starting with this ask for the auto-generated PPS of a workload, not a PPS."""
AUTO_PREFERRED_WEIGHT = 100


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def is_statefulset(api_version: str, kind: str) -> bool:
    """The workloads a PersistentPodState may follow without kruise-configuration's whitelist."""
    return kind == "StatefulSet" and group_of(api_version) in DEFAULT_SUPPORTED_GROUPS


def same_target(ref: Obj, api_version: str, kind: str, name: str) -> bool:
    """util.IsReferenceEqual: same group (any version), kind and name."""
    return (
        group_of(ref.get("apiVersion") or "") == group_of(api_version)
        and ref.get("kind") == kind
        and ref.get("name") == name
    )


def select_for(states: Iterable[Obj], api_version: str, kind: str, name: str) -> Obj | None:
    """The first live PersistentPodState of the namespace that targets this workload."""
    for pps in states:
        if meta_of(pps).get("deletionTimestamp"):
            continue
        if same_target(spec_of(pps).get("targetRef") or {}, api_version, kind, name):
            return pps
    return None


# --- What the controller records -------------------------------------------------------------


def topology_keys(spec: Obj) -> set[str]:
    """Every node label key named by the required and the preferred topology."""
    keys = set((section(spec, "requiredPersistentTopology").get("nodeTopologyKeys")) or [])
    for term in spec.get("preferredPersistentTopology") or []:
        keys.update(section(term, "preference").get("nodeTopologyKeys") or [])
    return keys


def annotation_keys(spec: Obj) -> set[str]:
    return {item["key"] for item in spec.get("persistentPodAnnotations") or [] if item.get("key")}


def pod_state(pod: Obj, node: Obj, node_keys: Iterable[str], pod_annotation_keys: Iterable[str]) -> dict:
    """The record of one pod: its node, the node's topology labels, the pod's kept annotations."""
    node_labels = labels_of(node)
    annotations = annotations_of(pod)
    state: dict[str, Any] = {"nodeName": pod["spec"]["nodeName"]}
    labels = {key: node_labels[key] for key in sorted(node_keys) if key in node_labels}
    kept = {key: annotations[key] for key in sorted(pod_annotation_keys) if key in annotations}
    if labels:
        state["nodeTopologyLabels"] = labels
    if kept:
        state["annotations"] = kept
    return state


def _already_recorded(state: Obj, pod: Obj, node_keys: set[str], pod_annotation_keys: set[str]) -> bool:
    return (
        state.get("nodeName") == pod["spec"].get("nodeName")
        and set(section(state, "nodeTopologyLabels")) == node_keys
        and set(section(state, "annotations")) == pod_annotation_keys
    )


def in_replicas(ordinal: int, replicas: int, reserve_ordinals: Iterable[int | str] | None = None) -> bool:
    """Whether an ordinal is one of the first `replicas` ordinals not reserved."""
    if ordinal < 0:
        return False
    reserved = reserved_ordinals(reserve_ordinals)
    live, index = 0, 0
    while live < replicas:
        if index not in reserved:
            if index == ordinal:
                return True
            live += 1
        index += 1
    return False


@dataclass(frozen=True)
class Workload:
    """What the controller needs of the target: its size, reserved ordinals, whether it is going."""

    replicas: int
    reserve_ordinals: tuple[int | str, ...] = ()
    deleting: bool = False

    @classmethod
    def of_custom(cls, obj: Obj) -> Workload:
        """A whitelisted statefulset-like workload, read as upstream's controller finder reads one:
        `spec.replicas` (0 when absent or not an integer), no reserved ordinals, and its deletion
        timestamp not carried (its records are dropped once it is gone)."""
        replicas = spec_of(obj).get("replicas")
        return cls(replicas=replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 0)

    @classmethod
    def of(cls, obj: Obj) -> Workload:
        spec = obj.get("spec") or {}
        replicas = spec.get("replicas")
        return cls(
            replicas=1 if replicas is None else int(replicas),
            reserve_ordinals=tuple(spec.get("reserveOrdinals") or ()),
            deleting=bool(meta_of(obj).get("deletionTimestamp")),
        )


def next_status(
    pps: Obj,
    workload: Workload | None,
    pods: Mapping[str, Obj],
    node_of: Callable[[str], Obj | None],
) -> dict[str, Any]:
    """The status one pass writes. `pods` are the workload's active pods by name."""
    generation = int(meta_of(pps).get("generation") or 0)
    if workload is None or workload.deleting:
        return {"observedGeneration": generation}
    spec = pps.get("spec") or {}
    node_keys, kept_keys = topology_keys(spec), annotation_keys(spec)
    states: dict[str, Any] = dict(section(pps, "status", "podStates"))
    for name, pod in sorted(pods.items()):
        node_name = spec_of(pod).get("nodeName")
        if not podstatus.is_ready(pod) or not node_name:
            continue
        old = states.get(name)
        if old is not None and _already_recorded(old, pod, node_keys, kept_keys):
            continue
        node = node_of(node_name)
        if node is None:
            continue  # upstream skips the pod until its node can be read
        states[name] = pod_state(pod, node, node_keys, kept_keys)
    if spec.get("persistentPodStateRetentionPolicy") != RETENTION_WHEN_DELETED:
        for name in list(states):
            _, ordinal = parent_and_ordinal(name)
            if ordinal < 0 or in_replicas(ordinal, workload.replicas, workload.reserve_ordinals):
                continue
            if name not in pods:
                del states[name]
    status: dict[str, Any] = {"observedGeneration": generation}
    if states:
        status["podStates"] = states
    return status


# --- Auto-generation from StatefulSet annotations ----------------------------------------------


def generate_key(namespace: str, api_version: str, kind: str, name: str) -> str:
    """Queue key of an auto-generation request: `<ns>/generate#<apiVersion>#<kind>#<name>`."""
    return f"{namespace}/{GENERATE_PREFIX}{api_version}#{kind}#{name}"


def parse_generate_name(name: str) -> tuple[str, str, str] | None:
    """(apiVersion, kind, workload name) of a generate request name, None when malformed."""
    parts = name.split("#")
    if len(parts) != 4 or parts[0] + "#" != GENERATE_PREFIX:
        return None
    return parts[1], parts[2], parts[3]


def _annotation(obj: Obj, key: str) -> str:
    return annotations_of(obj).get(key) or ""


def wants_generated(workload: Obj) -> bool:
    """Annotated for auto-generation with at least one topology annotation."""
    return _annotation(workload, ANNOTATION_AUTO_GENERATE_PERSISTENT_POD_STATE) == "true" and bool(
        _annotation(workload, ANNOTATION_REQUIRED_PERSISTENT_TOPOLOGY)
        or _annotation(workload, ANNOTATION_PREFERRED_PERSISTENT_TOPOLOGY)
    )


def keeps_generated(workload: Obj) -> bool:
    """Annotated "true" but with no topology: upstream warns and leaves any generated PPS alone."""
    return _annotation(workload, ANNOTATION_AUTO_GENERATE_PERSISTENT_POD_STATE) == "true"


def generated_by(pps: Obj, workload: Obj) -> bool:
    ref = controller_of(pps)
    return ref is not None and ref.get("uid") == meta_of(workload).get("uid")


GENERATION_ANNOTATIONS = (
    ANNOTATION_AUTO_GENERATE_PERSISTENT_POD_STATE,
    ANNOTATION_REQUIRED_PERSISTENT_TOPOLOGY,
    ANNOTATION_PREFERRED_PERSISTENT_TOPOLOGY,
)
"""A change of one of these on a StatefulSet asks for its generated PPS to be (re)considered."""


def generated_spec(workload: Obj, api_version: str, kind: str) -> dict[str, Any]:
    """The spec upstream derives from the annotations (keys split on commas, preferred weight 100)."""
    name = workload["metadata"]["name"]
    spec: dict[str, Any] = {"targetRef": {"apiVersion": api_version, "kind": kind, "name": name}}
    required = _annotation(workload, ANNOTATION_REQUIRED_PERSISTENT_TOPOLOGY)
    if required:
        spec["requiredPersistentTopology"] = {"nodeTopologyKeys": required.split(",")}
    kept = _annotation(workload, ANNOTATION_PERSISTENT_POD_ANNOTATIONS)
    if kept:
        spec["persistentPodAnnotations"] = [{"key": key} for key in kept.split(",")]
    preferred = _annotation(workload, ANNOTATION_PREFERRED_PERSISTENT_TOPOLOGY)
    if preferred:
        spec["preferredPersistentTopology"] = [
            {"weight": AUTO_PREFERRED_WEIGHT, "preference": {"nodeTopologyKeys": preferred.split(",")}}
        ]
    return spec


def generated(workload: Obj, api_version: str, kind: str) -> dict[str, Any]:
    """The whole auto-generated PersistentPodState: named after the workload, controlled by it."""
    meta = workload["metadata"]
    owner = {**workload, "apiVersion": api_version, "kind": kind}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "ownerReferences": [new_controller_ref(owner, block_owner_deletion=False)],
        },
        "spec": generated_spec(workload, api_version, kind),
    }


# --- What the pod webhook injects ---------------------------------------------------------------


def node_affinity(spec: Obj, state: Obj) -> tuple[dict[str, str] | None, list[dict[str, Any]]]:
    """(nodeSelector from the required keys, preferred terms) for one recorded pod state.

    A required topology always yields a selector (possibly empty); each preferred term yields one
    weighted term whose expressions are `In [recorded value]` for the keys recorded.
    """
    labels = state.get("nodeTopologyLabels") or {}
    selector: dict[str, str] | None = None
    required = spec.get("requiredPersistentTopology")
    if required is not None:
        selector = {k: labels[k] for k in required.get("nodeTopologyKeys") or [] if k in labels}
    preferred: list[dict[str, Any]] = []
    for term in spec.get("preferredPersistentTopology") or []:
        expressions = [
            {"key": k, "operator": "In", "values": [labels[k]]}
            for k in section(term, "preference").get("nodeTopologyKeys") or []
            if k in labels
        ]
        preference: dict[str, Any] = {"matchExpressions": expressions} if expressions else {}
        preferred.append({"weight": term.get("weight", 0), "preference": preference})
    return selector, preferred


NO_CUSTOM_WORKLOADS = StatefulSetLikeWhitelist()


def inject(
    pod: dict[str, Any], states: Iterable[Obj], whitelist: StatefulSetLikeWhitelist = NO_CUSTOM_WORKLOADS
) -> bool:
    """Steer a pod being created back to its recorded topology, in place; True when it changed.

    Only pods controlled by a StatefulSet (or a kind in `whitelist`, PPS_Watch_Custom_Workload_WhiteList)
    with a PersistentPodState that recorded topology labels under the pod's name are touched; the
    first admission of a name has no record and passes.
    """
    ref = controller_of(pod)
    if ref is None or not whitelist.allows(ref.get("apiVersion") or "", ref.get("kind") or ""):
        return False
    pps = select_for(states, ref["apiVersion"], ref["kind"], ref.get("name") or "")
    if pps is None:
        return False
    recorded = status_of(pps).get("podStates") or {}
    state = recorded.get(meta_of(pod).get("name") or "")
    if not state or not state.get("nodeTopologyLabels"):
        return False
    selector, preferred = node_affinity(pps.get("spec") or {}, state)
    if not selector and not preferred:
        return False
    metadata = pod.setdefault("metadata", {})
    metadata.setdefault("annotations", {})[ANNOTATION_INJECTED_PERSISTENT_POD_STATE] = pps["metadata"]["name"]
    spec = pod.setdefault("spec", {})
    if selector:
        spec.setdefault("nodeSelector", {}).update(selector)
    if preferred:
        affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
        terms = affinity.setdefault("preferredDuringSchedulingIgnoredDuringExecution", [])
        terms.extend(term for term in preferred if term not in terms)  # reinvocation adds nothing
    return True
