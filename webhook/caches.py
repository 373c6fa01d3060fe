"""Read-only views over informer caches for handlers, so admission never lists from the apiserver."""

from __future__ import annotations

from typing import Protocol

from kruise.api.controllerref import controller_of
from kruise.api.objects import labels_of, meta_of, status_of
from kruise.kube.resources import ResourceRef
from kruise.kube.store import NAMESPACE_INDEX, Store


def _pod_active(pod: dict) -> bool:
    """kubecontroller.IsPodActive: not finished and not being deleted."""
    phase = status_of(pod).get("phase")
    return phase not in ("Succeeded", "Failed") and not meta_of(pod).get("deletionTimestamp")


def _pvc_bound(pvc: dict) -> bool:
    bound = status_of(pvc).get("phase") == "Bound"
    return bound and not meta_of(pvc).get("deletionTimestamp")


class StoreNamespaceContents:
    """Counts a namespace's active pods and Bound PVCs from two informer stores (namespace-indexed)."""

    def __init__(self, pods: Store, pvcs: Store) -> None:
        self._pods = pods
        self._pvcs = pvcs

    def active_pods(self, namespace: str) -> int:
        return sum(1 for pod in self._pods.by_index(NAMESPACE_INDEX, namespace) if _pod_active(pod))

    def bound_pvcs(self, namespace: str) -> int:
        return sum(1 for pvc in self._pvcs.by_index(NAMESPACE_INDEX, namespace) if _pvc_bound(pvc))


class StoreStorageClasses:
    """StorageClasses from an informer store, for Advanced StatefulSet's claim-template check."""

    def __init__(self, classes: Store) -> None:
        self._classes = classes

    def get(self, name: str) -> dict | None:
        return self._classes.get_by_name(None, name)

    def list(self) -> list[dict]:
        return self._classes.list()


SIDECARSETS = ResourceRef("apps.kruise.io", "v1alpha1", "sidecarsets", False, "SidecarSet")


class StoreSidecarSets:
    """SidecarSets and Namespace labels from informer stores, for injection and SidecarSet validation.

    Objects are shared with the informer: callers must copy before changing anything.
    """

    def __init__(
        self,
        namespaces: Store,
        sidecarsets: Store | None = None,
        configuration: Store | None = None,
        revisions: Store | None = None,
        namespace: str = "kruise-system",
    ) -> None:
        self._namespaces = namespaces
        self._sidecarsets = sidecarsets
        self._configuration = configuration
        self._revisions = revisions
        self.namespace = namespace
        """kruise's namespace, where SidecarSet ControllerRevisions live."""

    def attach(self, sidecarsets: Store) -> None:
        """Start reading SidecarSets once the process found the kind served (until then: none)."""
        self._sidecarsets = sidecarsets

    def list(self) -> list[dict]:
        return self._sidecarsets.list() if self._sidecarsets is not None else []

    def revisions(self) -> list[dict]:
        """SidecarSet ControllerRevisions (kruise's namespace, `kruise.io/sidecarset-name` labelled)."""
        return self._revisions.list() if self._revisions is not None else []

    def get(self, name: str) -> dict | None:
        return self._sidecarsets.get_by_name(None, name) if self._sidecarsets is not None else None

    def namespace_labels(self, name: str) -> dict[str, str] | None:
        """None when the namespace is unknown (upstream then treats a namespaceSelector as unmatched)."""
        namespace = self._namespaces.get_by_name(None, name)
        if namespace is None:
            return None
        return labels_of(namespace)

    def configuration(self) -> dict[str, str]:
        """`data` of ConfigMap kruise-configuration (the store holds only that one object), or {}."""
        if self._configuration is None:
            return {}
        for config_map in self._configuration.list():
            return config_map.get("data") or {}
        return {}


class StorePubs:
    """Pods and PodUnavailableBudgets from informer stores, for the PUB admission checks.

    PUBs are attached once the process found the kind served; until then no pod has a budget.
    """

    def __init__(self, pods: Store, pubs: Store | None = None, replicasets: Store | None = None) -> None:
        self._pods = pods
        self._pubs = pubs
        self._replicasets = replicasets

    def attach(self, pubs: Store, replicasets: Store | None = None) -> None:
        self._pubs = pubs
        self._replicasets = replicasets

    def workload_of(self, owner: dict, namespace: str) -> dict | None:
        """The workload behind a pod's controller reference, as upstream's controller finder sees it
        at pod creation: a ReplicaSet controlled by a Deployment gives the Deployment, one not cached
        yet gives None, anything else is its own workload."""
        if owner.get("kind") != "ReplicaSet" or str(owner.get("apiVersion", "")).split("/")[0] != "apps":
            return owner
        if self._replicasets is None:
            return owner
        replicaset = self._replicasets.get_by_name(namespace, str(owner.get("name", "")))
        if replicaset is None:
            return None
        controller = controller_of(replicaset)
        return controller if controller is not None and controller.get("kind") == "Deployment" else owner

    def pub(self, namespace: str, name: str) -> dict | None:
        return self._pubs.get_by_name(namespace, name) if self._pubs is not None else None

    def pod(self, namespace: str, name: str) -> dict | None:
        return self._pods.get_by_name(namespace, name)

    def in_namespace(self, namespace: str) -> list[dict]:
        return self._pubs.by_index(NAMESPACE_INDEX, namespace) if self._pubs is not None else []


class StorePodsAndNodes:
    """Pod and Node lookups for handlers that check a request against the pod it names (CRR)."""

    def __init__(self, pods: Store, nodes: Store) -> None:
        self._pods = pods
        self._nodes = nodes

    def pod(self, namespace: str, name: str) -> dict | None:
        return self._pods.get_by_name(namespace, name)

    def node(self, name: str) -> dict | None:
        return self._nodes.get_by_name(None, name)


class Freshness(Protocol):
    """Whether a cache may be read now (an informer: listed, its watch not lost)."""

    def is_current(self) -> bool: ...

    async def wait_current(self) -> None: ...


class CacheNotCurrent(Exception):
    """A read reached a cache that has not listed yet or lost its watch: answering from it could
    miss objects, so the reader awaits `wait()` and reads again (within the caller's deadline)."""

    def __init__(self, group: str, kind: str, freshness: Freshness) -> None:
        super().__init__(f"the cache of {kind}.{group} is not current")
        self.freshness = freshness

    async def wait(self) -> None:
        await self.freshness.wait_current()


class StoreSpreads:
    """WorkloadSpreads and the workloads their pods come from, from informer stores.

    Workload stores are keyed by (group, kind) and attached as the process finds the kinds served.
    An owner of a kind with no store attached reads as an object with no controller (its chain
    ends there), one missing from an attached store as None (unknown: not in the cache yet).
    A store attached after the process became ready (a custom kind whitelisted later) comes with
    its informer's `Freshness`: reading it before it is current raises CacheNotCurrent, since the
    process-wide readiness gate does not cover it.
    """

    def __init__(self, spreads: Store | None = None) -> None:
        self._spreads = spreads
        self._workloads: dict[tuple[str, str], tuple[Store, Freshness | None]] = {}

    def attach(self, spreads: Store) -> None:
        self._spreads = spreads

    def attach_workload(
        self, group: str, kind: str, store: Store, freshness: Freshness | None = None
    ) -> None:
        self._workloads[(group, kind)] = (store, freshness)

    def follows(self, group: str, kind: str) -> bool:
        """Whether a store of the (group, kind) is attached."""
        return (group, kind) in self._workloads

    def in_namespace(self, namespace: str) -> list[dict]:
        return self._spreads.by_index(NAMESPACE_INDEX, namespace) if self._spreads is not None else []

    def spread(self, namespace: str, name: str) -> dict | None:
        """One WorkloadSpread by name; None when not cached (or the kind is not served)."""
        return self._spreads.get_by_name(namespace, name) if self._spreads is not None else None

    def _store(self, ref: dict) -> Store | None:
        api_version = str(ref.get("apiVersion", ""))
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        kind = str(ref.get("kind", ""))
        attached = self._workloads.get((group, kind))
        if attached is None:
            return None
        store, freshness = attached
        if freshness is not None and not freshness.is_current():
            raise CacheNotCurrent(group, kind, freshness)
        return store

    def owner(self, ref: dict, namespace: str) -> dict | None:
        """Raises CacheNotCurrent (see the class)."""
        store = self._store(ref)
        if store is None:
            return {"metadata": {"name": ref.get("name", "")}}
        return store.get_by_name(namespace, str(ref.get("name", "")))

    def workload(self, ref: dict, namespace: str) -> dict | None:
        """Raises CacheNotCurrent (see the class)."""
        store = self._store(ref)
        return store.get_by_name(namespace, str(ref.get("name", ""))) if store is not None else None


class StorePodProbeMarkers:
    """PodProbeMarkers by namespace, for writing a new pod's serverless probes (gate
    EnablePodProbeMarkerOnServerless). Attached once the process found the kind served; until then
    no pod matches a marker."""

    def __init__(self, markers: Store | None = None) -> None:
        self._markers = markers

    def attach(self, markers: Store) -> None:
        self._markers = markers

    def in_namespace(self, namespace: str) -> list[dict]:
        return self._markers.by_index(NAMESPACE_INDEX, namespace) if self._markers is not None else []


class StorePersistentPodStates:
    """PersistentPodStates by namespace, for steering a recreated StatefulSet pod back to its node.

    Attached once the process found the kind served; until then no pod has a recorded state.
    """

    def __init__(self, states: Store | None = None) -> None:
        self._states = states

    def attach(self, states: Store) -> None:
        self._states = states

    def in_namespace(self, namespace: str) -> list[dict]:
        return self._states.by_index(NAMESPACE_INDEX, namespace) if self._states is not None else []
