"""Which pods a PodUnavailableBudget covers and how many it expects, read from informer caches.

Upstream's ControllerFinder: a targetRef names a workload (Deployment, ReplicaSet, StatefulSet,
CloneSet, Advanced StatefulSet) whose pods are found through ownerReferences (a Deployment's through
its ReplicaSets) and whose spec.replicas is the expected count; a selector takes the active pods it
matches and expects the sum of the replicas of the distinct workloads that own them.
"""

from __future__ import annotations

from collections.abc import Mapping

from kruise.api.common import LabelSelector
from kruise.api.controllerref import controller_of
from kruise.api.objects import Obj, section, spec_of
from kruise.control.common import podstatus
from kruise.control.pub import budget
from kruise.kube.informer import SharedInformer
from kruise.kube.store import NAMESPACE_INDEX, OWNER_UID_INDEX


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


class WorkloadFinder:
    def __init__(self, pods: SharedInformer, workloads: Mapping[tuple[str, str], SharedInformer]) -> None:
        """`workloads`: (API group, kind) -> informer, e.g. ("apps", "Deployment")."""
        self.pods = pods
        self.workloads = workloads

    def _get(self, group: str, kind: str, namespace: str, name: str) -> Obj | None:
        informer = self.workloads.get((group, kind))
        return None if informer is None else informer.get(f"{namespace}/{name}")

    def _scale_owner(self, group: str, kind: str, namespace: str, name: str) -> Obj | None:
        """The workload whose replicas count: a ReplicaSet owned by a Deployment counts as the Deployment."""
        workload = self._get(group, kind, namespace, name)
        if workload is None or kind != "ReplicaSet":
            return workload
        ref = controller_of(workload)
        if (
            ref is not None
            and ref.get("kind") == "Deployment"
            and _group(ref.get("apiVersion", "")) == "apps"
        ):
            return self._get("apps", "Deployment", namespace, ref["name"]) or workload
        return workload

    def _owned_pods(self, uid: str) -> list[Obj]:
        return [p for p in self.pods.by_index(OWNER_UID_INDEX, uid) if podstatus.is_active(p)]

    def pods_and_expected(self, pub: Obj) -> tuple[list[Obj], int]:
        namespace = pub["metadata"]["namespace"]
        spec = pub.get("spec") or {}
        total = budget.protect_total_replicas(pub)
        ref = spec.get("targetRef")
        if ref:
            group, kind, name = _group(ref.get("apiVersion", "")), ref.get("kind", ""), ref.get("name", "")
            workload = self._get(group, kind, namespace, name)
            if workload is None or workload["metadata"].get("deletionTimestamp"):
                return [], 0
            replicas = int(spec_of(workload).get("replicas", 1) or 0)
            expected = total if total is not None else replicas
            if replicas == 0:
                return [], expected
            uids = [workload["metadata"]["uid"]]
            if kind == "Deployment":
                replica_sets = self.workloads.get(("apps", "ReplicaSet"))
                owned = [] if replica_sets is None else replica_sets.by_index(OWNER_UID_INDEX, uids[0])
                uids = [rs["metadata"]["uid"] for rs in owned] or uids
            pods = [pod for uid in uids for pod in self._owned_pods(uid)]
            return pods, expected
        if not spec.get("selector"):
            return [], 0
        selector = LabelSelector.model_validate(spec["selector"])
        pods = [
            p
            for p in self.pods.by_index(NAMESPACE_INDEX, namespace)
            if podstatus.is_active(p) and selector.matches(section(p["metadata"], "labels"))
        ]
        if total is not None:
            return pods, total
        scales: dict[str, int] = {}
        for pod in pods:
            ref = controller_of(pod)
            if ref is None:
                continue
            owner = self._scale_owner(
                _group(ref.get("apiVersion", "")), ref.get("kind", ""), namespace, ref["name"]
            )
            if owner is None or owner["metadata"].get("deletionTimestamp"):
                continue
            scales[owner["metadata"]["uid"]] = int(spec_of(owner).get("replicas", 1) or 0)
        return pods, sum(scales.values())
