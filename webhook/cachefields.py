"""What kruise-webhook's pod cache keeps: the fields its admission handlers read from cached pods.

Admission reads the pod under review from the request; the cache serves lookups of *other* pods:
PodUnavailableBudget counts (labels, owners, readiness, deletion), ContainerRecreateRequest checks
(the named pod's containers and their statuses), namespace deletion protection (active pods).
Declared once for the process (handlers share one pod informer); the test suites run with the cache
guard on (tests/conftest.py), so a handler reading an undeclared field fails its tests.
"""

from __future__ import annotations

from kruise.kube.projection import Projection
from kruise.kube.resources import PODS, ResourceRef
from kruise.kube.store import CONTAINER_STATUS_VARIES, POD_UNIQUE, STORE_FIELDS

POD_FIELDS: tuple[str, ...] = (
    *STORE_FIELDS,
    "metadata.annotations",
    "metadata.creationTimestamp",
    "metadata.deletionTimestamp",
    "metadata.generateName",
    "metadata.labels",
    "metadata.ownerReferences",
    "spec.containers",
    "spec.initContainers",
    "spec.readinessGates",
    "spec.terminationGracePeriodSeconds",
    "status.conditions",
    "status.containerStatuses",
    "status.initContainerStatuses",
    "status.phase",
)
POD_SHARED: tuple[str, ...] = (
    "metadata.annotations",
    "metadata.ownerReferences",
    "spec.containers",
    "spec.initContainers",
    "spec.readinessGates",
)


POD_COMPACT: tuple[str, ...] = (
    "spec.containers",
    "spec.initContainers",
    "status.conditions",
    "status.containerStatuses",
    "status.initContainerStatuses",
)
"""Per-pod parts stored as `Record`s (read-only Mappings a third of a dict's size); the containers
shared too (they differ per pod by the ServiceAccount token mount alone)."""

POD_OWN_RECORDS: tuple[str, ...] = ("metadata", "spec", "status")
"""A pod's own dicts under its root, one of each per pod: stored as `Record`s (the root stays a dict)."""

POD_PACKED: dict[str, tuple[str, ...]] = {
    "status.conditions": ("lastTransitionTime",),
    "status.containerStatuses": CONTAINER_STATUS_VARIES,
    "status.initContainerStatuses": CONTAINER_STATUS_VARIES,
}
"""Per-pod lists kept as a tuple of their per-pod values and a shared layout (as the manager's)."""


def projections() -> dict[ResourceRef, Projection]:
    """Fresh projections for one webhook replica's informer factory."""
    projection = Projection(
        POD_FIELDS,
        POD_SHARED,
        unique=POD_UNIQUE,
        compact=POD_COMPACT,
        own_records=POD_OWN_RECORDS,
        packed=POD_PACKED,
        owner="kruise-webhook pods",
    )
    return {PODS: projection}
