"""Read-only views over informer caches for handlers, so admission never lists from the apiserver."""

from __future__ import annotations

from kruise.kube.store import NAMESPACE_INDEX, Store


def _pod_active(pod: dict) -> bool:
    """kubecontroller.IsPodActive: not finished and not being deleted."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not (pod.get("metadata") or {}).get("deletionTimestamp")


def _pvc_bound(pvc: dict) -> bool:
    bound = (pvc.get("status") or {}).get("phase") == "Bound"
    return bound and not (pvc.get("metadata") or {}).get("deletionTimestamp")


class StoreNamespaceContents:
    """Counts a namespace's active pods and Bound PVCs from two informer stores (namespace-indexed)."""

    def __init__(self, pods: Store, pvcs: Store) -> None:
        self._pods = pods
        self._pvcs = pvcs

    def active_pods(self, namespace: str) -> int:
        return sum(1 for pod in self._pods.by_index(NAMESPACE_INDEX, namespace) if _pod_active(pod))

    def bound_pvcs(self, namespace: str) -> int:
        return sum(1 for pvc in self._pvcs.by_index(NAMESPACE_INDEX, namespace) if _pvc_bound(pvc))
