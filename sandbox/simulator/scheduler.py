"""A simulated default-scheduler: binds pending pods to nodes through pods/binding.

It keeps caches of nodes and pods, so a decision counts pods already bound (and pods it has
just bound but not yet seen back). A pod that fits nowhere gets ``PodScheduled=False`` with
reason Unschedulable and a FailedScheduling event, and is retried whenever a node or pod
changes (capacity freed, taint removed, label added...).
"""

from __future__ import annotations

import logging
from collections import defaultdict

from kruise.sandbox.simulator.client import ApiError, Client, Obj, resource_path
from kruise.sandbox.simulator.events import Recorder, now_rfc3339
from kruise.sandbox.simulator.informer import Informer, key_of
from kruise.sandbox.simulator.scheduling import choose_node
from kruise.sandbox.simulator.workqueue import WorkQueue

log = logging.getLogger(__name__)

SCHEDULER_NAME = "default-scheduler"


def wants_scheduling(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return (
        not spec.get("nodeName")
        and (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME
        and not (pod.get("metadata") or {}).get("deletionTimestamp")
        and (pod.get("status") or {}).get("phase", "Pending") == "Pending"
    )


def _occupies_node(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


class Scheduler:
    """Schedules pods onto the nodes it sees; ``node_names`` limits it to the simulator's own nodes."""

    def __init__(
        self,
        client: Client,
        nodes: Informer,
        pods: Informer,
        node_names: set[str] | None = None,
        retry_seconds: float = 5.0,
    ) -> None:
        self.client = client
        self.node_names = node_names
        self.retry_seconds = retry_seconds
        self.recorder = Recorder(client, SCHEDULER_NAME)
        self.nodes = nodes
        self.pods = pods
        self.queue = WorkQueue("scheduler", self._schedule, workers=1)
        self.assumed: dict[str, str] = {}
        self.unschedulable: set[str] = set()
        self.pods.add_handler(self._on_pod)
        self.nodes.add_handler(lambda kind, node: self._retry_unschedulable())

    def start(self) -> None:
        self.queue.start()

    async def stop(self) -> None:
        await self.queue.stop()
        await self.recorder.drain()

    def _on_pod(self, kind: str, pod: Obj) -> None:
        key = key_of(pod)
        if kind == "DELETED" or (pod.get("spec") or {}).get("nodeName"):
            self.assumed.pop(key, None)
            self.unschedulable.discard(key)
            if kind == "DELETED" or not _occupies_node(pod):
                self._retry_unschedulable()
            return
        if wants_scheduling(pod):
            self.queue.add(key)

    def _retry_unschedulable(self) -> None:
        for key in list(self.unschedulable):
            self.queue.add(key)

    def _pods_by_node(self) -> dict[str, list[Obj]]:
        by_node: dict[str, list[Obj]] = defaultdict(list)
        for pod in self.pods.items():
            node = (pod.get("spec") or {}).get("nodeName") or self.assumed.get(key_of(pod))
            if node and _occupies_node(pod):
                by_node[node].append(pod)
        return by_node

    async def _schedule(self, key: str) -> float | None:
        pod = self.pods.get(key)
        if pod is None or not wants_scheduling(pod) or key in self.assumed:
            return None
        nodes = [
            n
            for n in self.nodes.items()
            if self.node_names is None or n["metadata"]["name"] in self.node_names
        ]
        decision = choose_node(pod, nodes, self._pods_by_node())
        meta = pod["metadata"]
        if decision.node is None:
            self.unschedulable.add(key)
            await self._mark_unschedulable(pod, decision.message)
            return self.retry_seconds
        self.unschedulable.discard(key)
        self.assumed[key] = decision.node
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": decision.node},
        }
        try:
            await self.client.create(
                resource_path("v1", "pods", meta["namespace"], meta["name"], "binding"), binding
            )
        except ApiError as error:
            self.assumed.pop(key, None)
            if error.not_found:
                return None
            if error.conflict:
                return None
            raise
        self.recorder.event(
            pod,
            "Normal",
            "Scheduled",
            f"Successfully assigned {meta['namespace']}/{meta['name']} to {decision.node}",
        )
        return None

    async def _mark_unschedulable(self, pod: Obj, message: str) -> None:
        conditions = (pod.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if current and current.get("status") == "False" and current.get("message") == message:
            return
        self.recorder.event(pod, "Warning", "FailedScheduling", message)
        condition = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": now_rfc3339(),
            "reason": "Unschedulable",
            "message": message,
        }
        meta = pod["metadata"]
        patch = {
            "metadata": {"resourceVersion": meta["resourceVersion"]},
            "status": {
                "conditions": [condition, *(c for c in conditions if c.get("type") != "PodScheduled")]
            },
        }
        try:
            await self.client.patch(
                resource_path("v1", "pods", meta["namespace"], meta["name"], "status"), patch
            )
        except ApiError as error:
            if not (error.not_found or error.conflict):
                raise
