"""The endpointslice and endpoints controllers: keep each selector Service's backends written down.

kube-controller-manager runs both; the sandbox needs them so that anything routing by Service
(the apiserver calling a webhook through ``clientConfig.service``, ``kubectl get endpointslices``)
sees the ready pods behind it. What the objects hold is computed in ``endpointslices``; this
module only compares that with what is stored and writes the difference:

- EndpointSlices named ``<service>-<random>`` (generateName), controlled by the Service, one per
  distinct port list; a slice whose port list is still wanted is updated in place, others are
  created or deleted;
- one Endpoints object named like the Service, deleted with it.

Services without a selector are left alone (their slices and Endpoints belong to whoever wrote
them), as upstream does.
"""

from __future__ import annotations

from collections.abc import Callable

from kruise.sandbox.simulator.client import ApiError, Client, Obj, resource_path
from kruise.sandbox.simulator.endpointslices import (
    MANAGED_BY,
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
    desired_slices,
    desired_subsets,
    endpoints_labels,
    managed_labels,
    port_key,
)
from kruise.sandbox.simulator.informer import Informer, key_of
from kruise.sandbox.simulator.owners import owner_reference, remember
from kruise.sandbox.simulator.workqueue import WorkQueue

DISCOVERY = "discovery.k8s.io/v1"


def _slice_path(namespace: str, name: str | None = None) -> str:
    return resource_path(DISCOVERY, "endpointslices", namespace, name)


class EndpointsController:
    """Reconciles Services (keys ``namespace/name``) into EndpointSlices and Endpoints."""

    name = "endpointslice-controller"

    def __init__(
        self,
        client: Client,
        services: Informer,
        pods: Informer,
        zone_of: Callable[[str], str | None] = lambda _: None,
    ) -> None:
        self.client = client
        self.services = services
        self.pods = pods
        self.zone_of = zone_of
        self.slices = Informer(
            client,
            resource_path(DISCOVERY, "endpointslices"),
            label_selector=f"{MANAGED_BY_LABEL}={MANAGED_BY}",
        )
        self.endpoints = Informer(client, resource_path("v1", "endpoints"))
        self.queue = WorkQueue(self.name, self._reconcile, workers=2)
        services.add_handler(lambda kind, obj: self.queue.add(key_of(obj)))
        pods.add_handler(self._on_pod)
        self.slices.add_handler(self._on_owned)
        self.endpoints.add_handler(lambda kind, obj: self.queue.add(key_of(obj)))

    @property
    def informers(self) -> list[Informer]:
        """The caches this controller owns (started and stopped with it)."""
        return [self.slices, self.endpoints]

    def _on_pod(self, kind: str, pod: Obj) -> None:
        # A pod's old labels are not known here, so every Service of its namespace looks again.
        namespace = pod["metadata"].get("namespace")
        for service in self.services.items():
            if service["metadata"].get("namespace") == namespace:
                self.queue.add(key_of(service))

    def _on_owned(self, kind: str, obj: Obj) -> None:
        service = ((obj.get("metadata") or {}).get("labels") or {}).get(SERVICE_NAME_LABEL)
        if service:
            self.queue.add(f"{obj['metadata']['namespace']}/{service}")

    def start(self) -> None:
        for informer in self.informers:
            informer.start()
        self.queue.start()

    async def stop(self) -> None:
        await self.queue.stop()
        for informer in self.informers:
            await informer.stop()

    def _slices_of(self, namespace: str, name: str) -> list[Obj]:
        return [
            s
            for s in self.slices.items()
            if s["metadata"].get("namespace") == namespace
            and (s["metadata"].get("labels") or {}).get(SERVICE_NAME_LABEL) == name
        ]

    async def _reconcile(self, key: str) -> float | None:
        namespace, _, name = key.partition("/")
        service = self.services.get(key)
        if service is None or not (service.get("spec") or {}).get("selector"):
            if service is None:
                await self._forget(namespace, name)
            return None
        service = {**service, "apiVersion": "v1", "kind": "Service"}
        pods = [p for p in self.pods.items() if p["metadata"].get("namespace") == namespace]
        await self._sync_slices(service, pods)
        await self._sync_endpoints(service, pods)
        return None

    async def _forget(self, namespace: str, name: str) -> None:
        """The Service is gone: its slices (garbage collection would too) and Endpoints go."""
        for slice_ in self._slices_of(namespace, name):
            await self._delete(_slice_path(namespace, slice_["metadata"]["name"]))
        endpoints = self.endpoints.get(f"{namespace}/{name}")
        if endpoints is not None:
            await self._delete(resource_path("v1", "endpoints", namespace, name))

    async def _delete(self, path: str) -> None:
        try:
            await self.client.delete(path)
        except ApiError as error:
            if not error.not_found:
                raise

    async def _sync_slices(self, service: Obj, pods: list[Obj]) -> None:
        meta = service["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        existing = sorted(self._slices_of(namespace, name), key=lambda s: s["metadata"]["name"])
        labels = managed_labels(service)
        owner = owner_reference(service)
        for ports, endpoints in desired_slices(service, pods, self.zone_of):
            wanted = port_key(ports)
            reuse = next((s for s in existing if port_key(s.get("ports") or []) == wanted), None)
            body: Obj = {
                "apiVersion": DISCOVERY,
                "kind": "EndpointSlice",
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": ports,
            }
            if reuse is None:
                body["metadata"] = {
                    "generateName": f"{name}-",
                    "namespace": namespace,
                    "labels": labels,
                    "ownerReferences": [owner],
                }
                created = await self.client.create(_slice_path(namespace), body)
                remember(self.slices, created)
                continue
            existing.remove(reuse)
            current_meta = reuse["metadata"]
            same = (
                (reuse.get("endpoints") or []) == endpoints
                and (reuse.get("ports") or []) == ports
                and (current_meta.get("labels") or {}) == labels
            )
            if same:
                continue
            body["metadata"] = {**current_meta, "labels": labels, "ownerReferences": [owner]}
            written = await self.client.replace(_slice_path(namespace, current_meta["name"]), body)
            remember(self.slices, written)
        for stale in existing:
            await self._delete(_slice_path(namespace, stale["metadata"]["name"]))

    async def _sync_endpoints(self, service: Obj, pods: list[Obj]) -> None:
        meta = service["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        subsets = desired_subsets(service, pods)
        labels = endpoints_labels(service)
        current = self.endpoints.get(f"{namespace}/{name}")
        body: Obj = {"apiVersion": "v1", "kind": "Endpoints"}
        if subsets:
            body["subsets"] = subsets
        if current is None:
            body["metadata"] = {"name": name, "namespace": namespace, "labels": labels}
            # a conflict (someone else wrote it first) fails this pass; the retry sees it cached
            created = await self.client.create(resource_path("v1", "endpoints", namespace), body)
            remember(self.endpoints, created)
            return
        if (current.get("subsets") or []) == subsets and (current["metadata"].get("labels") or {}) == labels:
            return
        body["metadata"] = {**current["metadata"], "labels": labels}
        written = await self.client.replace(resource_path("v1", "endpoints", namespace, name), body)
        remember(self.endpoints, written)
