"""The routing table from positional sources, the call shape the webhook tests were written against.

The table itself comes from `kruise.webhook.registry` (each handler module registers its paths); this
only gathers the sources into a `WebhookContext`. New code builds the context directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kruise.api.features import FeatureGates
from kruise.webhook import registry
from kruise.webhook.admission import Handler
from kruise.webhook.caches import StorePodsAndNodes
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers import deletion, pub, statefulset
from kruise.webhook.handlers.deletion import NamespaceContents
from kruise.webhook.handlers.pod import SidecarSetSource
from kruise.webhook.handlers.workloadspread import SpreadKeeper


def build_routes(
    namespace_contents: NamespaceContents,
    sidecarsets: SidecarSetSource | None = None,
    gates: FeatureGates | None = None,
    budgets: pub.BudgetKeeper | None = None,
    objects: StorePodsAndNodes | None = None,
    spreads: SpreadKeeper | None = None,
    persistent_pod_states: Callable[[str], list[dict[str, Any]]] | None = None,
    storage_classes: statefulset.StorageClassSource | None = None,
    configuration: Callable[[], Mapping[str, str]] | None = None,
    list_custom_resources: deletion.ListInstances | None = None,
    probe_markers: Callable[[str], list[dict[str, Any]]] | None = None,
) -> dict[str, Handler]:
    """Each argument is the `WebhookContext` field of the same name (see there what None means)."""
    sources: dict[str, Any] = {"gates": gates} if gates is not None else {}
    if configuration is not None:
        sources["configuration"] = configuration
    ctx = WebhookContext(
        namespace_contents=namespace_contents,
        sidecarsets=sidecarsets,
        budgets=budgets,
        objects=objects,
        spreads=spreads,
        persistent_pod_states=persistent_pod_states,
        storage_classes=storage_classes,
        list_custom_resources=list_custom_resources,
        probe_markers=probe_markers,
        **sources,
    )
    return registry.routes(ctx)
