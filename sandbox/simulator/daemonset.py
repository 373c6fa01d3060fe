"""A minimal apps/v1 DaemonSet controller: one pod per eligible node, rolling updates, status.

Worded after kube-controller-manager's daemon controller:

- a node is eligible when the pod (template plus the tolerations the controller always adds)
  fits its nodeSelector / required node affinity and tolerates its NoSchedule/NoExecute taints;
- each daemon pod is pinned to its node the way upstream does it (required node affinity
  replaced by ``matchFields metadata.name In [node]``) and bound by the scheduler;
- a node without a running daemon pod gets one; extra, misplaced and failed pods are deleted;
- RollingUpdate (the default) deletes pods of an old template, unready ones first, while at most
  ``maxUnavailable`` (default 1, int or percent of desired, rounded up) are unavailable; OnDelete
  leaves them alone;
- status counts as upstream: desired/current/misscheduled/ready/updated/available/unavailable.

Not simulated: ControllerRevisions (``controller-revision-hash`` is a hash of the template, as for
the simulator's Deployments), ``maxSurge``, and the failed-pod back-off.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from typing import Any

from kruise.sandbox.simulator.client import ApiError, Client, Obj, resource_path
from kruise.sandbox.simulator.controller import OwnerController
from kruise.sandbox.simulator.deployment import template_hash
from kruise.sandbox.simulator.informer import Informer
from kruise.sandbox.simulator.owners import (
    available_in,
    is_ready,
    owned_by,
    pod_from_template,
    remember,
    remember_deletion,
)
from kruise.sandbox.simulator.scheduling import matches_node_affinity, untolerated_taint

APPS = "apps/v1"
HASH_LABEL = "controller-revision-hash"
GENERATION_LABEL = "pod-template-generation"
_NO_EXECUTE = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
_NO_SCHEDULE = (
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/unschedulable",
)


def daemon_tolerations(spec: Mapping[str, Any]) -> list[Obj]:
    """The pod's tolerations plus those the daemon controller adds (AddOrUpdateDaemonPodTolerations)."""
    tolerations = [dict(t) for t in spec.get("tolerations") or []]
    wanted = [{"key": k, "operator": "Exists", "effect": "NoExecute"} for k in _NO_EXECUTE]
    wanted += [{"key": k, "operator": "Exists", "effect": "NoSchedule"} for k in _NO_SCHEDULE]
    if spec.get("hostNetwork"):
        wanted.append(
            {"key": "node.kubernetes.io/network-unavailable", "operator": "Exists", "effect": "NoSchedule"}
        )
    for toleration in wanted:
        same = (toleration["key"], toleration["effect"])
        if not any((t.get("key"), t.get("effect")) == same for t in tolerations):
            tolerations.append(toleration)
    return tolerations


def template_pod(ds: Obj) -> Obj:
    """The template as a pod, with the controller's tolerations (what eligibility is judged on)."""
    spec = copy.deepcopy(((ds.get("spec") or {}).get("template") or {}).get("spec") or {})
    spec["tolerations"] = daemon_tolerations(spec)
    return {"metadata": {}, "spec": spec}


def should_run(ds: Obj, node: Obj) -> bool:
    pod = template_pod(ds)
    return matches_node_affinity(pod, node) and untolerated_taint(pod, node) is None


def pin_to_node(spec: Obj, node: str) -> None:
    """ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become ``metadata.name In [node]``."""
    affinity = spec.get("affinity") or {}
    spec["affinity"] = affinity
    node_affinity = affinity.get("nodeAffinity") or {}
    affinity["nodeAffinity"] = node_affinity
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    }


def node_of(pod: Obj) -> str:
    """The node a daemon pod is for: where it runs, else the node its affinity pins it to."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and field.get("values"):
                return str(field["values"][0])
    return ""


def max_unavailable(ds: Obj, desired: int) -> int:
    raw = (((ds.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}).get(
        "maxUnavailable", 1
    )
    if isinstance(raw, str) and raw.endswith("%"):
        return math.ceil(int(raw[:-1]) * desired / 100)
    return int(raw)


def plan_nodes(ds: Obj, nodes: Iterable[Obj], pods: Iterable[Obj]) -> tuple[list[str], list[Obj]]:
    """(nodes needing a daemon pod, pods to delete): extra, misplaced or failed ones."""
    by_node: dict[str, list[Obj]] = {}
    delete: list[Obj] = []
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        if (pod.get("status") or {}).get("phase") == "Failed":
            delete.append(pod)
            continue
        by_node.setdefault(node_of(pod), []).append(pod)
    create: list[str] = []
    seen: set[str] = set()
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = node["metadata"]["name"]
        seen.add(name)
        running = sorted(by_node.get(name, []), key=lambda p: p["metadata"].get("creationTimestamp") or "")
        if should_run(ds, node):
            if not running:
                create.append(name)
            delete.extend(running[1:])  # keep the oldest
        else:
            delete.extend(running)
    for name, running in by_node.items():
        if name not in seen:
            delete.extend(running)  # the node is gone
    return create, delete


def rolling_deletions(ds: Obj, current_hash: str, pods: list[Obj], desired: int) -> list[Obj]:
    """Old-template pods to delete now: unready ones always, ready ones within maxUnavailable."""
    strategy = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type") or "RollingUpdate"
    if strategy != "RollingUpdate":
        return []
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    old = [p for p in live if (p["metadata"].get("labels") or {}).get(HASH_LABEL) != current_hash]
    min_ready = (ds.get("spec") or {}).get("minReadySeconds", 0)
    unavailable = desired - sum(1 for p in live if available_in(p, min_ready) == 0.0)
    unavailable += sum(1 for p in pods if p["metadata"].get("deletionTimestamp"))
    chosen = [p for p in old if not is_ready(p)]
    budget = max_unavailable(ds, desired) - max(unavailable, 0)
    for pod in sorted((p for p in old if is_ready(p)), key=lambda p: p["metadata"]["name"]):
        if budget <= 0:
            break
        chosen.append(pod)
        budget -= 1
    return chosen


class DaemonSetController(OwnerController):
    api_version = APPS
    kind = "DaemonSet"
    name = "daemonset-controller"

    def __init__(self, client: Client, owners: Informer, owned: Informer, nodes: Informer) -> None:
        super().__init__(client, owners, owned)
        self.nodes = nodes
        nodes.add_handler(self._on_node)

    def _on_node(self, kind: str, node: Obj) -> None:
        """A node came, went or changed labels/taints: every DaemonSet looks again."""
        for key in list(self.owners.store):
            self.queue.add(key)

    async def sync(self, ds: Obj) -> float | None:
        meta = ds["metadata"]
        namespace = meta["namespace"]
        template = (ds.get("spec") or {}).get("template") or {}
        current_hash = template_hash(template)
        nodes = self.nodes.items()
        pods = owned_by(self.owned, ds)
        create, delete = plan_nodes(ds, nodes, pods)
        eligible = {n["metadata"]["name"] for n in nodes if should_run(ds, n)}
        on_eligible = [p for p in pods if node_of(p) in eligible and p not in delete]
        delete += rolling_deletions(ds, current_hash, on_eligible, len(eligible))
        for pod in delete:
            await self._delete(ds, pod)
        for node in create:
            body = pod_from_template(
                ds, {HASH_LABEL: current_hash, GENERATION_LABEL: str(meta.get("generation", 1))}
            )
            body["spec"]["tolerations"] = daemon_tolerations(body["spec"])
            pin_to_node(body["spec"], node)
            created = await self.client.create(resource_path("v1", "pods", namespace), body)
            remember(self.owned, created)
            self.recorder.event(
                ds, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
            )
        return await self._write_status(ds, current_hash, eligible)

    async def _delete(self, ds: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            deleted = await self.client.delete(
                resource_path("v1", "pods", pod["metadata"]["namespace"], name)
            )
        except ApiError as error:
            if not error.not_found:
                raise
            return
        remember_deletion(self.owned, deleted)
        self.recorder.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")

    async def _write_status(self, ds: Obj, current_hash: str, eligible: set[str]) -> float | None:
        meta = ds["metadata"]
        min_ready = (ds.get("spec") or {}).get("minReadySeconds", 0)
        live = [p for p in owned_by(self.owned, ds) if not p["metadata"].get("deletionTimestamp")]
        scheduled = [p for p in live if (p.get("spec") or {}).get("nodeName")]
        current = [p for p in scheduled if p["spec"]["nodeName"] in eligible]
        waits = [available_in(p, min_ready) for p in current]
        available = sum(1 for w in waits if w == 0.0)
        status: Obj = {
            "currentNumberScheduled": len({p["spec"]["nodeName"] for p in current}),
            "numberMisscheduled": len({p["spec"]["nodeName"] for p in scheduled} - eligible),
            "desiredNumberScheduled": len(eligible),
            "numberReady": sum(1 for p in current if is_ready(p)),
            "observedGeneration": meta.get("generation", 1),
            "updatedNumberScheduled": sum(
                1 for p in current if (p["metadata"].get("labels") or {}).get(HASH_LABEL) == current_hash
            ),
            "numberAvailable": available,
            "numberUnavailable": max(len(eligible) - available, 0),
        }
        for optional in ("updatedNumberScheduled", "numberAvailable", "numberUnavailable"):
            if status[optional] == 0:
                del status[optional]
        old = {k: v for k, v in (ds.get("status") or {}).items() if k not in ("conditions", "collisionCount")}
        if status != old:
            keep = {
                k: v for k, v in (ds.get("status") or {}).items() if k in ("conditions", "collisionCount")
            }
            written = await self.client.replace(
                resource_path(APPS, "daemonsets", meta["namespace"], meta["name"], "status"),
                {**ds, "status": {**status, **keep}},
            )
            remember(self.owners, written)
        pending = [w for w in waits if w]
        return min(pending) if pending else None
