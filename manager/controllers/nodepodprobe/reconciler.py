"""One pass over a node's NodePodProbe.

A node that is gone or being deleted takes its NodePodProbe with it. A node that exists gets one
(empty, named after it) if it has none; virtual-kubelet nodes (label `type=virtual-kubelet`) get
none, as upstream, since no kruise-daemon runs there. Pod entries whose pod is gone, finished,
terminating or replaced (another uid) are pruned from the spec. Each pod the status reports on then
gets its results written (`control.podprobemarker.probes.apply_results`): labels and annotations by a merge
patch, the conditions by a strategic merge patch of the status (merged by type, so the kubelet's
concurrent status writes cannot conflict with it). Results of a marker that is gone or being
deleted are ignored.
"""

from __future__ import annotations

import contextlib

from kruise.api.objects import Obj, status_of
from kruise.control.common import podstatus
from kruise.control.podprobemarker import probes
from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import NODE_POD_PROBES, PODS
from kruise.manager.writers.pods import PodWriter

VIRTUAL_KUBELET = ("type", "virtual-kubelet")


class NodePodProbeReconciler:
    def __init__(
        self,
        client: Client,
        *,
        node_probes: SharedInformer,
        nodes: SharedInformer,
        pods: SharedInformer,
        markers: SharedInformer,
    ) -> None:
        self.client = client
        self.pod_writer = PodWriter(client)
        self.node_probes = node_probes
        self.nodes = nodes
        self.pods = pods
        self.markers = markers

    def _live_pod(self, namespace: str, name: str, uid: str) -> Obj | None:
        pod = self.pods.get(f"{namespace}/{name}")
        if pod is None or pod["metadata"].get("uid") != uid or not podstatus.is_active(pod):
            return None
        return pod

    async def reconcile(self, key: str) -> Result | None:
        node = self.nodes.get(key)
        npp = self.node_probes.get(key)
        if node is None or node["metadata"].get("deletionTimestamp"):
            if npp is not None:
                with contextlib.suppress(NotFound):
                    await self.client.delete(NODE_POD_PROBES, key)
            return None
        labels = node["metadata"].get("labels") or {}
        if labels.get(VIRTUAL_KUBELET[0]) == VIRTUAL_KUBELET[1]:
            return None
        if npp is None:
            body = {
                "apiVersion": NODE_POD_PROBES.api_version,
                "kind": "NodePodProbe",
                "metadata": {"name": key},
                "spec": {},
            }
            with contextlib.suppress(AlreadyExists):
                await self.client.create(NODE_POD_PROBES, body)
            return None
        spec = npp.get("spec") or {}
        pruned = probes.prune_pods(spec, lambda ns, name, uid: self._live_pod(ns, name, uid) is not None)
        if not probes.same_spec(pruned, spec):
            try:
                await self.client.update(NODE_POD_PROBES, {**npp, "spec": pruned})
            except NotFound:
                return None
        for entry in status_of(npp).get("podProbeStatuses") or []:
            pod = self._live_pod(entry.get("namespace", ""), entry.get("name", ""), entry.get("uid", ""))
            if pod is not None:
                await self._write_results(pod, entry.get("probeStates") or [])
        return None

    async def _write_results(self, pod: Obj, states: list[Obj]) -> None:
        namespace = pod["metadata"]["namespace"]

        def marker(name: str) -> Obj | None:
            ppm = self.markers.get(f"{namespace}/{name}")
            return None if ppm is None or ppm["metadata"].get("deletionTimestamp") else ppm

        new = probes.apply_results(pod, states, marker)
        if new is None:
            return
        meta_patch, conditions = probes.result_patches(pod, new)
        name = pod["metadata"]["name"]
        try:
            if meta_patch is not None:
                await self.client.patch(PODS, name, meta_patch, namespace)
            if conditions:
                await self.pod_writer.patch_status(pod, {"status": {"conditions": conditions}})
        except NotFound:
            return
