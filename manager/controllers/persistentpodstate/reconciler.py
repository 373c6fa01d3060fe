"""One pass over a PersistentPodState, or over an auto-generation request.

Queue names starting with `generate#` ask whether a StatefulSet's own PersistentPodState should
exist and with which spec (created, updated or deleted to match its annotations). Other names are
PersistentPodStates: the pass reads the target workload, its active pods and their nodes from the
caches, computes the new `status.podStates` with `kruise.control.persistentpodstate` and writes it
only when it changed (a status update, so a concurrent writer makes the pass retry).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from kruise.control import persistentpodstate as plan
from kruise.control import podstatus
from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import PERSISTENT_POD_STATES, split_key
from kruise.kube.store import OWNER_UID_INDEX

Obj = Mapping[str, Any]


class PersistentPodStateReconciler:
    def __init__(
        self,
        client: Client,
        *,
        states: SharedInformer,
        pods: SharedInformer,
        nodes: SharedInformer,
        workloads: Mapping[str, SharedInformer],
    ) -> None:
        """`workloads`: API group ("apps", "apps.kruise.io") -> its StatefulSet informer."""
        self.client = client
        self.states = states
        self.pods = pods
        self.nodes = nodes
        self.workloads = workloads

    def _workload(self, namespace: str, api_version: str, kind: str, name: str) -> Obj | None:
        if not plan.is_statefulset(api_version, kind):
            return None  # whitelisted custom workloads are not followed (see docs)
        informer = self.workloads.get(plan.group_of(api_version))
        return None if informer is None else informer.get(f"{namespace}/{name}")

    async def reconcile(self, key: str) -> Result | None:
        namespace, name = split_key(key)
        namespace = namespace or ""
        if name.startswith(plan.GENERATE_PREFIX):
            await self._generate(namespace, name)
            return None
        pps = self.states.get(key)
        if pps is None:
            return None
        ref = (pps.get("spec") or {}).get("targetRef") or {}
        workload = self._workload(namespace, ref.get("apiVersion") or "", ref.get("kind") or "",
                                  ref.get("name") or "")  # fmt: skip
        shape = plan.Workload.of(workload) if workload is not None else None
        pods: dict[str, Obj] = {}
        if workload is not None:
            uid = workload["metadata"]["uid"]
            for pod in self.pods.by_index(OWNER_UID_INDEX, uid):
                owner = plan.controller_ref(pod)
                if owner is not None and owner.get("uid") == uid and podstatus.is_active(pod):
                    pods[pod["metadata"]["name"]] = pod
        status = plan.next_status(pps, shape, pods, self.nodes.get)
        if (pps.get("status") or {}) != status:
            body = {**pps, "status": status}
            try:
                await self.client.update_status(PERSISTENT_POD_STATES, body)
            except NotFound:
                return None
        return None

    async def _generate(self, namespace: str, name: str) -> None:
        parsed = plan.parse_generate_name(name)
        if parsed is None:
            return
        api_version, kind, workload_name = parsed
        workload = self._workload(namespace, api_version, kind, workload_name)
        if workload is None:
            return
        existing = self.states.get(f"{namespace}/{workload_name}")
        if not plan.wants_generated(workload):
            if plan.keeps_generated(workload) or existing is None:
                return
            if not plan.generated_by(existing, workload):
                return  # a PersistentPodState the user made under that name is not ours to delete
            with contextlib.suppress(NotFound):
                await self.client.delete(PERSISTENT_POD_STATES, workload_name, namespace)
            return
        desired = plan.generated(workload, api_version, kind)
        if existing is None:
            with contextlib.suppress(AlreadyExists):
                await self.client.create(PERSISTENT_POD_STATES, desired, namespace)
            return
        if existing.get("spec") != desired["spec"]:
            await self.client.update(PERSISTENT_POD_STATES, {**existing, "spec": desired["spec"]})
