"""PodProbeMarker on serverless pods (gate EnablePodProbeMarkerOnServerless), pure.

A pod on a virtual-kubelet node (label `type=virtual-kubelet`) has no kruise-daemon beside it, so no
NodePodProbe runs its probes. Instead, as upstream, the pod webhook writes the probes of the markers
that match a new pod into its `kruise.io/podprobe` annotation (JSON list of probes, marker policies
left out) and their names into `kruise.io/podprobemarker-list`; the serverless runtime runs them and
reports each result as the pod condition of the probe's `podConditionType` (True = Succeeded,
False = Failed). The PodProbeMarker controller then applies the markers' `markerPolicy` from those
conditions: the labels/annotations of the policy whose state matches are set (never removed — upstream
only adds), patched into the pod's metadata.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from kruise.api.common import LabelSelector
from kruise.api.conditions import condition_of
from kruise.api.crr import VIRTUAL_KUBELET_LABEL_KEY, VIRTUAL_KUBELET_LABEL_VALUE
from kruise.api.keys import ANNOTATION_PODPROBE, ANNOTATION_PODPROBEMARKER_LIST
from kruise.api.objects import Obj, conditions_of, meta_of, section, spec_of
from kruise.api.podprobemarker import PROBE_FAILED, PROBE_SUCCEEDED, PROBE_UNKNOWN
from kruise.control.enhancedliveness.probecontext import go_ordered_probe

# ProbeState.IsEqualPodConditionStatus: the probe state a pod condition's status stands for
_STATE_OF_STATUS = {"True": PROBE_SUCCEEDED, "False": PROBE_FAILED}


def is_serverless_node(node: Obj | None) -> bool:
    """A virtual-kubelet node: no kruise-daemon runs there, so it has no NodePodProbe."""
    labels = meta_of(node or {}).get("labels") or {}
    return labels.get(VIRTUAL_KUBELET_LABEL_KEY) == VIRTUAL_KUBELET_LABEL_VALUE


def markers_for_pod(pod: Obj, in_namespace: Iterable[Obj]) -> list[Obj]:
    """podprobemarker.GetPodProbeMarkerForPod: the markers named in the pod's
    `kruise.io/podprobemarker-list` annotation when it has one (those that no longer exist are
    skipped), else those of its namespace whose selector matches its labels. A marker with an empty
    or invalid selector matches nothing. Listed markers come in name order (upstream's cache order
    is arbitrary; a stable one keeps the first-wins rules below reproducible)."""
    meta = pod.get("metadata") or {}
    candidates = sorted(in_namespace, key=lambda m: meta_of(m).get("name") or "")
    listed = section(meta, "annotations").get(ANNOTATION_PODPROBEMARKER_LIST) or ""
    if listed:
        by_name = {meta_of(m).get("name"): m for m in candidates}
        return [by_name[name] for name in listed.split(",") if name in by_name]
    labels = meta.get("labels") or {}
    matched = []
    for ppm in candidates:
        raw = spec_of(ppm).get("selector")
        if not raw:
            continue
        try:
            selector = LabelSelector.model_validate(raw)
            if selector.is_empty() or not selector.matches(labels):
                continue
        except ValueError:  # an invalid selector cannot be fixed by waiting
            continue
        matched.append(ppm)
    return matched


def probed_containers(pod: Obj) -> set[str]:
    """Containers a probe may target: the app containers and the restartable (sidecar) init ones."""
    spec = pod.get("spec") or {}
    names = {c.get("name") or "" for c in spec.get("containers") or []}
    names.update(
        c.get("name") or "" for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"
    )
    return names


def select_probes(pod: Obj, markers: Iterable[Obj]) -> tuple[list[dict[str, Any]], list[str]]:
    """The probes the pod carries and the names of the markers they come from (sorted).

    A probe counts only with a `podConditionType` (its result has nowhere else to go) and for a
    container the pod has; the first probe wins per condition type and per `container/probe` name,
    in marker order then probe order. `markerPolicy` is left out: the controller applies it.
    """
    containers = probed_containers(pod)
    seen_conditions: set[str] = set()
    seen_keys: set[str] = set()
    names: set[str] = set()
    probes: list[dict[str, Any]] = []
    for ppm in markers:
        for probe in spec_of(ppm).get("probes") or []:
            condition_type = probe.get("podConditionType") or ""
            key = f"{probe.get('containerName', '')}/{probe.get('name', '')}"
            if not condition_type or condition_type in seen_conditions or key in seen_keys:
                continue
            if probe.get("containerName") not in containers:
                continue
            seen_conditions.add(condition_type)
            seen_keys.add(key)
            names.add(meta_of(ppm).get("name") or "")
            probes.append(probe)
    return probes, sorted(names)


def probe_json(probes: Iterable[Obj]) -> str:
    """The `kruise.io/podprobe` value as Go's encoding/json writes []PodContainerProbe: struct field
    order (name, containerName, probe, podConditionType), empty fields omitted, compact."""
    entries = []
    for probe in probes:
        entry: dict[str, Any] = {
            "name": probe.get("name") or "",
            "containerName": probe.get("containerName") or "",
            "probe": go_ordered_probe(section(probe, "probe")),
        }
        if probe.get("podConditionType"):
            entry["podConditionType"] = probe["podConditionType"]
        entries.append(entry)
    return json.dumps(entries, separators=(",", ":"), ensure_ascii=False)


def annotate_new_pod(pod: dict[str, Any], markers: Iterable[Obj]) -> bool:
    """Write the two annotations into a pod being created, in place; True when it changed."""
    probes, names = select_probes(pod, markers_for_pod(pod, markers))
    if not probes:
        return False
    annotations = pod.setdefault("metadata", {}).setdefault("annotations", {})
    wanted = {ANNOTATION_PODPROBE: probe_json(probes), ANNOTATION_PODPROBEMARKER_LIST: ",".join(names)}
    if all(annotations.get(k) == v for k, v in wanted.items()):
        return False
    annotations.update(wanted)
    return True


def condition_state(status: str | None) -> str:
    return _STATE_OF_STATUS.get(status or "", PROBE_UNKNOWN)


def marks_from_conditions(pod: Obj, ppm: Obj) -> dict[str, Any] | None:
    """markServerlessPod: a merge patch setting the labels/annotations of every marker policy whose
    state matches the status of the pod's condition of the probe's `podConditionType`; None when the
    pod already carries them all (or has none of those conditions yet)."""
    meta = pod.get("metadata") or {}
    wanted: dict[str, dict[str, str]] = {"labels": {}, "annotations": {}}
    for probe in spec_of(ppm).get("probes") or []:
        condition_type = probe.get("podConditionType") or ""
        if not condition_type or not probe.get("markerPolicy"):
            continue
        condition = condition_of(pod, condition_type)
        if condition is None:
            continue
        state = condition_state(condition.get("status"))
        for policy in probe["markerPolicy"]:
            if policy.get("state") != state:
                continue
            for field in ("labels", "annotations"):
                wanted[field].update(section(policy, field))
    patch: dict[str, Any] = {}
    for field, values in wanted.items():
        current = meta.get(field) or {}
        diff = {k: v for k, v in values.items() if current.get(k) != v}
        if diff:
            patch[field] = diff
    return {"metadata": patch} if patch else None


def changed_condition_types(old: Obj, new: Obj) -> set[str]:
    """diffPodConditions: types of the new pod's conditions that are new or changed status."""
    before = {c.get("type"): c.get("status") for c in conditions_of(old)}
    return {
        c.get("type") or ""
        for c in conditions_of(new)
        if c.get("type") not in before or before[c.get("type")] != c.get("status")
    }


def markers_probing(markers: Iterable[Obj], condition_types: set[str]) -> list[Obj]:
    """The markers with a probe reporting into one of these condition types."""
    return [
        m
        for m in markers
        if any((p.get("podConditionType") or "") in condition_types for p in spec_of(m).get("probes") or [])
    ]


def split_by_node(pods: Iterable[Obj], node_of: Callable[[str], Obj | None]) -> tuple[list[Obj], list[Obj]]:
    """(normal, serverless) pods by the node they are bound to; pods whose node is unknown are in
    neither, as upstream's getMatchingPods skips them."""
    normal: list[Obj] = []
    serverless: list[Obj] = []
    for pod in pods:
        node = node_of(spec_of(pod).get("nodeName") or "")
        if node is None:
            continue
        (serverless if is_serverless_node(node) else normal).append(pod)
    return normal, serverless
