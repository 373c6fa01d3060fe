"""A minimal apps/v1 ReplicaSet controller: keep ``spec.replicas`` active pods and report status.

Scale-down picks victims the way the real controller ranks them (unscheduled, then pending,
then not ready, then the lower ``controller.kubernetes.io/pod-deletion-cost``, then most restarts,
then newest) so rollouts look familiar in ``kubectl get`` and a cost written by kruise (WorkloadSpread)
decides which pods a Deployment gives up, as kube-controller-manager's ranking does.
"""

from __future__ import annotations

from kruise.sandbox.simulator.client import ApiError, Obj, resource_path
from kruise.sandbox.simulator.controller import OwnerController
from kruise.sandbox.simulator.owners import (
    available_in,
    is_active,
    is_ready,
    owned_by,
    pod_from_template,
    remember,
    remember_deletion,
)

APPS = "apps/v1"
_PHASE_RANK = {"Pending": 0, "Unknown": 1, "Running": 2}
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_INT32 = range(-(2**31), 2**31)


def deletion_cost(pod: Obj) -> int:
    """The pod's deletion cost; 0 when absent or not an int32 (kube's ranking ignores the parse error
    and the apiserver refuses such a value on pods anyway)."""
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(DELETION_COST)
    try:
        cost = int(str(raw).strip()) if raw is not None else 0
    except ValueError:
        return 0
    return cost if cost in _INT32 else 0


def deletion_rank(pod: Obj) -> tuple:
    """Sort key: pods earlier in the order are deleted first."""
    status = pod.get("status") or {}
    restarts = sum(c.get("restartCount", 0) for c in status.get("containerStatuses") or [])
    created = pod["metadata"].get("creationTimestamp") or ""
    return (
        1 if (pod.get("spec") or {}).get("nodeName") else 0,
        _PHASE_RANK.get(status.get("phase", "Pending"), 0),
        1 if is_ready(pod) else 0,
        deletion_cost(pod),
        -restarts,
        "".join(chr(0x10FFFF - ord(ch)) for ch in created),
    )


def rs_pod(rs: Obj) -> Obj:
    return pod_from_template(rs)


class ReplicaSetController(OwnerController):
    api_version = APPS
    kind = "ReplicaSet"
    name = "replicaset-controller"

    async def sync(self, rs: Obj) -> float | None:
        meta = rs["metadata"]
        spec = rs.get("spec") or {}
        active = [p for p in owned_by(self.owned, rs) if is_active(p)]
        wanted = spec.get("replicas", 1)
        if len(active) < wanted:
            for _ in range(wanted - len(active)):
                created = await self.client.create(resource_path("v1", "pods", meta["namespace"]), rs_pod(rs))
                remember(self.owned, created)
                active.append(created)
                self.recorder.event(
                    rs, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
                )
        elif len(active) > wanted:
            victims = sorted(active, key=deletion_rank)[: len(active) - wanted]
            for pod in victims:
                try:
                    deleted = await self.client.delete(
                        resource_path("v1", "pods", meta["namespace"], pod["metadata"]["name"])
                    )
                except ApiError as error:
                    if not error.not_found:
                        raise
                    deleted = {}
                remember_deletion(self.owned, deleted)
                self.recorder.event(
                    rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}"
                )
            active = [p for p in active if p not in victims]
        min_ready = spec.get("minReadySeconds", 0)
        waits = [available_in(p, min_ready) for p in active]
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        status = {
            "replicas": len(active),
            "fullyLabeledReplicas": sum(
                1
                for p in active
                if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())
            ),
            "readyReplicas": sum(1 for p in active if is_ready(p)),
            "availableReplicas": sum(1 for w in waits if w == 0.0),
            "observedGeneration": meta.get("generation", 1),
        }
        for name in ("readyReplicas", "availableReplicas", "fullyLabeledReplicas"):
            if status[name] == 0:
                del status[name]
        current = {k: v for k, v in (rs.get("status") or {}).items() if k != "conditions"}
        if status != current:
            body = {
                **rs,
                "status": {
                    **status,
                    **{k: v for k, v in (rs.get("status") or {}).items() if k == "conditions"},
                },
            }
            written = await self.client.replace(
                resource_path(APPS, "replicasets", meta["namespace"], meta["name"], "status"), body
            )
            remember(self.owners, written)
        pending = [w for w in waits if w]
        return min(pending) if pending else None
