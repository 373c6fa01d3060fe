"""The child workload of one subset, and what the controller reads back from an existing one.

A child is the UnitedDeployment's template for its kind with, per subset: the subset-name and
revision labels (on the workload and its pods), the UnitedDeployment selector plus the subset-name
label as selector, the allocated replicas and partition, the subset's nodeSelectorTerm appended to
every required node-affinity term, its tolerations appended, and its `patch` strategically merged
into the pod template (and recorded in the `apps.kruise.io/subset-patch` annotation, so a changed
patch is noticed). Children are created with generateName `<ud>-<subset>-` (`<ud>-` when that
prefix is not a valid name).

Per kind, as upstream's subset adapters: a CloneSet takes the partition as
`updateStrategy.partition`; an Advanced or native StatefulSet as `rollingUpdate.partition`, unless
its template asks for `OnDelete` (then its partition is read back as the number of its pods not
yet at its revision); a Deployment has no partition at all.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.conditions import condition_of, is_true
from kruise.api.controllerref import new_controller_ref, with_controller
from kruise.api.keys import LABEL_KRUISE_CONTROLLER_REVISION_HASH, LABEL_SUBSET_NAME
from kruise.api.objects import labels_of, meta_of, section, spec_of, status_of
from kruise.api.uniteddeployment import Subset, UnitedDeployment
from kruise.api.validation import dns1123_subdomain_errors
from kruise.control.uniteddeployment.podpatch import patch_pod_template
from kruise.control.uniteddeployment.revision import go_raw_json

ANNOTATION_SUBSET_PATCH = "apps.kruise.io/subset-patch"

KIND_CLONESET = "CloneSet"
KIND_ADVANCED_STATEFULSET = "AdvancedStatefulSet"
KIND_STATEFULSET = "StatefulSet"
KIND_DEPLOYMENT = "Deployment"

TEMPLATE_KINDS = (
    ("statefulSetTemplate", KIND_STATEFULSET),
    ("advancedStatefulSetTemplate", KIND_ADVANCED_STATEFULSET),
    ("cloneSetTemplate", KIND_CLONESET),
    ("deploymentTemplate", KIND_DEPLOYMENT),
)
"""Upstream's precedence when (invalidly) more than one template is set."""

API_VERSIONS = {
    KIND_CLONESET: ("apps.kruise.io/v1alpha1", "CloneSet"),
    KIND_ADVANCED_STATEFULSET: ("apps.kruise.io/v1beta1", "StatefulSet"),
    KIND_STATEFULSET: ("apps/v1", "StatefulSet"),
    KIND_DEPLOYMENT: ("apps/v1", "Deployment"),
}


class SubsetTemplateError(ValueError):
    """The subset cannot be rendered (unknown subset, no template, bad patch)."""


def template_kind(ud: Mapping[str, Any]) -> str | None:
    """The child kind the UnitedDeployment's template asks for, or None without a template."""
    template = spec_of(ud).get("template") or {}
    for field, kind in TEMPLATE_KINDS:
        if template.get(field) is not None:
            return kind
    return None


def _template(ud: Mapping[str, Any], kind: str) -> dict[str, Any]:
    field = next(f for f, k in TEMPLATE_KINDS if k == kind)
    return section(ud["spec"], "template").get(field) or {}


def subset_prefix(ud_name: str, subset_name: str) -> str:
    prefix = f"{ud_name}-{subset_name}-"
    # NameIsDNSSubdomain(prefix, true): the trailing dash stands for the random suffix.
    if dns1123_subdomain_errors(prefix[:-1] + "a"):
        return f"{ud_name}-"
    return prefix


def attach_node_affinity(pod_spec: dict[str, Any], term: Mapping[str, Any] | None) -> None:
    """Append the subset's matchExpressions to every required node-selector term (creating one if none).

    As upstream, only `matchExpressions` of the subset term are used; `matchFields` are not.
    """
    expressions = (term or {}).get("matchExpressions") or []
    if not expressions:
        return
    affinity = pod_spec.setdefault("affinity", {}) or {}
    pod_spec["affinity"] = affinity
    node_affinity = affinity.setdefault("nodeAffinity", {}) or {}
    affinity["nodeAffinity"] = node_affinity
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {}) or {}
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    terms = required.get("nodeSelectorTerms") or [{}]
    required["nodeSelectorTerms"] = [
        {**t, "matchExpressions": [*(t.get("matchExpressions") or []), *copy.deepcopy(expressions)]}
        for t in terms
    ]


def attach_tolerations(pod_spec: dict[str, Any], tolerations: list[Any] | None) -> None:
    if tolerations is None:
        return
    pod_spec["tolerations"] = [*(pod_spec.get("tolerations") or []), *copy.deepcopy(tolerations)]


def _subset(ud: UnitedDeployment, name: str) -> Subset:
    for subset in ud.spec.topology.subsets or []:
        if subset.name == name:
            return subset
    raise SubsetTemplateError(f"fail to find subset config {name}")


def patch_annotation(subset: Subset) -> str:
    """The raw patch as recorded on the child; empty when the subset has none."""
    return "" if subset.patch is None else go_raw_json(subset.patch)


def render_child(
    ud_obj: Mapping[str, Any],
    ud: UnitedDeployment,
    subset_name: str,
    revision: str,
    replicas: int,
    partition: int,
    existing: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The child workload for the subset: a new object, or `existing` with its spec replaced.

    Labels and annotations of an existing child are kept and overlaid, as upstream's
    ApplySubsetTemplate does on the fetched object; its spec is rebuilt from the template.
    """
    kind = template_kind(ud_obj)
    if kind is None:
        raise SubsetTemplateError("spec.template: Required value: no workload template")
    subset = _subset(ud, subset_name)
    template = _template(ud_obj, kind)
    ud_meta = ud_obj["metadata"]
    child: dict[str, Any] = copy.deepcopy(dict(existing)) if existing is not None else {}
    api_version, child_kind = API_VERSIONS[kind]
    child["apiVersion"], child["kind"] = api_version, child_kind
    meta = child.setdefault("metadata", {})
    meta["namespace"] = ud_meta["namespace"]
    template_meta = template.get("metadata") or {}
    selector = copy.deepcopy((ud_obj["spec"].get("selector")) or {})
    labels = dict(section(meta, "labels"))
    labels.update(section(template_meta, "labels"))
    labels.update(section(selector, "matchLabels"))
    labels[LABEL_KRUISE_CONTROLLER_REVISION_HASH] = revision
    labels[LABEL_SUBSET_NAME] = subset_name
    meta["labels"] = labels
    annotations = dict(section(meta, "annotations"))
    annotations.update(section(template_meta, "annotations"))
    annotations[ANNOTATION_SUBSET_PATCH] = patch_annotation(subset)
    meta["annotations"] = annotations
    if existing is None:
        meta["generateName"] = subset_prefix(ud_meta["name"], subset_name)
    own = new_controller_ref({**ud_obj, "kind": "UnitedDeployment"}, api_version="apps.kruise.io/v1alpha1")
    meta["ownerReferences"] = with_controller(meta.get("ownerReferences") or [], own)

    spec = copy.deepcopy(spec_of(template))
    selector["matchLabels"] = {**section(selector, "matchLabels"), LABEL_SUBSET_NAME: subset_name}
    spec["selector"] = selector
    spec["replicas"] = replicas
    _set_partition(kind, spec, partition)
    pod_template = spec.setdefault("template", {})
    pod_meta = pod_template.setdefault("metadata", {})
    pod_meta["labels"] = {
        **section(pod_meta, "labels"),
        LABEL_SUBSET_NAME: subset_name,
        LABEL_KRUISE_CONTROLLER_REVISION_HASH: revision,
    }
    pod_spec = pod_template.setdefault("spec", {})
    attach_node_affinity(pod_spec, subset.node_selector_term)
    attach_tolerations(pod_spec, subset.tolerations)
    if subset.patch:
        spec["template"] = patch_pod_template(pod_template, subset.patch)
    child["spec"] = spec
    return child


def _set_partition(kind: str, spec: dict[str, Any], partition: int) -> None:
    """Write the partition where the kind keeps it (`spec` is already the template's copy).

    A StatefulSet template with no strategy type means RollingUpdate (the webhook does not default
    it); the native kind gets the type written out, the Advanced one keeps it empty, as upstream.
    """
    if kind == KIND_CLONESET:
        spec["updateStrategy"] = {**section(spec, "updateStrategy"), "partition": partition}
    elif kind in (KIND_STATEFULSET, KIND_ADVANCED_STATEFULSET):
        strategy = dict(section(spec, "updateStrategy"))
        if strategy.get("type") in (None, "", "RollingUpdate"):
            if kind == KIND_STATEFULSET:
                strategy["type"] = "RollingUpdate"
            strategy["rollingUpdate"] = {**section(strategy, "rollingUpdate"), "partition": partition}
        spec["updateStrategy"] = strategy


def set_max_unavailable(kind: str, body: dict[str, Any], value: int) -> None:
    """Upstream's `SetMaxUnavailable`: the rolling-update maxUnavailable of the kind, as an int."""
    spec = body.setdefault("spec", {})
    if kind == KIND_CLONESET:
        spec["updateStrategy"] = {**section(spec, "updateStrategy"), "maxUnavailable": value}
    elif kind == KIND_DEPLOYMENT:
        strategy = dict(section(spec, "strategy"))
        strategy["rollingUpdate"] = {**section(strategy, "rollingUpdate"), "maxUnavailable": value}
        spec["strategy"] = strategy
    else:
        strategy = dict(section(spec, "updateStrategy"))
        strategy["rollingUpdate"] = {**section(strategy, "rollingUpdate"), "maxUnavailable": value}
        spec["updateStrategy"] = strategy


# ---- reading children back -----------------------------------------------------------------------


@dataclass(frozen=True)
class Child:
    """An existing child workload as the controller sees it (upstream's `Subset`)."""

    subset_name: str
    name: str
    uid: str
    replicas: int
    partition: int | None
    revision: str
    patch: str
    status_replicas: int
    ready_replicas: int
    updated_replicas: int
    updated_ready_replicas: int
    obj: Mapping[str, Any]
    pods: tuple[Mapping[str, Any], ...] = ()
    """The child's pods (upstream's `SubsetPods`), read by adaptive scheduling."""


def subset_name_of(obj: Mapping[str, Any]) -> str | None:
    """The subset a child belongs to; None when the label is missing or empty (such children are ignored)."""
    name = labels_of(obj).get(LABEL_SUBSET_NAME)
    return name or None


def revision_of(obj: Mapping[str, Any]) -> str:
    return labels_of(obj).get(LABEL_KRUISE_CONTROLLER_REVISION_HASH, "")


def spec_partition(kind: str, obj: Mapping[str, Any], pods: Iterable[Mapping[str, Any]] = ()) -> int | None:
    """The child's partition as upstream's `GetSpecPartition` reads it (None: the kind has none).

    An `OnDelete` StatefulSet has no partition field; its pods not at the child's revision count
    as the partition instead.
    """
    spec = obj.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    if kind == KIND_CLONESET:
        value = strategy.get("partition")
        if value is None:
            return None
        if isinstance(value, str) and value.endswith("%"):
            replicas = int(spec.get("replicas") or 0)
            return -(-replicas * int(value[:-1]) // 100)
        return int(value)
    if kind in (KIND_STATEFULSET, KIND_ADVANCED_STATEFULSET):
        if strategy.get("type") == "OnDelete":
            revision = revision_of(obj)
            return sum(1 for pod in pods if revision_of(pod) != revision)
        value = section(strategy, "rollingUpdate").get("partition")
        return None if value is None else int(value)
    return None


def read_child(kind: str, obj: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], revision: str) -> Child:
    """The child with its updated (and updated-ready) replicas counted from its active pods."""
    meta = obj.get("metadata") or {}
    status = obj.get("status") or {}
    pods = list(pods)
    updated = updated_ready = 0
    for pod in pods:
        pod_meta = pod.get("metadata") or {}
        if revision_of(pod) != revision:
            continue
        phase = status_of(pod).get("phase")
        if pod_meta.get("deletionTimestamp") or phase in ("Succeeded", "Failed"):
            continue
        updated += 1
        if _pod_ready(pod):
            updated_ready += 1
    return Child(
        subset_name=subset_name_of(obj) or "",
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        replicas=int(spec_of(obj).get("replicas") or 0),
        partition=spec_partition(kind, obj, pods),
        revision=revision_of(obj),
        patch=section(meta, "annotations").get(ANNOTATION_SUBSET_PATCH, ""),
        status_replicas=int(status.get("replicas") or 0),
        ready_replicas=int(status.get("readyReplicas") or 0),
        updated_replicas=updated,
        updated_ready_replicas=updated_ready,
        obj=obj,
        pods=tuple(pods),
    )


def _pod_ready(pod: Mapping[str, Any]) -> bool:
    return is_true(condition_of(pod, "Ready"))


def needs_update(child: Child, revision: str, replicas: int, partition: int, patch: str) -> str | None:
    """Why the child must be rewritten (upstream's order of checks), or None."""
    if child.revision != revision:
        return "revision changed"
    if child.replicas != replicas:
        return "replicas changed"
    if (child.partition or 0) != partition:
        return "partition changed"
    if child.patch != patch:
        return "patch changed"
    if child.updated_replicas < child.status_replicas:
        return "still in updating progress"
    return None


# ---- native StatefulSet: pods stuck in a rolling update ------------------------------------------

_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def pod_ordinal(pod: Mapping[str, Any]) -> int:
    """The StatefulSet ordinal at the end of the pod's name, -1 when it has none."""
    match = _ORDINAL.match(meta_of(pod).get("name", ""))
    return int(match.group(2)) if match else -1


def stuck_pods(
    child: Mapping[str, Any], pods: Iterable[Mapping[str, Any]], revision: str, partition: int
) -> list[Mapping[str, Any]]:
    """Pods of a native RollingUpdate StatefulSet that its controller would wait on forever.

    kubernetes/kubernetes#67250: a pod at or above the partition, not yet at `revision` and not
    Ready blocks the rolling update; upstream's StatefulSet adapter deletes such pods after each
    update of the child so they come back at the new revision. OnDelete children are left alone.
    """
    strategy = section(child, "spec", "updateStrategy").get("type")
    if strategy == "OnDelete":
        return []
    return [
        pod
        for pod in pods
        if pod_ordinal(pod) >= partition and revision_of(pod) != revision and not _pod_ready(pod)
    ]
