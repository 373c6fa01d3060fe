"""Which handler answers which path: the full routing table of the webhook process."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from kruise.api import features, shapes
from kruise.api.features import FeatureGates
from kruise.api.registry import KINDS
from kruise.webhook import paths
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny
from kruise.webhook.caches import StorePodsAndNodes
from kruise.webhook.handlers import (
    crr,
    deletion,
    kinds,
    persistentpodstate,
    pod,
    pub,
    sidecarset,
    statefulset,
    workloadspread,
)
from kruise.webhook.handlers.deletion import NamespaceContents
from kruise.webhook.handlers.pod import SidecarSetSource
from kruise.webhook.handlers.versions import at_version
from kruise.webhook.handlers.workloadspread import SpreadKeeper
from kruise.webhook.shapecheck import shape_checked

# Kinds whose validating webhook refuses everything while a gate is off (upstream: 403
# "feature-gate X is not enabled"), checked in this order.
KIND_GATES: dict[str, tuple[str, ...]] = {
    "ImagePullJob": (features.KRUISE_DAEMON, features.IMAGE_PULL_JOB_GATE),
    "ImageListPullJob": (features.KRUISE_DAEMON, features.IMAGE_PULL_JOB_GATE),
    "NodeImage": (features.KRUISE_DAEMON,),
    "PodProbeMarker": (features.POD_PROBE_MARKER_GATE, features.KRUISE_DAEMON),
    "ResourceDistribution": (features.RESOURCE_DISTRIBUTION_GATE,),
    "WorkloadSpread": (features.WORKLOAD_SPREAD,),
}


def gated(handler: Handler, gates: FeatureGates, names: tuple[str, ...]) -> Handler:
    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation in ("CREATE", "UPDATE"):
            for name in names:
                if not gates.enabled(name):
                    return deny(403, f"feature-gate {name} is not enabled")
        return await handler(req)

    return handle


def _spread_first(
    spread_check: Callable[[AdmissionRequest], Awaitable[Decision | None]], then: Handler | None
) -> Handler:
    """`/validate-pod` as upstream orders it: WorkloadSpread bookkeeping, then (when served) the
    PodUnavailableBudget checks."""

    async def handle(req: AdmissionRequest) -> Decision:
        refused = await spread_check(req)
        if refused is not None:
            return refused
        return await then(req) if then is not None else allow()

    return handle


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
    """`sidecarsets` None: the SidecarSet kind is not served, so no injection and no cross-checks.
    `budgets` None: no PodUnavailableBudget checks.
    `/validate-pod` is served while PodUnavailableBudget checks or WorkloadSpread bookkeeping of
    pod deletions/evictions (`spreads` and `objects` given, gate WorkloadSpread) apply.
    `objects` None: ContainerRecreateRequests are only defaulted, not checked against their pod.
    `spreads` None: no WorkloadSpread subset injection (it also needs gate WorkloadSpread).
    `persistent_pod_states` None: recreated StatefulSet pods are not steered back (PPS not served).
    `storage_classes`: read by Advanced StatefulSet's claim-template check (gate
    StatefulSetAutoResizePVCGate); None there means no class is known.
    `configuration`: `data` of ConfigMap kruise-configuration (the WorkloadSpread and the
    PersistentPodState custom-workload whitelists); None reads as an empty ConfigMap.
    `list_custom_resources`: lists a CRD's objects for a `Cascading` CRD deletion (gate
    DeletionProtectionForCRDCascadingGate); None lets such a deletion through.
    `probe_markers`: a namespace's PodProbeMarkers, whose probes a new pod carries for a serverless
    runtime (gate EnablePodProbeMarkerOnServerless); None when the kind is not served.
    A WorkloadSpread's conflict with another of its namespace is checked against `spreads`' cache
    (so only when it is given); a PersistentPodState's against `persistent_pod_states`."""
    gates = gates or FeatureGates()
    protection = gates.enabled(features.RESOURCES_DELETION_PROTECTION)
    template_no_defaults = gates.enabled(features.TEMPLATE_NO_DEFAULTS)
    host_ports = gates.enabled(features.DEFAULT_HOST_NETWORK_HOST_PORTS_IN_POD_TEMPLATES)
    routes: dict[str, Handler] = {}
    for info in KINDS:
        hooks = kinds.hooks_for(info)
        versions = tuple(v.name for v in info.versions)
        mutate = kinds.mutating_handler(hooks, template_no_defaults, host_ports)
        validate = kinds.validating_handler(hooks, deletion_protection=protection)
        if info.kind == "SidecarSet":
            mutate = sidecarset.mutating_handler(hooks)
            if sidecarsets is not None:
                validate = sidecarset.validating_handler(
                    hooks,
                    sidecarsets,
                    patch_metadata_defaults_allowed=gates.enabled(
                        features.SIDECARSET_PATCH_POD_METADATA_DEFAULTS_ALLOWED
                    ),
                )
        if info.group == "apps.kruise.io" and info.kind == "StatefulSet":
            resize = gates.enabled(features.STATEFULSET_AUTO_RESIZE_PVC_GATE)
            mutate = statefulset.statefulset_mutating_handler(
                hooks,
                resize,
                template_no_defaults,
                host_ports,
                auto_delete_pvc=gates.enabled(features.STATEFULSET_AUTO_DELETE_PVC),
            )
            validate = statefulset.statefulset_validating_handler(
                hooks, storage_classes, resize, deletion_protection=protection
            )
        if info.kind == "WorkloadSpread":
            validate = workloadspread.spread_validating_handler(
                hooks,
                configuration or dict,
                deletion_protection=protection,
                others=spreads.source.in_namespace if spreads is not None else None,
            )
        if info.kind == "PersistentPodState":
            validate = persistentpodstate.validating_handler(
                hooks,
                configuration or dict,
                persistent_pod_states or (lambda _namespace: []),
                deletion_protection=protection,
            )
        if info.kind == "ContainerRecreateRequest" and objects is not None:
            mutate = crr.mutating_handler(
                objects.pod, objects.node, daemon_gate=gates.enabled(features.KRUISE_DAEMON)
            )
        if info.kind in KIND_GATES:
            validate = gated(validate, gates, KIND_GATES[info.kind])
        mutate = at_version(mutate, info.group, info.kind, hooks.version)
        validate = at_version(validate, info.group, info.kind, hooks.version, validating=True)
        validate = shape_checked(validate, old=shapes.WORKLOAD)  # a DELETE reads the old object's dict
        for path in paths.kind_paths("mutate", info.group, info.kind, versions):
            routes[path] = mutate
        for path in paths.kind_paths("validate", info.group, info.kind, versions):
            routes[path] = validate
    delete_gate = gates.enabled(features.POD_UNAVAILABLE_BUDGET_DELETE_GATE)
    update_gate = gates.enabled(features.POD_UNAVAILABLE_BUDGET_UPDATE_GATE)
    budget_pubs = (
        budgets.source.in_namespace if budgets is not None and (delete_gate or update_gate) else None
    )
    if gates.enabled(features.POD_WEBHOOK):
        routes[paths.POD_MUTATE] = pod.pod_create_handler(
            gates.enabled(features.KRUISE_POD_READINESS_GATE),
            sidecarsets,
            sort_sidecars_by_name=gates.enabled(features.ENABLE_SORT_SIDECAR_CONTAINER_BY_NAME),
            pubs_in_namespace=budget_pubs,
            pub_workload_of=budgets.source.workload_of if budget_pubs is not None else None,
            spreads=spreads if gates.enabled(features.WORKLOAD_SPREAD) else None,
            persistent_pod_states=persistent_pod_states,
            configuration=configuration or dict,
            enhanced_liveness=gates.enabled(features.ENHANCED_LIVENESS_PROBE),
            probe_markers=(
                probe_markers if gates.enabled(features.ENABLE_POD_PROBE_MARKER_ON_SERVERLESS) else None
            ),
        )
        routes[paths.POD_MUTATE] = shape_checked(routes[paths.POD_MUTATE], new=shapes.POD)
    pod_validate = None
    if budgets is not None and (delete_gate or update_gate):
        pod_validate = pub.pod_validating_handler(
            budgets,
            delete_gate=delete_gate,
            update_gate=update_gate,
            in_place_pod_vertical_scaling=gates.enabled(features.IN_PLACE_POD_VERTICAL_SCALING),
        )
    spread_gates = gates.enabled(features.WORKLOAD_SPREAD) and gates.enabled(features.POD_WEBHOOK)
    if spreads is not None and objects is not None and spread_gates:
        pod_validate = _spread_first(workloadspread.pod_deletion_check(spreads, objects.pod), pod_validate)
    if pod_validate is not None:
        routes[paths.POD_VALIDATE] = shape_checked(
            pod_validate, new=shapes.POD, old=shapes.POD, subresources={"eviction": shapes.EVICTION}
        )
    workload = shape_checked(deletion.builtin_workload_handler(protection), old=shapes.WORKLOAD)
    for path in (paths.DEPLOYMENT, paths.REPLICASET, paths.STATEFULSET):
        routes[path] = workload
    always = shape_checked(deletion.always_only_handler(protection), old=shapes.METADATA_ONLY)
    routes[paths.SERVICE] = always
    routes[paths.INGRESS] = always
    crd = deletion.crd_handler(
        protection, gates.enabled(features.DELETION_PROTECTION_FOR_CRD_CASCADING_GATE), list_custom_resources
    )
    routes[paths.CRD] = shape_checked(crd, old=shapes.CRD)
    namespaces = deletion.namespace_handler(namespace_contents, protection)
    routes[paths.NAMESPACE] = shape_checked(namespaces, old=shapes.METADATA_ONLY)
    return routes
