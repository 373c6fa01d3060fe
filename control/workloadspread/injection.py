"""What a subset puts into a new pod: tolerations, node affinity, the `patch`, and the annotation.

The subset's tolerations and preferred terms are appended to the pod's; its requiredNodeSelectorTerm
becomes the pod's only required term when the pod has none, else its expressions and fields are
ANDed into every existing term (the terms are ORed, so each must carry the subset's constraint).
The `patch` is strategically merged into the whole pod; if that changes priorityClassName the
resolved `priority` is dropped so the apiserver's Priority admission fills it in again for the new
class. Last, the `apps.kruise.io/matched-workloadspread` annotation names the WorkloadSpread and
subset (and the generated id of a pod that had only a generateName).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kruise.api.objects import MutableObj, spec_of
from kruise.control.uniteddeployment.podpatch import PatchError, patch_pod_template
from kruise.control.workloadspread.subsets import ANNOTATION_MATCHED, MatchedSpread

__all__ = ["PatchError", "inject"]


def _subset(ws: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    return next((s for s in spec_of(ws).get("subsets") or [] if s.get("name") == name), None)


def _merge_required(affinity: MutableObj, term: Mapping[str, Any]) -> None:
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        required["nodeSelectorTerms"] = [copy.deepcopy(dict(term))]
        return
    for existing in terms:
        for field in ("matchExpressions", "matchFields"):
            extra = term.get(field) or []
            if extra:
                existing[field] = [*(existing.get(field) or []), *copy.deepcopy(extra)]
    required["nodeSelectorTerms"] = terms


def inject(pod: MutableObj, ws: Mapping[str, Any], subset_name: str, uid: str = "") -> MutableObj:
    """The pod with `subset_name` of `ws` applied (a new dict when a patch is merged, else `pod`
    changed in place). Unknown subset: the pod unchanged. Raises PatchError for a bad patch."""
    subset = _subset(ws, subset_name)
    if subset is None:
        return pod
    spec = pod.setdefault("spec", {})
    if subset.get("tolerations"):
        spec["tolerations"] = [*(spec.get("tolerations") or []), *copy.deepcopy(subset["tolerations"])]
    affinity = spec.get("affinity") or {}
    spec["affinity"] = affinity
    node_affinity = affinity.get("nodeAffinity") or {}
    affinity["nodeAffinity"] = node_affinity
    preferred = subset.get("preferredNodeSelectorTerms") or []
    if preferred:
        key = "preferredDuringSchedulingIgnoredDuringExecution"
        node_affinity[key] = [*(node_affinity.get(key) or []), *copy.deepcopy(preferred)]
    if subset.get("requiredNodeSelectorTerm") is not None:
        _merge_required(node_affinity, subset["requiredNodeSelectorTerm"])
    if subset.get("patch"):
        patched = patch_pod_template(pod, subset["patch"])
        new_spec = patched.setdefault("spec", {})
        if new_spec.get("priorityClassName") != spec.get("priorityClassName"):
            new_spec.pop("priority", None)
        pod = patched
    metadata = pod.setdefault("metadata", {})
    annotations = metadata.get("annotations") or {}
    metadata["annotations"] = annotations
    annotations[ANNOTATION_MATCHED] = MatchedSpread(ws["metadata"]["name"], subset_name, uid).to_json()
    return pod
