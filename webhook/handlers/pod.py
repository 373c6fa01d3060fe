"""Pod CREATE mutation: the `KruisePodReady` readiness gate for pods a Kruise workload controls, and
container launch priority barriers (`kruise.control.launchpriority`).

Upstream injects this gate (not InPlaceUpdateReady, which the CloneSet controller itself writes into
the pods it creates) so lifecycle hooks and container recreation can hold a pod NotReady without
fighting the kubelet. The handler is idempotent because the apiserver may reinvoke mutating webhooks.
"""

from __future__ import annotations

from typing import Any

from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.control.launchpriority import PriorityError, inject_barriers
from kruise.webhook.admission import AdmissionRequest, Decision, allow, deny, mutable, patched

KRUISE_GROUP = "apps.kruise.io"


def owned_by_kruise(pod: dict[str, Any]) -> bool:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and str(ref.get("apiVersion", "")).split("/")[0] == KRUISE_GROUP:
            return True
    return False


def inject_readiness_gate(pod: dict[str, Any], all_pods: bool = False) -> bool:
    """Add the gate in place; True when the pod changed. `all_pods` is gate KruisePodReadinessGate."""
    if not all_pods and not owned_by_kruise(pod):
        return False
    gates = pod.setdefault("spec", {}).setdefault("readinessGates", [])
    if any(g.get("conditionType") == CONDITION_KRUISE_POD_READY for g in gates):
        return False
    gates.append({"conditionType": CONDITION_KRUISE_POD_READY})
    return True


def pod_create_handler(all_pods: bool = False) -> Any:
    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation != "CREATE" or req.sub_resource or req.resource.resource != "pods" or not req.object:
            return allow()
        pod = mutable(req.object)
        changed = inject_readiness_gate(pod, all_pods)
        try:
            changed = inject_barriers(pod) or changed  # upstream runs this after sidecar injection
        except PriorityError as exc:
            return deny(400, str(exc))
        return patched(pod) if changed else allow()

    return handle
