"""The kinds `set serviceaccount|selector|subject` and `rollout approve` can be pointed at.

Upstream resolves any type through discovery and then refuses, per object, the kinds it cannot
change (`setting a selector is only supported for Services`). This table names the kinds those
refusals are worth reaching for (every workload, and the objects each command does change), so a
user pointing a command at the wrong kind gets upstream's reason rather than an unknown type.
"""

from __future__ import annotations

from kruise.cli.kubectl_kruise import kinds
from kruise.kube.resources import JOBS, PODS, REPLICASETS, SERVICES, SIDECARSETS, ResourceRef

REPLICATION_CONTROLLERS = ResourceRef("", "v1", "replicationcontrollers", True, "ReplicationController")
ROLEBINDINGS = ResourceRef("rbac.authorization.k8s.io", "v1", "rolebindings", True, "RoleBinding")
CLUSTERROLEBINDINGS = ResourceRef(
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", False, "ClusterRoleBinding"
)
# Kruise Rollouts (openkruise/rollouts): v1beta1 is the version its CRD serves as preferred.
ROLLOUTS = ResourceRef("rollouts.kruise.io", "v1beta1", "rollouts", True, "Rollout")

POD = kinds.Workload(PODS, "pod", ("po",))
REPLICASET = kinds.Workload(REPLICASETS, "replicaset", ("rs",))
REPLICATION_CONTROLLER = kinds.Workload(REPLICATION_CONTROLLERS, "replicationcontroller", ("rc",))
JOB = kinds.Workload(JOBS, "job")
SERVICE = kinds.Workload(SERVICES, "service", ("svc",))
SIDECARSET = kinds.Workload(SIDECARSETS, "sidecarset")
ROLEBINDING = kinds.Workload(ROLEBINDINGS, "rolebinding")
CLUSTERROLEBINDING = kinds.Workload(CLUSTERROLEBINDINGS, "clusterrolebinding")
ROLLOUT = kinds.Workload(ROLLOUTS, "rollout", ("ro",))

# Kinds whose pod template sits at spec.template (a Pod's spec is the pod spec itself).
TEMPLATED: tuple[kinds.Workload, ...] = (*kinds.WORKLOADS, REPLICASET, REPLICATION_CONTROLLER, JOB)
SET_TARGETS: tuple[kinds.Workload, ...] = (
    *TEMPLATED,
    POD,
    SERVICE,
    SIDECARSET,
    ROLEBINDING,
    CLUSTERROLEBINDING,
)
APPROVE_TARGETS: tuple[kinds.Workload, ...] = (*kinds.WORKLOADS, ROLLOUT)


def object_name(target: kinds.Target) -> str:
    """cli-runtime's Info.ObjectName(), `clonesets/demo`: how `set` names an object in errors."""
    return f"{target.workload.ref.plural}/{target.name}"


def go_type(workload: kinds.Workload) -> str:
    """The Go type upstream names in `... does not have a pod template: *v1.Service`."""
    return f"*{workload.ref.version}.{workload.kind}"
