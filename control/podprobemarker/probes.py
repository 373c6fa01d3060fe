"""PodProbeMarker / NodePodProbe planning (pure): which probes each node runs, and what a result does.

The PodProbeMarker controller turns each PodProbeMarker into entries of the NodePodProbe named after
the node of every matching pod (active, Initialized, bound): one `podProbes[]` entry per pod (name,
namespace, uid, IP) holding the marker's probes as `<ppm>#<probe>`, with named tcpSocket/httpGet
ports resolved against the container's ports. kruise-daemon runs them and writes
`status.podProbeStatuses`. The NodePodProbe controller drops entries whose pod is gone (or replaced:
different uid) and writes each result into its pod: the probe's `podConditionType` condition (True
for Succeeded, else False; message from the probe) and the marker policy — labels/annotations of the
policy whose state matches are set, those of the opposite policy removed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

from kruise.api.common import LabelSelector
from kruise.api.conditions import condition_of, set_condition
from kruise.api.objects import (
    Obj,
    conditions_of,
    containers_of,
    labels_of,
    meta_of,
    section,
    spec_of,
    status_of,
)
from kruise.api.podprobemarker import PROBE_SUCCEEDED
from kruise.control.common import podstatus


def probe_key(ppm_name: str, probe_name: str) -> str:
    return f"{ppm_name}#{probe_name}"


def split_probe_key(name: str) -> tuple[str, str] | None:
    ppm, sep, probe = name.partition("#")
    return (ppm, probe) if sep and ppm and probe else None


def matching_pods(ppm: Obj, pods: Iterable[Obj]) -> list[Obj]:
    """Pods of the marker's namespace its selector matches that are active, Initialized and bound."""
    spec = ppm.get("spec") or {}
    if not spec.get("selector"):
        return []
    selector = LabelSelector.model_validate(spec["selector"])
    matched = []
    for pod in pods:
        initialized = condition_of(pod, "Initialized")
        if not podstatus.is_active(pod) or not spec_of(pod).get("nodeName"):
            continue
        if initialized is None or initialized.get("status") != "True":
            continue
        if selector.matches(labels_of(pod)):
            matched.append(pod)
    return matched


def _resolve_port(port: Any, container: Obj | None) -> int | None:
    if isinstance(port, int) and not isinstance(port, bool):
        return port
    if container is None:
        return None
    for item in container.get("ports") or []:
        if item.get("name") == port:
            return int(item["containerPort"])
    return None


def container_probe(ppm_name: str, probe: Obj, pod: Obj) -> dict[str, Any] | None:
    """The NodePodProbe form of one marker probe for one pod; None when a named port is unknown."""
    body = copy.deepcopy(dict(section(probe, "probe")))
    container = next(
        (c for c in containers_of(pod) if c.get("name") == probe.get("containerName")),
        None,
    )
    for handler in ("tcpSocket", "httpGet"):
        if body.get(handler) is not None:
            port = _resolve_port(body[handler].get("port"), container)
            if port is None:
                return None
            body[handler]["port"] = port
    return {
        "name": probe_key(ppm_name, probe["name"]),
        "containerName": probe.get("containerName", ""),
        "probe": body,
    }


def merge_probes(spec: Obj, ppm: Obj, pods: Iterable[Obj]) -> dict[str, Any]:
    """The NodePodProbe spec with the marker's probes set for each pod (others' probes untouched)."""
    entries = copy.deepcopy(list(spec.get("podProbes") or []))
    name = ppm["metadata"]["name"]
    for pod in pods:
        meta = pod["metadata"]
        ip = status_of(pod).get("podIP") or ""
        identity = (meta["name"], meta["namespace"], meta["uid"])
        entry = next(
            (e for e in entries if (e.get("name"), e.get("namespace"), e.get("uid")) == identity), None
        )
        if entry is None:
            entry = {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"], "IP": ip}
            entries.append(entry)
        elif not entry.get("IP"):
            entry["IP"] = ip
        probes = entry.setdefault("probes", [])
        for probe in spec_of(ppm).get("probes") or []:
            wanted = container_probe(name, probe, pod)
            if wanted is None:
                continue
            index = next((i for i, p in enumerate(probes) if p.get("name") == wanted["name"]), None)
            if index is None:
                probes.append(wanted)
            else:
                probes[index] = wanted
    return {"podProbes": entries} if entries else {}


def remove_marker(spec: Obj, namespace: str, ppm_name: str) -> dict[str, Any]:
    """The spec without the marker's probes; a pod entry left with no probe goes too."""
    entries = []
    prefix = f"{ppm_name}#"
    for entry in spec.get("podProbes") or []:
        if entry.get("namespace") != namespace:
            entries.append(copy.deepcopy(entry))
            continue
        kept = [
            copy.deepcopy(p) for p in entry.get("probes") or [] if not p.get("name", "").startswith(prefix)
        ]
        if kept:
            entries.append({**copy.deepcopy(entry), "probes": kept})
    return {"podProbes": entries} if entries else {}


def prune_pods(spec: Obj, live: Callable[[str, str, str], bool]) -> dict[str, Any]:
    """The spec without entries whose pod is gone, inactive or replaced (`live(ns, name, uid)`)."""
    entries = [
        copy.deepcopy(e)
        for e in spec.get("podProbes") or []
        if live(e.get("namespace", ""), e.get("name", ""), e.get("uid", ""))
    ]
    return {"podProbes": entries} if entries else {}


def apply_results(
    pod: Obj, states: Iterable[Obj], marker: Callable[[str], Obj | None]
) -> dict[str, Any] | None:
    """The pod with its probe results written (conditions, labels, annotations); None if unchanged.

    `marker(name)` returns the live PodProbeMarker of the pod's namespace, or None when it is gone or
    being deleted (its results are then ignored).
    """
    new = copy.deepcopy(dict(pod))
    meta = new.setdefault("metadata", {})
    conditions = new.setdefault("status", {}).setdefault("conditions", [])
    seen_types: set[str] = set()
    to_set: dict[str, dict[str, str]] = {"labels": {}, "annotations": {}}
    to_remove: dict[str, set[str]] = {"labels": set(), "annotations": set()}
    for state in states:
        if not state.get("state"):
            continue
        parsed = split_probe_key(state.get("name") or "")
        if parsed is None:
            continue
        ppm = marker(parsed[0])
        if ppm is None:
            continue
        probe = next((p for p in spec_of(ppm).get("probes") or [] if p.get("name") == parsed[1]), None)
        if probe is None:
            continue
        condition_type = probe.get("podConditionType") or ""
        if condition_type and condition_type not in seen_types:
            seen_types.add(condition_type)
            wanted = {
                "type": condition_type,
                "status": "True" if state["state"] == PROBE_SUCCEEDED else "False",
                "lastProbeTime": state.get("lastProbeTime"),
                "lastTransitionTime": state.get("lastTransitionTime"),
                "message": state.get("message") or "",
            }
            # util.SetPodConditionIfMsgChanged: replaced when status or message changed
            written = {k: v for k, v in wanted.items() if v is not None}
            conditions[:] = set_condition(conditions, written, same=("status", "message"))
        for policy in probe.get("markerPolicy") or []:
            matched = policy.get("state") == state["state"]
            for field in ("labels", "annotations"):
                for key, value in section(policy, field).items():
                    if matched:
                        to_set[field][key] = value
                    else:
                        to_remove[field].add(key)
    # Removals first: both policies of a probe often set the same key to different values, and the
    # matched policy's value must win.
    for field in ("labels", "annotations"):
        target = meta.setdefault(field, {})
        for key in to_remove[field]:
            target.pop(key, None)
        target.update(to_set[field])
    for field in ("labels", "annotations"):
        if not meta.get(field) and field not in meta_of(pod):
            meta.pop(field, None)
    return None if new == pod else new


def holds_marker(spec: Obj, namespace: str, ppm_name: str) -> bool:
    """Whether a NodePodProbe spec runs any probe of this marker."""
    prefix = f"{ppm_name}#"
    return any(
        p.get("name", "").startswith(prefix)
        for e in spec.get("podProbes") or []
        if e.get("namespace") == namespace
        for p in e.get("probes") or []
    )


def set_marker(spec: Obj, ppm: Obj, pods: Iterable[Obj]) -> dict[str, Any]:
    """The spec with exactly the marker's current probes on exactly `pods` (this node's matching ones).

    Probes of a pod that stopped matching, and probes the marker no longer lists, are dropped.
    """
    meta = ppm["metadata"]
    return merge_probes(remove_marker(spec, meta.get("namespace", ""), meta["name"]), ppm, pods)


def _canonical(spec: Obj) -> list[Any]:
    entries = []
    for e in spec.get("podProbes") or []:
        probes = sorted((p for p in e.get("probes") or []), key=lambda p: p.get("name", ""))
        entries.append(({k: v for k, v in e.items() if k != "probes"}, probes))
    return sorted(entries, key=lambda item: (item[0].get("namespace", ""), item[0].get("name", ""),
                                             item[0].get("uid", "")))  # fmt: skip


def same_spec(a: Obj, b: Obj) -> bool:
    """Equal up to the order of pod entries and of their probes (order carries no meaning)."""
    return _canonical(a) == _canonical(b)


def result_patches(old: Obj, new: Obj) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """What `apply_results` changed, as writes: a merge patch of labels/annotations (None values
    remove a key; None when nothing changed) and the conditions that changed (merged by type)."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    patch: dict[str, Any] = {}
    for field in ("labels", "annotations"):
        before, after = old_meta.get(field) or {}, new_meta.get(field) or {}
        diff: dict[str, Any] = {k: v for k, v in after.items() if before.get(k) != v}
        diff.update({k: None for k in before if k not in after})
        if diff:
            patch[field] = diff
    before_conditions = {c.get("type"): c for c in conditions_of(old)}
    changed = [c for c in conditions_of(new) if before_conditions.get(c.get("type")) != c]
    return ({"metadata": patch} if patch else None), changed
