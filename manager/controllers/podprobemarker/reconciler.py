"""One pass over a PodProbeMarker.

A live marker first gets the `kruise.io/node-pod-probe-cleanup` finalizer. Then every NodePodProbe
that runs a matching pod or still holds the marker's probes gets exactly the marker's current probes
on exactly its matching pods (`control.podprobemarker.probes.set_marker`), written only when the spec
changed beyond ordering (a compare-and-swap PUT: two markers writing one node retry rather than lose
each other's probes). A NodePodProbe that does not exist yet is skipped: the NodePodProbe controller
creates it with its node, and its appearance wakes this marker again. Last, `status.matchedPods`.

Pods on virtual-kubelet nodes are serverless (`control.podprobemarker.serverless`): they get no
NodePodProbe entry; with gate EnablePodProbeMarkerOnServerless each gets the marker policies its
probe-result conditions call for, patched into its labels/annotations. Pods whose node is unknown are
neither, as upstream. `status.matchedPods` counts both kinds.

A deleting marker has its probes removed from every NodePodProbe holding them, then the finalizer
released.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kruise.api.keys import FINALIZER_NODE_POD_PROBE_CLEANUP
from kruise.api.objects import Obj
from kruise.control.podprobemarker import probes, serverless
from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.errors import NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import NODE_POD_PROBES, POD_PROBE_MARKERS, PODS, split_key
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.writers.status import StatusWriter


class PodProbeMarkerReconciler:
    def __init__(
        self,
        client: Client,
        *,
        markers: SharedInformer,
        pods: SharedInformer,
        node_probes: SharedInformer,
        nodes: SharedInformer,
        serverless_marking: bool = False,
    ) -> None:
        """`serverless_marking` is gate EnablePodProbeMarkerOnServerless."""
        self.client = client
        self.status_writer = StatusWriter(client, POD_PROBE_MARKERS)
        self.markers = markers
        self.pods = pods
        self.node_probes = node_probes
        self.nodes = nodes
        self.serverless_marking = serverless_marking

    async def _mark_serverless(self, ppm: Obj, pods: list[Obj]) -> None:
        for pod in pods:
            patch = serverless.marks_from_conditions(pod, ppm)
            if patch is None:
                continue
            meta = pod["metadata"]
            try:
                await self.client.patch(PODS, meta["name"], patch, meta.get("namespace"))
            except NotFound:
                continue

    def _holders(self, namespace: str, name: str) -> set[str]:
        return {
            npp["metadata"]["name"]
            for npp in self.node_probes.list()
            if probes.holds_marker(npp.get("spec") or {}, namespace, name)
        }

    async def _write_spec(self, node: str, spec: dict[str, Any]) -> None:
        npp = self.node_probes.get(node)
        if npp is None or probes.same_spec(npp.get("spec") or {}, spec):
            return
        try:
            await self.client.update(NODE_POD_PROBES, {**npp, "spec": spec})
        except NotFound:
            return  # the node went away; its NodePodProbe with it

    async def reconcile(self, key: str) -> Result | None:
        namespace, name = split_key(key)
        namespace = namespace or ""
        ppm = self.markers.get(key)
        if ppm is None:
            return None
        meta = ppm["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp"):
            for node in sorted(self._holders(namespace, name)):
                npp = self.node_probes.get(node)
                if npp is not None:
                    await self._write_spec(node, probes.remove_marker(npp.get("spec") or {}, namespace, name))
            if FINALIZER_NODE_POD_PROBE_CLEANUP in finalizers:
                finalizers.remove(FINALIZER_NODE_POD_PROBE_CLEANUP)
                try:
                    await self.client.update(
                        POD_PROBE_MARKERS, {**ppm, "metadata": {**meta, "finalizers": finalizers}}
                    )
                except NotFound:
                    return None
            return None
        if FINALIZER_NODE_POD_PROBE_CLEANUP not in finalizers:
            body = {
                **ppm,
                "metadata": {**meta, "finalizers": [*finalizers, FINALIZER_NODE_POD_PROBE_CLEANUP]},
            }
            try:
                ppm = await self.client.update(POD_PROBE_MARKERS, body)
            except NotFound:
                return None
        matched = probes.matching_pods(ppm, self.pods.by_index(NAMESPACE_INDEX, namespace))
        pods, serverless_pods = serverless.split_by_node(matched, self.nodes.get)
        if self.serverless_marking:
            await self._mark_serverless(ppm, serverless_pods)
        by_node: dict[str, list[Obj]] = defaultdict(list)
        for pod in pods:
            by_node[pod["spec"]["nodeName"]].append(pod)
        for node in sorted(set(by_node) | self._holders(namespace, name)):
            npp = self.node_probes.get(node)
            if npp is not None:
                await self._write_spec(
                    node, probes.set_marker(npp.get("spec") or {}, ppm, by_node.get(node, []))
                )
        status = {
            "observedGeneration": ppm["metadata"].get("generation", 0),
            "matchedPods": len(pods) + len(serverless_pods),
        }
        await self.status_writer.write(ppm, status)
        return None
