"""Whether a BroadcastJob pod can run on a node: upstream's ``checkNodeFitness``.

Unlike a DaemonSet, a BroadcastJob adds no tolerations of its own: the pod (or the template,
for a node that has no pod yet) is judged with exactly the tolerations it carries. Five checks,
in upstream's order, the first failure wins: the pod's ``nodeName``, its required node affinity
and ``nodeSelector``, NoSchedule/NoExecute taints, ``spec.unschedulable`` (passed only by a pod
tolerating the ``node.kubernetes.io/unschedulable`` NoSchedule taint), and resource fit on an
otherwise empty node. The node-name, affinity and taint rules are the shared ones of
:mod:`kruise.control.common.nodeeligibility`.
"""

from __future__ import annotations

import copy
from typing import Any

from kruise.api.objects import Obj, spec_of
from kruise.control.broadcastjob.resources import insufficient_resources
from kruise.control.common.nodeeligibility import (
    EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE,
    TAINT_NODE_UNSCHEDULABLE,
    find_untolerated_taint,
    node_name,
    node_taints,
    predicates,
    tolerates,
)

REASON_NODE_NAME = "node(s) didn't match the requested node name"
REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
REASON_UNSCHEDULABLE = "node(s) were unschedulable"

_UNSCHEDULABLE_TAINT = {"key": TAINT_NODE_UNSCHEDULABLE, "effect": EFFECT_NO_SCHEDULE}


def _is_no_schedule_or_execute(taint: Obj) -> bool:
    return taint.get("effect") in (EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE)


def unfit_reason(pod_spec: Obj, node: Obj) -> str | None:
    """Why a pod with ``pod_spec`` cannot run on ``node`` (the scheduler's wording), None if it can."""
    fits = predicates(pod_spec, node)
    if not fits.fits_node_name:
        return REASON_NODE_NAME
    if not fits.fits_node_affinity:
        return REASON_NODE_AFFINITY
    tolerations = list(pod_spec.get("tolerations") or [])
    if not fits.fits_taints:
        taint = find_untolerated_taint(node_taints(node), tolerations, _is_no_schedule_or_execute) or {}
        key, value = taint.get("key") or "", taint.get("value") or ""
        return f"node(s) had taint {{{key}: {value}}}, that the pod didn't tolerate"
    unschedulable = bool(spec_of(node).get("unschedulable"))
    if unschedulable and not any(tolerates(tol, _UNSCHEDULABLE_TAINT) for tol in tolerations):
        return REASON_UNSCHEDULABLE
    shortfalls = insufficient_resources(pod_spec, node)
    if shortfalls:
        return ", ".join(shortfalls)
    return None


def mock_pod_spec(template: Obj, node: Obj) -> dict[str, Any]:
    """upstream ``NewMockPod``: the template's spec with ``nodeName`` set to the node — so a
    ``nodeName`` written in the template never narrows the nodes, only affinity, taints and
    resources do."""
    spec = copy.deepcopy(dict(spec_of(template)))
    spec["nodeName"] = node_name(node)
    return spec


def template_fits(template: Obj, node: Obj) -> bool:
    """Whether a pod not yet created from ``template`` would run on ``node``."""
    return unfit_reason(mock_pod_spec(template, node), node) is None
