"""Which nodes a daemon pod belongs on: the native DaemonSet controller's node-eligibility rules.

Shared by the Advanced DaemonSet and BroadcastJob controllers. The rules are kube's
``NodeShouldRunDaemonPod``: the template's ``nodeName`` (if set) must name the node, the pod's
required node affinity (``nodeSelector`` and
``affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution``) must match the node's
labels and ``metadata.name``, and every NoSchedule/NoExecute taint must be tolerated — counting the
tolerations the DaemonSet controller adds to every daemon pod (not-ready, unreachable, pressure,
unschedulable, and network-unavailable for hostNetwork pods). A node whose only untolerated taints
are NoSchedule keeps the pods it already runs (``should_continue_running``).

Node affinity is read as the scheduler reads it: terms are ORed, the requirements inside a term
ANDed, an empty term or an empty term list selects nothing, and a term that does not parse
(an unknown operator, a wrong number of values, an invalid key or value) is skipped as not
matching. :func:`node_affinity_errors` reports those terms for people, with the field path.

Pods are created bound to their node through a required node affinity on ``metadata.name``
(``--assign-pods-by-scheduler``, upstream's default), see :func:`bind_to_node`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH
from kruise.api.objects import Obj, labels_of, meta_of, section, spec_of
from kruise.api.validation import label_value_errors, qualified_name_errors

TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_NODE_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_NODE_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_NODE_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_NODE_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"

EFFECT_NO_SCHEDULE = "NoSchedule"
EFFECT_PREFER_NO_SCHEDULE = "PreferNoSchedule"
EFFECT_NO_EXECUTE = "NoExecute"

OBJECT_NAME_FIELD = "metadata.name"
DAEMONSET_SCHEDULER_NAME = "kubernetes.io/daemonset-controller"

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
NODE_FIELD_OPERATORS = ("In", "NotIn")

AFFINITY_PATH = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"

_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _daemon_tolerations(host_network: bool) -> list[dict[str, str]]:
    """The tolerations every daemon pod gets, in the order kube adds them."""
    added = [
        # taint-based eviction must not evict daemon pods from a node in trouble
        {"key": TAINT_NODE_NOT_READY, "operator": "Exists", "effect": EFFECT_NO_EXECUTE},
        {"key": TAINT_NODE_UNREACHABLE, "operator": "Exists", "effect": EFFECT_NO_EXECUTE},
        # taints the node lifecycle controller sets from node conditions
        {"key": TAINT_NODE_DISK_PRESSURE, "operator": "Exists", "effect": EFFECT_NO_SCHEDULE},
        {"key": TAINT_NODE_MEMORY_PRESSURE, "operator": "Exists", "effect": EFFECT_NO_SCHEDULE},
        {"key": TAINT_NODE_PID_PRESSURE, "operator": "Exists", "effect": EFFECT_NO_SCHEDULE},
        {"key": TAINT_NODE_UNSCHEDULABLE, "operator": "Exists", "effect": EFFECT_NO_SCHEDULE},
    ]
    if host_network:
        added.append(
            {"key": TAINT_NODE_NETWORK_UNAVAILABLE, "operator": "Exists", "effect": EFFECT_NO_SCHEDULE}
        )
    return added


def _toleration_identity(tol: Obj) -> tuple[str, str, str, str]:
    """Toleration.MatchToleration compares key, operator, value and effect (not tolerationSeconds)."""
    return (tol.get("key") or "", tol.get("operator") or "", tol.get("value") or "", tol.get("effect") or "")


def _toleration_equal(a: Obj, b: Obj) -> bool:
    return _toleration_identity(a) == _toleration_identity(b) and a.get("tolerationSeconds") == b.get(
        "tolerationSeconds"
    )


def add_or_update_toleration(tolerations: Sequence[Obj] | None, toleration: Obj) -> list[Obj]:
    """v1helper.AddOrUpdateTolerationInPodSpec: a toleration with the same key/operator/value/effect
    is replaced by ``toleration`` (so a bounded tolerationSeconds becomes unbounded); none ⇒ appended.
    An identical toleration already present leaves the list as it was."""
    existing = list(tolerations or [])
    result: list[Obj] = []
    replaced = False
    for tol in existing:
        if _toleration_identity(tol) == _toleration_identity(toleration):
            if _toleration_equal(tol, toleration):
                return existing
            result.append(dict(toleration))
            replaced = True
            continue
        result.append(tol)
    if not replaced:
        result.append(dict(toleration))
    return result


def daemon_pod_tolerations(pod_spec: Obj) -> list[Obj]:
    """The pod spec's tolerations with the DaemonSet controller's defaults added
    (util.AddOrUpdateDaemonPodTolerations)."""
    tolerations: list[Obj] = list(pod_spec.get("tolerations") or [])
    for added in _daemon_tolerations(bool(pod_spec.get("hostNetwork"))):
        tolerations = add_or_update_toleration(tolerations, added)
    return tolerations


def tolerates(toleration: Obj, taint: Obj) -> bool:
    """Toleration.ToleratesTaint: an empty effect or key matches any; Exists ignores the value,
    Equal (or no operator) needs the same value; any other operator tolerates nothing."""
    effect = toleration.get("effect") or ""
    if effect and effect != (taint.get("effect") or ""):
        return False
    key = toleration.get("key") or ""
    if key and key != (taint.get("key") or ""):
        return False
    operator = toleration.get("operator") or ""
    if operator in ("", "Equal"):
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return operator == "Exists"


def find_untolerated_taint(
    taints: Iterable[Obj], tolerations: Sequence[Obj], include: Callable[[Obj], bool]
) -> Obj | None:
    """v1helper.FindMatchingUntoleratedTaint: the first taint passing ``include`` that no toleration
    tolerates, or None."""
    for taint in taints:
        if include(taint) and not any(tolerates(tol, taint) for tol in tolerations):
            return taint
    return None


# --- required node affinity -------------------------------------------------------------


def _parse_go_int64(value: str) -> int | None:
    """strconv.ParseInt(value, 10, 64), None on error."""
    if not _GO_INT.fullmatch(value):
        return None
    number = int(value)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _label_requirement_errors(req: Obj, path: str) -> list[str]:
    """What labels.NewRequirement (via nodeSelectorRequirementsAsSelector) rejects."""
    operator = req.get("operator") or ""
    key = req.get("key") or ""
    values = list(req.get("values") or [])
    if operator not in NODE_SELECTOR_OPERATORS:
        supported = ", ".join(f'"{op}"' for op in NODE_SELECTOR_OPERATORS)
        return [f'{path}.operator: Unsupported value: "{operator}": supported values: {supported}']
    errs = [f"{path}.key: Invalid value: {key!r}: {msg}" for msg in qualified_name_errors(key)]
    if operator in ("In", "NotIn") and not values:
        errs.append(f"{path}.values: Required value: for 'in', 'notin' operators, values set can't be empty")
    elif operator in ("Exists", "DoesNotExist") and values:
        errs.append(f"{path}.values: Forbidden: values set must be empty for exists and does not exist")
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            errs.append(
                f"{path}.values: Required value: for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, value in enumerate(values):
            if _parse_go_int64(value) is None:
                errs.append(
                    f"{path}.values[{i}]: Invalid value: {value!r}: for 'Gt', 'Lt' operators, "
                    "the value must be an integer"
                )
    for i, value in enumerate(values):
        errs.extend(
            f"{path}.values[{i}]: Invalid value: {value!r}: {msg}" for msg in label_value_errors(value)
        )
    return errs


def _field_requirement_errors(req: Obj, path: str) -> list[str]:
    """What nodeSelectorRequirementsAsFieldSelector rejects: only In/NotIn with exactly one value."""
    operator = req.get("operator") or ""
    if operator not in NODE_FIELD_OPERATORS:
        supported = ", ".join(f'"{op}"' for op in NODE_FIELD_OPERATORS)
        return [f'{path}.operator: Unsupported value: "{operator}": supported values: {supported}']
    values = list(req.get("values") or [])
    if len(values) != 1:
        return [f"{path}.values: Invalid value: {values!r}: must have one element"]
    return []


def _label_requirement_matches(req: Obj, labels: Mapping[str, str]) -> bool:
    """labels.Requirement.Matches for a requirement that parsed."""
    operator, key = req["operator"], req.get("key") or ""
    values = list(req.get("values") or [])
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    # Gt / Lt: the node's label must be an integer too
    if not present:
        return False
    have, want = _parse_go_int64(labels[key]), _parse_go_int64(values[0])
    if have is None or want is None:
        return False
    return have > want if operator == "Gt" else have < want


def _field_requirement_matches(req: Obj, fields: Mapping[str, str]) -> bool:
    """fields.OneTermEqualSelector / OneTermNotEqualSelector; an unknown field reads as ""."""
    have = fields.get(req.get("key") or "", "")
    want = req["values"][0]
    return have == want if req["operator"] == "In" else have != want


def _is_empty_term(term: Obj) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def _term_errors(term: Obj, path: str) -> list[str]:
    errs: list[str] = []
    for i, req in enumerate(term.get("matchExpressions") or []):
        errs.extend(_label_requirement_errors(req, f"{path}.matchExpressions[{i}]"))
    for i, req in enumerate(term.get("matchFields") or []):
        errs.extend(_field_requirement_errors(req, f"{path}.matchFields[{i}]"))
    return errs


def _term_matches(term: Obj, labels: Mapping[str, str], fields: Mapping[str, str]) -> bool:
    if not all(_label_requirement_matches(req, labels) for req in term.get("matchExpressions") or []):
        return False
    return all(_field_requirement_matches(req, fields) for req in term.get("matchFields") or [])


def _required_node_selector(pod_spec: Obj) -> Obj | None:
    node_affinity = section(pod_spec, "affinity").get("nodeAffinity") or {}
    return node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")


def node_affinity_errors(pod_spec: Obj) -> list[str]:
    """Why terms of the required node affinity cannot be evaluated (such terms never match),
    each message led by the field path."""
    selector = _required_node_selector(pod_spec)
    if selector is None:
        return []
    errs: list[str] = []
    for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
        if not _is_empty_term(term):
            errs.extend(_term_errors(term, f"{AFFINITY_PATH}.nodeSelectorTerms[{i}]"))
    return errs


def node_name(node: Obj) -> str:
    return meta_of(node).get("name") or ""


def node_labels(node: Obj) -> Mapping[str, str]:
    return labels_of(node)


def matches_required_node_affinity(pod_spec: Obj, node: Obj) -> bool:
    """nodeaffinity.GetRequiredNodeAffinity(pod).Match(node), parse errors ignored as the
    DaemonSet controller ignores them: ``nodeSelector`` entries must all equal the node's labels,
    and one non-empty, valid term of the required node affinity must match (if it is set)."""
    labels = node_labels(node)
    for key, value in section(pod_spec, "nodeSelector").items():
        if key not in labels or labels[key] != value:
            return False
    selector = _required_node_selector(pod_spec)
    if selector is None:
        return True
    fields = {OBJECT_NAME_FIELD: node_name(node)}
    for term in selector.get("nodeSelectorTerms") or []:
        if _is_empty_term(term) or _term_errors(term, ""):
            continue
        if _term_matches(term, labels, fields):
            return True
    return False


# --- the DaemonSet decision -------------------------------------------------------------


@dataclass(frozen=True)
class Predicates:
    """The three predicates the DaemonSet controller runs (daemonset ``Predicates``)."""

    fits_node_name: bool
    fits_node_affinity: bool
    fits_taints: bool


@dataclass(frozen=True)
class NodeFit:
    """``should_run``: a daemon pod should be created on the node if none runs there.
    ``should_continue_running``: a daemon pod already on the node may stay."""

    should_run: bool
    should_continue_running: bool


def _is_no_schedule_or_execute(taint: Obj) -> bool:
    return taint.get("effect") in (EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE)


def _is_no_execute(taint: Obj) -> bool:
    return taint.get("effect") == EFFECT_NO_EXECUTE


def node_taints(node: Obj) -> list[Obj]:
    return list(spec_of(node).get("taints") or [])


def predicates(pod_spec: Obj, node: Obj) -> Predicates:
    """Node name, required node affinity, and NoSchedule/NoExecute taints against the pod's own
    tolerations (pass a spec that already has the daemon tolerations, see :func:`daemon_pod_spec`)."""
    wanted = pod_spec.get("nodeName") or ""
    untolerated = find_untolerated_taint(
        node_taints(node), list(pod_spec.get("tolerations") or []), _is_no_schedule_or_execute
    )
    return Predicates(
        fits_node_name=not wanted or wanted == node_name(node),
        fits_node_affinity=matches_required_node_affinity(pod_spec, node),
        fits_taints=untolerated is None,
    )


def template_spec(template: Obj) -> Obj:
    return template.get("spec") or {}


def daemon_pod_spec(template: Obj) -> dict[str, Any]:
    """The spec of the pod the controller would create from ``template`` (a copy; the daemon
    tolerations added), as ``NewPod`` builds it for the eligibility check."""
    spec = copy.deepcopy(dict(template_spec(template)))
    spec["tolerations"] = daemon_pod_tolerations(spec)
    return spec


def should_run_on_node(template: Obj, node: Obj) -> NodeFit:
    """NodeShouldRunDaemonPod for a daemon pod ``template`` (``{metadata, spec}``) and a Node.

    A node whose untolerated taints are all NoSchedule keeps a running pod; an untolerated
    NoExecute taint evicts it."""
    spec = daemon_pod_spec(template)
    wanted = spec.get("nodeName") or ""
    if wanted and wanted != node_name(node):
        return NodeFit(False, False)
    fits = predicates(spec, node)
    if not fits.fits_node_name or not fits.fits_node_affinity:
        return NodeFit(False, False)
    if not fits.fits_taints:
        no_execute = find_untolerated_taint(node_taints(node), spec["tolerations"], _is_no_execute)
        return NodeFit(False, no_execute is None)
    return NodeFit(True, True)


# --- pods bound to a node ---------------------------------------------------------------


def _node_name_selector(name: str) -> dict[str, Any]:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": OBJECT_NAME_FIELD, "operator": "In", "values": [name]}]}
        ]
    }


def replace_node_name_affinity(affinity: Obj | None, name: str) -> dict[str, Any]:
    """util.ReplaceDaemonSetPodNodeNameNodeAffinity: the required node affinity becomes the single
    term ``metadata.name In [name]`` (other terms are dropped: the node already satisfied them);
    preferred node affinity and pod (anti-)affinity are kept."""
    result = copy.deepcopy(dict(affinity or {}))
    node_affinity = dict(section(result, "nodeAffinity"))
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = _node_name_selector(name)
    result["nodeAffinity"] = node_affinity
    return result


def bind_to_node(template: Obj, name: str, by_scheduler: bool = True) -> dict[str, Any]:
    """A copy of ``template`` for the pod to create on node ``name``.

    With ``by_scheduler`` (``--assign-pods-by-scheduler``, default true) the default scheduler binds
    it through the required node affinity on ``metadata.name``; otherwise the controller binds it
    itself (``spec.nodeName``, ``schedulerName: kubernetes.io/daemonset-controller``)."""
    result = copy.deepcopy(dict(template))
    spec = dict(spec_of(result))
    if by_scheduler:
        spec["affinity"] = replace_node_name_affinity(spec.get("affinity"), name)
    else:
        spec["schedulerName"] = DAEMONSET_SCHEDULER_NAME
        spec["nodeName"] = name
    result["spec"] = spec
    return result


def target_node_name(pod: Obj) -> str | None:
    """util.GetTargetNodeName: ``spec.nodeName``, else the single value of the first
    ``metadata.name In`` match field of the required node affinity; None when neither names one."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    selector = _required_node_selector(spec)
    for term in (selector or {}).get("nodeSelectorTerms") or []:
        for req in term.get("matchFields") or []:
            if req.get("key") == OBJECT_NAME_FIELD and req.get("operator") == "In":
                values = req.get("values") or []
                return values[0] if len(values) == 1 else None
    return None


LABEL_TEMPLATE_GENERATION = "pod-template-generation"


def create_pod_template(template: Obj, generation: int | None, revision_hash: str) -> dict[str, Any]:
    """util.CreatePodTemplate: a copy of the DaemonSet template with the daemon tolerations and the
    ``pod-template-generation`` (when the deprecated generation annotation is set) and
    ``controller-revision-hash`` labels."""
    result = copy.deepcopy(dict(template))
    spec = dict(spec_of(result))
    spec["tolerations"] = daemon_pod_tolerations(spec)
    result["spec"] = spec
    metadata = dict(meta_of(result))
    labels = dict(section(metadata, "labels"))
    if generation is not None:
        labels[LABEL_TEMPLATE_GENERATION] = str(generation)
    if revision_hash:
        labels[LABEL_CONTROLLER_REVISION_HASH] = revision_hash
    metadata["labels"] = labels
    result["metadata"] = metadata
    return result
