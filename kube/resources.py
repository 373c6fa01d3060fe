"""Naming resources: which REST path a kind lives at.

The client, informers and leader election take a `ResourceRef` instead of a typed API class, so a
Kruise custom resource is addressed exactly like a Pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote


@dataclass(frozen=True)
class ResourceRef:
    """A group/version/resource plus whether it is namespaced and the kind it serves."""

    group: str
    version: str
    plural: str
    namespaced: bool = True
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.version}.{self.group}" if self.group else f"{self.plural}.{self.version}"

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The REST path; `namespace=None` on a namespaced resource means all namespaces."""
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        elif not self.namespaced and namespace:
            raise ValueError(f"namespace: {self} is cluster-scoped, got namespace {namespace!r}")
        base += f"/{self.plural}"
        if name is not None:
            if not name:
                raise ValueError(f"metadata.name: Required value: {self} needs a name")
            base += f"/{quote(name, safe='')}"
            if subresource:
                base += f"/{subresource}"
        elif subresource:
            raise ValueError(f"name: Required value: subresource {subresource!r} needs an object name")
        return base


PODS = ResourceRef("", "v1", "pods", True, "Pod")
NODES = ResourceRef("", "v1", "nodes", False, "Node")
NAMESPACES = ResourceRef("", "v1", "namespaces", False, "Namespace")
CONFIGMAPS = ResourceRef("", "v1", "configmaps", True, "ConfigMap")
SECRETS = ResourceRef("", "v1", "secrets", True, "Secret")
SERVICES = ResourceRef("", "v1", "services", True, "Service")
ENDPOINT_SLICES = ResourceRef("discovery.k8s.io", "v1", "endpointslices", True, "EndpointSlice")
EVENTS = ResourceRef("", "v1", "events", True, "Event")
PVCS = ResourceRef("", "v1", "persistentvolumeclaims", True, "PersistentVolumeClaim")
LEASES = ResourceRef("coordination.k8s.io", "v1", "leases", True, "Lease")
DEPLOYMENTS = ResourceRef("apps", "v1", "deployments", True, "Deployment")
REPLICASETS = ResourceRef("apps", "v1", "replicasets", True, "ReplicaSet")
STATEFULSETS_APPS = ResourceRef("apps", "v1", "statefulsets", True, "StatefulSet")
CONTROLLER_REVISIONS = ResourceRef("apps", "v1", "controllerrevisions", True, "ControllerRevision")
JOBS = ResourceRef("batch", "v1", "jobs", True, "Job")
PDBS = ResourceRef("policy", "v1", "poddisruptionbudgets", True, "PodDisruptionBudget")
STORAGE_CLASSES = ResourceRef("storage.k8s.io", "v1", "storageclasses", False, "StorageClass")
CRDS = ResourceRef(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", False, "CustomResourceDefinition"
)

# Kruise kinds, at the version kruise-py reconciles and serves as storage.
CLONESETS = ResourceRef("apps.kruise.io", "v1alpha1", "clonesets", True, "CloneSet")
ADVANCED_STATEFULSETS = ResourceRef("apps.kruise.io", "v1beta1", "statefulsets", True, "StatefulSet")
ADVANCED_DAEMONSETS = ResourceRef("apps.kruise.io", "v1alpha1", "daemonsets", True, "DaemonSet")
SIDECARSETS = ResourceRef("apps.kruise.io", "v1alpha1", "sidecarsets", False, "SidecarSet")
BROADCASTJOBS = ResourceRef("apps.kruise.io", "v1alpha1", "broadcastjobs", True, "BroadcastJob")
ADVANCED_CRONJOBS = ResourceRef("apps.kruise.io", "v1alpha1", "advancedcronjobs", True, "AdvancedCronJob")
IMAGEPULLJOBS = ResourceRef("apps.kruise.io", "v1alpha1", "imagepulljobs", True, "ImagePullJob")
NODEIMAGES = ResourceRef("apps.kruise.io", "v1alpha1", "nodeimages", False, "NodeImage")
IMAGELISTPULLJOBS = ResourceRef("apps.kruise.io", "v1alpha1", "imagelistpulljobs", True, "ImageListPullJob")
EPHEMERALJOBS = ResourceRef("apps.kruise.io", "v1alpha1", "ephemeraljobs", True, "EphemeralJob")
RESOURCEDISTRIBUTIONS = ResourceRef(
    "apps.kruise.io", "v1alpha1", "resourcedistributions", False, "ResourceDistribution"
)
CONTAINER_RECREATE_REQUESTS = ResourceRef(
    "apps.kruise.io", "v1alpha1", "containerrecreaterequests", True, "ContainerRecreateRequest"
)
WORKLOADSPREADS = ResourceRef("apps.kruise.io", "v1alpha1", "workloadspreads", True, "WorkloadSpread")
PERSISTENT_POD_STATES = ResourceRef(
    "apps.kruise.io", "v1alpha1", "persistentpodstates", True, "PersistentPodState"
)
POD_PROBE_MARKERS = ResourceRef("apps.kruise.io", "v1alpha1", "podprobemarkers", True, "PodProbeMarker")
NODE_POD_PROBES = ResourceRef("apps.kruise.io", "v1alpha1", "nodepodprobes", False, "NodePodProbe")
UNITED_DEPLOYMENTS = ResourceRef("apps.kruise.io", "v1alpha1", "uniteddeployments", True, "UnitedDeployment")
PODUNAVAILABLEBUDGETS = ResourceRef(
    "policy.kruise.io", "v1alpha1", "podunavailablebudgets", True, "PodUnavailableBudget"
)


def object_key(obj: dict) -> str:
    """client-go's MetaNamespaceKeyFunc: `namespace/name`, or `name` when cluster-scoped."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    name = meta.get("name", "")
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str) -> tuple[str | None, str]:
    """Inverse of `object_key`: (namespace or None, name)."""
    namespace, sep, name = key.partition("/")
    return (namespace, name) if sep else (None, namespace)
