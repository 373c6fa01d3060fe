"""Pods the WorkloadSpread controller finds without its annotation, and the subset each belongs to.

A pod created before its WorkloadSpread (or one that lost the `apps.kruise.io/matched-workloadspread`
annotation, or carries another WorkloadSpread's) was never placed by the webhook. Upstream's
controller adopts it into the subset its node fits best, as `getAndUpdateSuitableSubsetName` does:

- the pod must be bound (`spec.nodeName`) to a node that exists;
- a subset *matches* when every taint of the node (whatever its effect) is tolerated by the pod's
  tolerations plus the subset's, and — when the subset has a `requiredNodeSelectorTerm` — the node
  matches the pod's required node-affinity terms with the subset's term ANDed into each (the
  subset's term alone when the pod has none), `matchFields` included;
- among matching subsets the highest score wins, the first in spec order on a tie, where
  score = 100 × (sum of the weights of the subset's preferred terms the node matches)
        + 10 × (the subset's `patch` would not change the pod, annotations aside)
        + 1 × (the subset still has room: its missing replicas are above zero).

Missing replicas are counted per pod version, as upstream groups pods: a subset starts at its
scaled `maxReplicas` (2^31 − 1 when unlimited), every pod of that version already annotated into it
takes one, and each adopted pod takes one more. Pods are adopted oldest first (creation time, then
name) so the result does not depend on cache order. The adoption writes the annotation and, unless
the WorkloadSpread carries `workloadspread.kruise.io/ignore-patch-existing-pods-metadata: "true"`,
the `metadata` of the subset's patch (labels, annotations) onto the pod with a strategic merge patch.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kruise.api.objects import MutableObj, Obj, annotations_of, meta_of, section, spec_of
from kruise.control.common.nodeeligibility import find_untolerated_taint, matches_required_node_affinity
from kruise.control.uniteddeployment.podpatch import PatchError, patch_pod_template
from kruise.control.workloadspread.deletioncost import NO_SUBSET
from kruise.control.workloadspread.subsets import (
    ANNOTATION_MATCHED,
    INT32_MAX,
    MatchedSpread,
    MaxReplicasError,
    pod_version,
    scaled_max_replicas,
)

NodeLookup = Callable[[str], Mapping[str, Any] | None]
"""Node name → the Node, or None when it does not exist."""

IGNORE_PATCH_EXISTING_PODS = "workloadspread.kruise.io/ignore-patch-existing-pods-metadata"
PREFERRED_NODE_WEIGHT = 100
ALREADY_PATCHED_WEIGHT = 10
HAS_ROOM_WEIGHT = 1

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"


def _spec(pod: Obj) -> Mapping[str, Any]:
    return pod.get("spec") or {}


def tolerates_node(pod: Obj, node: Mapping[str, Any], subset: Mapping[str, Any]) -> bool:
    """Every taint of the node, NoSchedule, PreferNoSchedule or NoExecute alike, is tolerated by the
    pod's tolerations or the subset's (upstream passes no effect filter)."""
    tolerations = [*(_spec(pod).get("tolerations") or []), *(subset.get("tolerations") or [])]
    taints = spec_of(node).get("taints") or []
    return find_untolerated_taint(taints, tolerations, lambda _taint: True) is None


def joined_required_terms(pod: Obj, term: Mapping[str, Any]) -> list[MutableObj]:
    """The pod's required node-selector terms with the subset's term ANDed into each (its
    matchExpressions and matchFields appended), or just the subset's term when the pod has none."""
    affinity = section(_spec(pod), "affinity").get("nodeAffinity") or {}
    terms = copy.deepcopy(list(section(affinity, REQUIRED).get("nodeSelectorTerms") or []))
    if not terms:
        return [copy.deepcopy(dict(term))]
    for existing in terms:
        for key in ("matchExpressions", "matchFields"):
            extra = term.get(key) or []
            if extra:
                existing[key] = [*(existing.get(key) or []), *copy.deepcopy(list(extra))]
    return terms


def _terms_match(terms: Sequence[Mapping[str, Any]], node: Mapping[str, Any]) -> bool:
    """The scheduler's MatchNodeSelectorTerms: terms ORed, an empty or unparsable term never matches."""
    spec = {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": list(terms)}}}}
    return matches_required_node_affinity(spec, node)


def fits_required(pod: Obj, node: Mapping[str, Any], subset: Mapping[str, Any]) -> bool:
    """Taints tolerated and, when the subset has a required term, the joined terms match the node."""
    if not tolerates_node(pod, node, subset):
        return False
    term = subset.get("requiredNodeSelectorTerm")
    if term is None:
        return True
    return _terms_match(joined_required_terms(pod, term), node)


def preferred_node_score(subset: Mapping[str, Any], node: Mapping[str, Any]) -> int:
    """Sum of the weights of the subset's preferred terms the node matches (terms of weight 0 or
    with no requirement count for nothing; an unparsable term never matches)."""
    score = 0
    for preferred in subset.get("preferredNodeSelectorTerms") or []:
        weight = preferred.get("weight") or 0
        term = preferred.get("preference") or {}
        if not isinstance(weight, int) or not weight:
            continue
        if _terms_match([term], node):
            score += weight
    return score


def already_patched(pod: Obj, subset: Mapping[str, Any]) -> bool:
    """Whether the subset's patch, strategically merged into the pod, leaves it as it is — its
    annotations aside (upstream ignores them: JSON held in annotations compares unreliably). A
    subset without a patch, or a patch that does not apply, scores nothing."""
    patch = subset.get("patch")
    if patch is None:
        return False
    try:
        patched = patch_pod_template(dict(pod), patch)
    except PatchError:
        return False
    original = copy.deepcopy(dict(pod))
    patched.setdefault("metadata", {}).pop("annotations", None)
    original.setdefault("metadata", {}).pop("annotations", None)
    return patched == original


def subset_score(pod: Obj, node: Mapping[str, Any], subset: Mapping[str, Any], missing: int) -> int | None:
    """The subset's score for a pod on `node`, None when the subset does not match it."""
    if not fits_required(pod, node, subset):
        return None
    score = PREFERRED_NODE_WEIGHT * preferred_node_score(subset, node)
    if already_patched(pod, subset):
        score += ALREADY_PATCHED_WEIGHT
    if missing > 0:
        score += HAS_ROOM_WEIGHT
    return score


def favorite_subset(
    ws: Mapping[str, Any], pod: Obj, node: Mapping[str, Any], missing: Mapping[str, int]
) -> Mapping[str, Any] | None:
    """The matching subset with the highest score (the earliest on a tie), or None."""
    best: Mapping[str, Any] | None = None
    best_score = -1
    for subset in spec_of(ws).get("subsets") or []:
        score = subset_score(pod, node, subset, missing.get(subset.get("name") or "", 0))
        if score is not None and score > best_score:
            best, best_score = subset, score
    return best


def adoption_patch(ws: Mapping[str, Any], subset: Mapping[str, Any]) -> MutableObj:
    """The strategic merge patch that adopts a pod: the subset patch's `metadata` (unless the
    WorkloadSpread opts out with IGNORE_PATCH_EXISTING_PODS) plus the matched annotation."""
    metadata: MutableObj = {}
    ws_annotations = annotations_of(ws)
    ignore = str(ws_annotations.get(IGNORE_PATCH_EXISTING_PODS, "")).lower() == "true"
    patch = subset.get("patch")
    if not ignore and isinstance(patch, Mapping) and isinstance(patch.get("metadata"), Mapping):
        metadata = copy.deepcopy(dict(patch["metadata"]))
    matched = MatchedSpread(meta_of(ws).get("name") or "", subset["name"]).to_json()
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict):
        annotations[ANNOTATION_MATCHED] = matched
    else:
        metadata["annotations"] = {ANNOTATION_MATCHED: matched}
    return {"metadata": metadata}


def annotated_subset(ws: Mapping[str, Any], pod: Obj) -> str | None:
    """The subset this WorkloadSpread's annotation on the pod names (possibly one no longer in the
    spec), or None when the pod is not annotated for it (no, unreadable, another WorkloadSpread's,
    or an empty subset): such a pod is a candidate for adoption."""
    matched = MatchedSpread.of(pod)
    name = meta_of(ws).get("name") or ""
    if matched is None or matched.name != name or not matched.subset:
        return None
    return matched.subset


def _quota(subset: Mapping[str, Any], workload_replicas: int) -> int:
    limit = subset.get("maxReplicas")
    if limit is None:
        return INT32_MAX
    try:
        return scaled_max_replicas(limit, workload_replicas)
    except MaxReplicasError:
        return 0


def _age(pod: Obj) -> tuple[str, str]:
    meta = pod.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("name") or ""))


@dataclass(frozen=True)
class Adoption:
    """A pod to adopt into `subset` with `patch` (strategic merge)."""

    pod: Obj
    subset: str
    patch: MutableObj


@dataclass
class Grouping:
    """Pods by version and subset, by subset, and the adoptions that put unannotated pods there."""

    versioned: dict[str, dict[str, list[Obj]]] = field(default_factory=dict)
    by_subset: dict[str, list[Obj]] = field(default_factory=dict)
    adoptions: list[Adoption] = field(default_factory=list)

    def replace(self, patched: Mapping[str, Obj]) -> None:
        """Swap pods (by name) for their patched copies, as upstream's Patch refreshes the pod."""

        def swap(pods: list[Obj]) -> list[Obj]:
            return [patched.get(meta_of(p).get("name") or "", p) for p in pods]

        self.by_subset = {k: swap(v) for k, v in self.by_subset.items()}
        self.versioned = {v: {k: swap(ps) for k, ps in g.items()} for v, g in self.versioned.items()}


def group_and_adopt(
    ws: Mapping[str, Any], pods: Sequence[Obj], workload_replicas: int, node_of: NodeLookup
) -> Grouping:
    """Group pods by version and subset, adopting unannotated bound pods into their best subset.

    Pods annotated into a subset no longer in the spec, and pods no subset fits, fall in NO_SUBSET.
    """
    subsets = list(spec_of(ws).get("subsets") or [])
    names = [s.get("name") or "" for s in subsets]
    out = Grouping(by_subset={NO_SUBSET: [], **{n: [] for n in names}})
    by_version: dict[str, list[Obj]] = {}
    for pod in pods:
        by_version.setdefault(pod_version(pod), []).append(pod)
    for version, members in by_version.items():
        group: dict[str, list[Obj]] = {NO_SUBSET: [], **{n: [] for n in names}}
        missing = {s.get("name") or "": _quota(s, workload_replicas) for s in subsets}
        for pod in members:
            subset = annotated_subset(ws, pod)
            if subset is not None and subset in missing:
                missing[subset] -= 1
        for pod in sorted(members, key=_age):
            subset = annotated_subset(ws, pod)
            if subset is None:
                subset = _adopt(ws, pod, missing, node_of, out.adoptions)
            key = subset if subset in group else NO_SUBSET
            group[key].append(pod)
            out.by_subset[key].append(pod)
        out.versioned[version] = group
    return out


def _adopt(
    ws: Mapping[str, Any], pod: Obj, missing: dict[str, int], node_of: NodeLookup, adoptions: list[Adoption]
) -> str:
    node_name = _spec(pod).get("nodeName") or ""
    node = node_of(node_name) if node_name else None
    if node is None:
        return NO_SUBSET
    subset = favorite_subset(ws, pod, node, missing)
    if subset is None:
        return NO_SUBSET
    name = subset["name"]
    missing[name] -= 1
    adoptions.append(Adoption(pod, name, adoption_patch(ws, subset)))
    return name


__all__ = [
    "IGNORE_PATCH_EXISTING_PODS",
    "Adoption",
    "Grouping",
    "adoption_patch",
    "already_patched",
    "annotated_subset",
    "favorite_subset",
    "fits_required",
    "group_and_adopt",
    "joined_required_terms",
    "preferred_node_score",
    "subset_score",
    "tolerates_node",
]
