"""What kruise-manager's pod cache keeps: the union of the fields its running controllers declare.

Pods are most of a cluster's objects (100k+ where kruise-manager has 512 MiB), and each controller
reads a small part of them. Every `ControllerSetup` declares its `pod_fields`; the manager's pod
informer keeps their union plus what the informer itself needs (`STORE_FIELDS`), interned and frozen,
and shares pod-template parts between replicas. A test cluster running one controller keeps only
that controller's fields, so its tests fail (the cache guard, tests/conftest.py) if it reads a field
it did not declare.

Pod writes that PUT a whole pod read it from the apiserver first (`kruise.manager.writers.pods`):
a projected pod would erase what its cache dropped.
"""

from __future__ import annotations

from collections.abc import Iterable

from kruise.kube.projection import Projection
from kruise.kube.resources import PODS, ResourceRef
from kruise.kube.store import CONTAINER_STATUS_VARIES, POD_UNIQUE, STORE_FIELDS
from kruise.manager.context import ControllerSetup

POD_META: tuple[str, ...] = (
    "metadata.annotations",
    "metadata.creationTimestamp",
    "metadata.deletionTimestamp",
    "metadata.finalizers",
    "metadata.generateName",
    "metadata.labels",
    "metadata.ownerReferences",
)
"""Who the pod is and who owns it: what every pod reader matches and sorts by."""

CONTAINER_STATUS: tuple[str, ...] = (
    "allocatedResources",
    "containerID",
    "image",
    "imageID",
    "lastState",
    "name",
    "ready",
    "resources",
    "restartCount",
    "started",
    "state",
)
"""Of a container's status (not e.g. its volumeMounts and user, which kubelets 1.30+ report per pod)."""

POD_RUNNING: tuple[str, ...] = (
    "spec.nodeName",
    "spec.readinessGates",
    "status.conditions",
    *(f"status.containerStatuses.{field}" for field in CONTAINER_STATUS),
    "status.initContainerStatuses",
    "status.phase",
    "status.podIP",
    "status.reason",
    "status.startTime",
)
"""Where and how the pod runs: readiness, phase, container states (imageID for in-place updates)."""

POD_TEMPLATE: tuple[str, ...] = (
    "spec.affinity",
    "spec.containers",
    "spec.hostname",
    "spec.initContainers",
    "spec.nodeSelector",
    "spec.overhead",
    "spec.priority",
    "spec.restartPolicy",
    "spec.subdomain",
    "spec.terminationGracePeriodSeconds",
    "spec.tolerations",
    "spec.topologySpreadConstraints",
    "spec.volumes",
    "status.resize",
)
"""What a workload controller compares with its template (identical across replicas: shared)."""

POD_EPHEMERAL: tuple[str, ...] = ("spec.ephemeralContainers", "status.ephemeralContainerStatuses")
"""Ephemeral (debug) containers and their states."""

WORKLOAD: tuple[str, ...] = (*POD_META, *POD_RUNNING, *POD_TEMPLATE)
"""What a controller that creates, updates and scales pods reads."""

POD_SHARED: tuple[str, ...] = (
    "metadata.annotations",
    "metadata.ownerReferences",
    "spec.affinity",
    "spec.containers",
    "spec.ephemeralContainers",
    "spec.initContainers",
    "spec.nodeSelector",
    "spec.overhead",
    "spec.readinessGates",
    "spec.tolerations",
    "spec.topologySpreadConstraints",
    "spec.volumes",
)
"""Subtrees replicas of one template have in common: hash-consed when kept (one object per content)."""

POD_COMPACT: tuple[str, ...] = (
    "spec.containers",
    "spec.initContainers",
    "spec.volumes",
    "status.conditions",
    "status.containerStatuses",
    "status.ephemeralContainerStatuses",
    "status.initContainerStatuses",
)
"""Small parts every pod has its own of (five conditions, a status and state per container): stored as
`Record`s, a third of a dict's size. Readers take them as read-only Mappings (`kruise.api.objects`).
Containers and volumes are shared too: they differ per pod by the ServiceAccount token mount alone."""

POD_PACKED: dict[str, tuple[str, ...]] = {
    "status.conditions": ("lastTransitionTime",),
    "status.containerStatuses": CONTAINER_STATUS_VARIES,
    "status.initContainerStatuses": CONTAINER_STATUS_VARIES,
}
"""Lists kept as one tuple per pod of their per-pod values (timestamps, container IDs), the rest in a
layout shared by the pods agreeing on it (`Projection(packed=...)`): six conditions ~100 bytes instead
of ~490, two container statuses ~70 instead of ~390. A condition's `lastProbeTime` is in the layout:
kubelets leave it null (a pod that has one gets a layout of its own, still read back whole)."""

POD_OWN_RECORDS: tuple[str, ...] = ("metadata", "spec", "status")
"""A pod's own dicts under its root, one of each per pod: stored as `Record`s (the root stays a dict)."""


def pod_projection(setups: Iterable[ControllerSetup]) -> Projection:
    """The manager's pod projection for the controllers in `setups`."""
    fields = [*STORE_FIELDS, *(field for setup in setups for field in setup.pod_fields)]
    probe = Projection(fields, guard=False)
    shared = [path for path in POD_SHARED if probe.keeps(path)]
    compact = [path for path in POD_COMPACT if probe.keeps(path)]
    own = [path for path in POD_OWN_RECORDS if probe.keeps(path)]
    packed = {path: vary for path, vary in POD_PACKED.items() if path in compact and "status" in own}
    return Projection(
        fields,
        shared,
        unique=POD_UNIQUE,
        compact=compact,
        own_records=own,
        packed=packed,
        owner="kruise-manager pods",
    )


def projections(setups: Iterable[ControllerSetup]) -> dict[ResourceRef, Projection]:
    """Fresh projections for one manager's informer factory, given the controllers it runs."""
    return {PODS: pod_projection(setups)}
