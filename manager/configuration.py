"""ConfigMap `kruise-configuration` (kruise's namespace) as controllers read it: one shared informer
holding only that ConfigMap, and its `data` on demand. The custom-workload whitelists of
WorkloadSpread and PersistentPodState live there."""

from __future__ import annotations

from collections.abc import Callable

from kruise.api.keys import CONFIGMAP_KRUISE_CONFIGURATION
from kruise.api.objects import section
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONFIGMAPS
from kruise.manager.context import ManagerContext


def configuration_informer(ctx: ManagerContext) -> SharedInformer:
    """The shared informer watching only kruise-configuration in kruise's namespace."""
    return ctx.informers.informer(
        CONFIGMAPS, ctx.namespace, field_selector=f"metadata.name={CONFIGMAP_KRUISE_CONFIGURATION}"
    )


def configuration_of(informer: SharedInformer) -> Callable[[], dict[str, str]]:
    """`data` of ConfigMap kruise-configuration from an informer holding only it ({} when absent)."""

    def data() -> dict[str, str]:
        for config_map in informer.list():
            return dict(section(config_map, "data"))
        return {}

    return data
