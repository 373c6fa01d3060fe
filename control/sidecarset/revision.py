"""SidecarSet ControllerRevisions: what one holds, which one is the latest, which may go.

Upstream (`sidecarcontrol/history_control.go`, `sidecarset_processor.go`) records every distinct
sidecar part of a SidecarSet as a ControllerRevision in kruise's own namespace (a SidecarSet is
cluster-scoped), labelled `kruise.io/sidecarset-name`. Its data is the strategic-merge patch
`{"spec":{"$patch":"replace","containers":…,"initContainers":…,"volumes":…,"imagePullSecrets":…,
"patchPodMetadata":…}}` and its name `<sidecarset>-<hash>`, hashed like every Kubernetes revision
(`kruise.control.common.revision`). The pod webhook later restores such a revision to inject an older
sidecar version (`injectionStrategy.revision`); pods record the revision they got in their
`kruise.io/sidecarset-hash` entry (`controllerRevision`), which keeps it from being pruned.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kruise.api.controllerref import controller_of, new_controller_ref
from kruise.api.keys import (
    ANNOTATION_SIDECARSET_HASH,
    ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
    LABEL_CONTROLLER_HASH,
    LABEL_SIDECARSET_CUSTOM_VERSION,
)
from kruise.api.objects import Obj, meta_of, section, spec_of, status_of
from kruise.api.sidecarset import REVISION_POLICY_PARTIAL as POLICY_PARTIAL
from kruise.control.common.revision import (
    controller_revision_name,
    go_json,
    hash_revision_data,
    next_revision_number,
    revisions_equal,
    sort_revisions,
)
from kruise.control.sidecarset import gojson
from kruise.control.sidecarset.hashing import sidecarset_hash, sidecarset_hash_without_image
from kruise.control.sidecarset.matching import selector_matches

LABEL_SIDECARSET_NAME = "kruise.io/sidecarset-name"
DEFAULT_HISTORY_LIMIT = 10
# The spec fields a revision records; everything else (selector, strategies) is not versioned.
RECORDED_FIELDS: tuple[tuple[str, str | None], ...] = (
    ("containers", "[SidecarContainer]"),
    ("initContainers", "[SidecarContainer]"),
    ("volumes", None),
    ("imagePullSecrets", None),
    ("patchPodMetadata", None),
)


class PartitionError(ValueError):
    """A string `updateStrategy.partition` that is not a percentage (Partial policy cannot use it)."""


class RevisionNotFound(LookupError):
    """The revision `injectionStrategy.revision` names is not stored; upstream's webhook answers 500."""


def _meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def custom_version(sidecarset: Obj) -> str:
    """v1alpha1 keeps it in a label, v1beta1 in `spec.customVersion`; either names the revision."""
    version = (spec_of(sidecarset).get("customVersion")) or ""
    return version or section(_meta(sidecarset), "labels").get(LABEL_SIDECARSET_CUSTOM_VERSION, "")


def _go_shaped(value: Any, kind: str | None) -> Any:
    """The field as `runtime.Encode` of the typed SidecarSet then `json.Unmarshal` would hold it:
    omitempty lists vanish (so the patch says null), sidecar containers lose zero fields."""
    if not value:
        return None
    if kind is None:
        return value
    return json.loads(gojson.dumps(gojson.to_go(value, kind)))


def revision_data(sidecarset: Obj) -> dict[str, Any]:
    """`getPatch`: the sidecar part of the spec as a replacing strategic-merge patch."""
    spec = sidecarset.get("spec") or {}
    recorded: dict[str, Any] = {"$patch": "replace"}
    for name, kind in RECORDED_FIELDS:
        recorded[name] = _go_shaped(spec.get(name), kind)
    return {"spec": recorded}


def new_revision(sidecarset: Obj, namespace: str, number: int, collision_count: int) -> dict[str, Any]:
    """`NewRevision`: labels are the SidecarSet's plus the hash and name labels; annotations its own."""
    meta = _meta(sidecarset)
    data = revision_data(sidecarset)
    hash_ = hash_revision_data(go_json(data), collision_count)
    labels = dict(section(meta, "labels"))
    labels[LABEL_CONTROLLER_HASH] = hash_
    version = custom_version(sidecarset)
    if version:
        labels[LABEL_SIDECARSET_CUSTOM_VERSION] = version
    labels[LABEL_SIDECARSET_NAME] = meta["name"]
    owner = new_controller_ref(sidecarset, api_version="apps.kruise.io/v1alpha1", kind="SidecarSet")
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {
            "name": controller_revision_name(meta["name"], hash_),
            "namespace": namespace,
            "labels": labels,
            "ownerReferences": [owner],
        },
        "data": data,
        "revision": number,
    }
    annotations = dict(section(meta, "annotations"))
    if annotations:
        body["metadata"]["annotations"] = annotations
    return body


def owned_revisions(sidecarset: Obj, revisions: Iterable[Obj], namespace: str) -> list[Obj]:
    """`ListControllerRevisions` with the name selector: in kruise's namespace, labelled with this
    SidecarSet's name, and controlled by it or by nothing (a recreated SidecarSet adopts them)."""
    meta = _meta(sidecarset)
    uid = meta.get("uid")
    out = []
    for revision in revisions:
        rmeta = _meta(revision)
        if rmeta.get("namespace") != namespace:
            continue
        if section(rmeta, "labels").get(LABEL_SIDECARSET_NAME) != meta.get("name"):
            continue
        controller = controller_of(revision)
        if controller is None or controller.get("uid") == uid:
            out.append(revision)
    return sort_revisions(out)


@dataclass(frozen=True)
class LatestChoice:
    """`registerLatestRevision`'s decision: reuse the newest, roll an equal older one forward by
    patching its number to `number`, or create `revision` (retrying on a hash collision)."""

    action: str
    revision: Obj
    number: int


def choose_latest(
    sidecarset: Obj, ordered: Sequence[Obj], namespace: str, collision_count: int
) -> LatestChoice:
    """`ordered` as `owned_revisions` returns it (oldest first)."""
    number = next_revision_number(ordered)
    candidate = new_revision(sidecarset, namespace, number, collision_count)
    equal = [r for r in ordered if revisions_equal(r, candidate)]
    if equal and revisions_equal(ordered[-1], equal[-1]):
        return LatestChoice("reuse", ordered[-1], number)
    if equal:
        return LatestChoice("rollback", equal[-1], number)
    return LatestChoice("create", candidate, number)


def pod_revision(pod: Obj, name: str) -> str:
    """`GetPodSidecarSetControllerRevision`: the revision the pod's hash record names."""
    raw = section(_meta(pod), "annotations").get(ANNOTATION_SIDECARSET_HASH)
    try:
        records = json.loads(raw) if raw else {}
    except ValueError:
        return ""
    record = records.get(name) if isinstance(records, dict) else None
    return str(record.get("controllerRevision") or "") if isinstance(record, dict) else ""


def active_revision_names(sidecarset: Obj, pods: Iterable[Obj], revisions: Sequence[Obj]) -> set[str]:
    """`filterActiveRevisions`: revisions a pod runs and the ones injection may still ask for."""
    name = _meta(sidecarset).get("name", "")
    active = {rev for pod in pods if (rev := pod_revision(pod, name))}
    wanted = section(sidecarset, "spec", "injectionStrategy").get("revision") or {}
    if wanted.get("revisionName"):
        active.add(wanted["revisionName"])
    if wanted.get("customVersion") is not None:
        tagged = [
            r
            for r in revisions
            if section(_meta(r), "labels").get(LABEL_SIDECARSET_CUSTOM_VERSION) == wanted["customVersion"]
        ]
        if tagged:
            active.add(_meta(sort_revisions(tagged)[-1])["name"])
    return active


def revisions_to_delete(sidecarset: Obj, ordered: Sequence[Obj], pods: Iterable[Obj]) -> list[str]:
    """`truncateHistory`: beyond `revisionHistoryLimit` (at least 1) stored revisions, delete the
    oldest ones nothing uses; the newest (the latest revision) is never deleted. Unlike CloneSet's
    rule the limit counts every stored revision, used or not, so history may stay above it."""
    limit = spec_of(sidecarset).get("revisionHistoryLimit")
    limit = DEFAULT_HISTORY_LIMIT if limit is None else max(1, int(limit))
    excess = len(ordered) - limit
    if excess <= 0:
        return []
    active = active_revision_names(sidecarset, pods, ordered)
    doomed: list[str] = []
    for revision in ordered[:-1]:
        if len(doomed) >= excess:
            break
        if _meta(revision)["name"] not in active:
            doomed.append(_meta(revision)["name"])
    return doomed


def revision_for_injection(sidecarset: Obj, revisions: Iterable[Obj], namespace: str) -> Obj | None:
    """`getControllerRevision`: by `revisionName` (any revision in kruise's namespace) or the newest
    revision of this SidecarSet carrying the `customVersion` label; None when neither is asked."""
    wanted = section(sidecarset, "spec", "injectionStrategy").get("revision") or {}
    in_namespace = [r for r in revisions if _meta(r).get("namespace") == namespace]
    name = wanted.get("revisionName")
    if name is not None:
        found = next((r for r in in_namespace if _meta(r).get("name") == name), None)
        if found is None:
            raise RevisionNotFound(f'controllerrevisions.apps "{name}" not found')
        return found
    version = wanted.get("customVersion")
    if version is None:
        return None
    set_name = _meta(sidecarset).get("name")
    tagged = [
        r
        for r in in_namespace
        if section(_meta(r), "labels").get(LABEL_SIDECARSET_NAME) == set_name
        and section(_meta(r), "labels").get(LABEL_SIDECARSET_CUSTOM_VERSION) == version
    ]
    if not tagged:
        raise RevisionNotFound(f'ControllerRevision.apps "{set_name}" not found')
    return sort_revisions(tagged)[-1]


def restore(sidecarset: Obj, revision: Obj) -> dict[str, Any]:
    """`GetHistorySidecarSet`: the SidecarSet with the revision's patch applied, its hash
    annotations and `status.latestRevision` those of the revision.

    The patch's `$patch: replace` replaces the whole spec, so the result carries only the recorded
    sidecar fields (null ones dropped) — enough to inject from, as upstream's restored object is.
    """
    restored = copy.deepcopy(dict(sidecarset))
    patch = dict((section(revision, "data").get("spec")) or {})
    patch.pop("$patch", None)
    restored["spec"] = {k: copy.deepcopy(v) for k, v in patch.items() if v is not None}
    meta = dict(meta_of(restored))
    annotations = dict(section(meta, "annotations"))
    recorded = _meta(revision).get("annotations") or {}
    annotations[ANNOTATION_SIDECARSET_HASH] = recorded.get(ANNOTATION_SIDECARSET_HASH) or sidecarset_hash(
        restored["spec"]
    )
    annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] = recorded.get(
        ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE
    ) or sidecarset_hash_without_image(restored["spec"])
    meta["annotations"] = annotations
    restored["metadata"] = meta
    restored["status"] = {**status_of(restored), "latestRevision": _meta(revision)["name"]}
    return restored


def partition_probability(partition: int | str | None) -> float | None:
    """`ParsePercentageAsFloat64` for a `"N%"` partition; None for an int or no partition."""
    if partition is None or isinstance(partition, int):
        return None
    text = str(partition)
    if not text.endswith("%"):
        raise PartitionError(f"spec.updateStrategy.partition: invalid percentage value {text!r}")
    try:
        return float(text[:-1]) / 100
    except ValueError as exc:
        raise PartitionError(f"spec.updateStrategy.partition: invalid percentage value {text!r}") from exc


def sidecarset_for_new_pod(
    sidecarset: Obj,
    pod: Obj,
    revisions: Iterable[Obj],
    namespace: str,
    draw: Callable[[], float],
) -> Obj:
    """`getSuitableRevisionSidecarSet` for a pod CREATE: which version of the sidecars it gets.

    No `injectionStrategy.revision`: the SidecarSet as it is. Otherwise the named revision, always
    (policy Always, or while `updateStrategy.paused`), or with policy Partial: a pod outside
    `updateStrategy.selector` gets the old revision; any other pod gets it with the probability a
    percentage `partition` gives (`draw()` in [0, 1) at or under it), else the latest sidecars.
    """
    spec = sidecarset.get("spec") or {}
    wanted = section(spec, "injectionStrategy").get("revision") or {}
    if wanted.get("revisionName") is None and wanted.get("customVersion") is None:
        return sidecarset
    revision = revision_for_injection(sidecarset, revisions, namespace)
    if revision is None:
        return sidecarset
    historic = restore(sidecarset, revision)
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("paused") or wanted.get("policy") != POLICY_PARTIAL:
        return historic
    selector = strategy.get("selector")
    if selector is not None and not selector_matches(selector, section(_meta(pod), "labels")):
        return historic
    probability = partition_probability(strategy.get("partition"))
    if probability is None:
        return sidecarset
    return historic if draw() <= probability else sidecarset
