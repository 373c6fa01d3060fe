"""What every webhook handler is built from: caches, client-backed keepers, gates, configuration.

One object instead of a parameter per source, so a handler module takes what it reads from the context
and a new concern adds a field here rather than another optional argument to every builder. A source
left None means the process does not serve (or has not found) that kind; each handler decides what
that means for it (most fall back to less checking, as upstream does when a kind is not installed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kruise.api.features import FeatureGates

if TYPE_CHECKING:
    from kruise.webhook.caches import StorePodsAndNodes
    from kruise.webhook.handlers.deletion import ListInstances, NamespaceContents
    from kruise.webhook.handlers.pod import SidecarSetSource
    from kruise.webhook.handlers.pub import BudgetKeeper
    from kruise.webhook.handlers.statefulset import StorageClassSource
    from kruise.webhook.handlers.workloadspread import SpreadKeeper


def _no_configuration() -> Mapping[str, str]:
    return {}


def _no_namespace_objects(_namespace: str) -> list[dict[str, Any]]:
    return []


@dataclass(frozen=True)
class WebhookContext:
    namespace_contents: NamespaceContents | None = None
    """Active pods and bound PVCs of a namespace (Namespace deletion protection)."""
    sidecarsets: SidecarSetSource | None = None
    """None: the SidecarSet kind is not served, so no injection and no cross-checks."""
    gates: FeatureGates = field(default_factory=FeatureGates)
    budgets: BudgetKeeper | None = None
    """None: no PodUnavailableBudget checks."""
    objects: StorePodsAndNodes | None = None
    """Pods and nodes; None: ContainerRecreateRequests are only defaulted, not checked against their pod."""
    spreads: SpreadKeeper | None = None
    """None: no WorkloadSpread subset injection, deletion bookkeeping or conflict check."""
    persistent_pod_states: Callable[[str], list[dict[str, Any]]] | None = None
    """A namespace's PersistentPodStates; None: recreated StatefulSet pods are not steered back."""
    storage_classes: StorageClassSource | None = None
    """Read by Advanced StatefulSet's claim-template check; None there means no class is known."""
    configuration: Callable[[], Mapping[str, str]] = _no_configuration
    """`data` of ConfigMap kruise-configuration (the custom-workload whitelists)."""
    list_custom_resources: ListInstances | None = None
    """Lists a CRD's objects for a `Cascading` CRD deletion; None lets such a deletion through."""
    probe_markers: Callable[[str], list[dict[str, Any]]] | None = None
    """A namespace's PodProbeMarkers (serverless probes); None when the kind is not served."""

    def enabled(self, gate: str) -> bool:
        return self.gates.enabled(gate)

    def persistent_pod_states_in(self) -> Callable[[str], list[dict[str, Any]]]:
        """The PersistentPodState lister, an empty one when the kind is not served."""
        return self.persistent_pod_states or _no_namespace_objects
