"""Pod CREATE mutation, in upstream's order: the `KruisePodReady` readiness gate, WorkloadSpread
subset injection (not for dryRun requests: it books the pod in the WorkloadSpread status), SidecarSet
injection (`kruise.control.sidecarset`), container launch priority barriers (after the sidecars,
because they must see them too), the related-pub annotation, then PersistentPodState's node
selector and preferred affinity for a recreated StatefulSet pod
(`kruise.control.persistentpodstate.podstates`),
enhanced liveness, and the PodProbeMarker probes a serverless runtime runs
(`kruise.control.podprobemarker.serverless`).

Upstream injects the readiness gate (not InPlaceUpdateReady, which the CloneSet controller itself
writes into the pods it creates) so lifecycle hooks and container recreation can hold a pod NotReady
without fighting the kubelet. Everything here only edits the admitted object, so a dryRun request
is answered exactly like a real one with nothing else touched; and the handler is idempotent because
the apiserver may reinvoke mutating webhooks.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kruise.api import features, shapes
from kruise.api.controllerref import controller_of
from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.api.objects import section
from kruise.control.common.customworkloads import WhitelistError, parse_pps_whitelist
from kruise.control.enhancedliveness import probecontext
from kruise.control.launchpriority.barriers import PriorityError, inject_barriers
from kruise.control.persistentpodstate import podstates
from kruise.control.podprobemarker import serverless
from kruise.control.pub import budget
from kruise.control.sidecarset.injection import InjectionConflict, InjectionError, inject
from kruise.control.sidecarset.matching import SelectorError, matching_sidecarsets
from kruise.control.sidecarset.revision import (
    PartitionError,
    RevisionNotFound,
    sidecarset_for_new_pod,
)
from kruise.control.uniteddeployment.podpatch import PatchError
from kruise.control.workloadspread.subsets import MaxReplicasError
from kruise.control.workloadspread.targets import OwnerNotFound
from kruise.kube.errors import ApiError
from kruise.webhook import paths
from kruise.webhook.admission import AdmissionRequest, Decision, Handler, allow, deny, mutable, patched
from kruise.webhook.caches import CacheNotCurrent
from kruise.webhook.context import WebhookContext
from kruise.webhook.handlers import pub, workloadspread
from kruise.webhook.handlers.workloadspread import SpreadKeeper
from kruise.webhook.registry import Registration, WebhookSpec
from kruise.webhook.shapecheck import shape_checked

KRUISE_GROUP = "apps.kruise.io"


class SidecarSetSource(Protocol):
    """Read-only SidecarSets and namespace labels (the webhook's informer caches)."""

    def list(self) -> list[dict[str, Any]]: ...

    def get(self, name: str) -> dict[str, Any] | None: ...

    def namespace_labels(self, name: str) -> dict[str, str] | None: ...

    def configuration(self) -> dict[str, str]: ...

    def revisions(self) -> list[dict[str, Any]]: ...

    @property
    def namespace(self) -> str: ...


def owned_by_kruise(pod: dict[str, Any]) -> bool:
    ref = controller_of(pod)
    return ref is not None and str(ref.get("apiVersion", "")).split("/")[0] == KRUISE_GROUP


def inject_readiness_gate(pod: dict[str, Any], all_pods: bool = False) -> bool:
    """Add the gate in place; True when the pod changed. `all_pods` is gate KruisePodReadinessGate."""
    if not all_pods and not owned_by_kruise(pod):
        return False
    gates = pod.setdefault("spec", {}).setdefault("readinessGates", [])
    if any(g.get("conditionType") == CONDITION_KRUISE_POD_READY for g in gates):
        return False
    gates.append({"conditionType": CONDITION_KRUISE_POD_READY})
    return True


def _inject_sidecars(
    pod: dict[str, Any],
    source: SidecarSetSource,
    sort_by_name: bool,
    now: datetime.datetime,
    draw: Callable[[], float],
) -> bool:
    """Each matched SidecarSet is injected at the version `injectionStrategy.revision` asks for."""
    matched = matching_sidecarsets(source.list(), pod, source.namespace_labels)
    if any(section(s, "spec", "injectionStrategy").get("revision") for s in matched):
        revisions = source.revisions()
        matched = [dict(sidecarset_for_new_pod(s, pod, revisions, source.namespace, draw)) for s in matched]
    return inject(pod, matched, sort_containers_by_name=sort_by_name, now=now)


def pod_create_handler(
    all_pods: bool = False,
    sidecarsets: SidecarSetSource | None = None,
    *,
    sort_sidecars_by_name: bool = False,
    clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    pubs_in_namespace: Callable[[str], list[dict[str, Any]]] | None = None,
    pub_workload_of: Callable[[dict[str, Any], str], dict[str, Any] | None] | None = None,
    spreads: SpreadKeeper | None = None,
    persistent_pod_states: Callable[[str], list[dict[str, Any]]] | None = None,
    draw: Callable[[], float] = random.random,
    configuration: Callable[[], Mapping[str, str]] = dict,
    enhanced_liveness: bool = False,
    probe_markers: Callable[[str], list[dict[str, Any]]] | None = None,
) -> Any:
    """`all_pods` is gate KruisePodReadinessGate, `sort_sidecars_by_name` gate
    EnableSortSidecarContainerByName; without `sidecarsets` (SidecarSet not installed) no injection.
    `pubs_in_namespace` (PodUnavailableBudget gates on): stamp the related-pub annotation at once;
    `pub_workload_of` resolves the pod's owner to the workload a PUB targets (ReplicaSet -> Deployment).
    `spreads` (gate WorkloadSpread): book and inject the pod's WorkloadSpread subset.
    `persistent_pod_states` (the namespace's PersistentPodStates; None when the kind is not served):
    a recreated StatefulSet pod (or one of a kind in kruise-configuration's
    `PPS_Watch_Custom_Workload_WhiteList`, read from `configuration` on each pod as upstream; a bad
    one refuses the pod with 500 as upstream) gets its recorded topology back. `draw` is the random number
    (in [0, 1)) injectionStrategy.revision policy Partial compares with a percentage partition.
    `enhanced_liveness` (gate EnhancedLivenessProbe): a kruise-owned pod annotated
    `apps.kruise.io/using-enhanced-liveness: "true"` has its livenessProbes moved into an annotation.
    `probe_markers` (the namespace's PodProbeMarkers; gate EnablePodProbeMarkerOnServerless, None when
    off or the kind is not served): the probes of the markers matching the pod are written into its
    `kruise.io/podprobe` annotation for a serverless runtime to run."""

    async def handle(req: AdmissionRequest) -> Decision:
        if req.operation != "CREATE" or req.sub_resource or req.resource.resource != "pods" or not req.object:
            return allow()
        pod = mutable(req.object)
        metadata = pod.setdefault("metadata", {})
        had_namespace = bool(metadata.get("namespace"))
        if not had_namespace and req.namespace:
            metadata["namespace"] = req.namespace  # matching needs it; it is not part of the patch
        changed = inject_readiness_gate(pod, all_pods)
        if spreads is not None and not (req.dry_run or (req.options or {}).get("dryRun")):
            try:
                spread = await spreads.on_create(pod)
            except (OwnerNotFound, PatchError, MaxReplicasError, ApiError, CacheNotCurrent) as exc:
                return deny(500, str(exc))
            if spread is not None:
                pod, metadata, changed = spread, spread["metadata"], True
        if sidecarsets is not None:
            try:
                changed = _inject_sidecars(pod, sidecarsets, sort_sidecars_by_name, clock(), draw) or changed
            except (InjectionError, SelectorError, RevisionNotFound, PartitionError) as exc:
                return deny(500, str(exc))
            except InjectionConflict as exc:
                name = metadata.get("name") or metadata.get("generateName") or ""
                return deny(422, f'Pod "{name}" is invalid: {exc}')
        try:
            changed = inject_barriers(pod) or changed
        except PriorityError as exc:
            return deny(400, str(exc))
        if pubs_in_namespace is not None:
            namespace = metadata.get("namespace") or ""
            name = budget.pub_for_new_pod(pod, pubs_in_namespace(namespace), pub_workload_of)
            if name:
                annotations = metadata.setdefault("annotations", {})
                annotations.update(budget.related_pub_patch(name)["metadata"]["annotations"])
                changed = True
        if persistent_pod_states is not None:
            try:
                whitelist = parse_pps_whitelist(configuration())
            except WhitelistError as exc:
                return deny(500, str(exc))
            states = persistent_pod_states(metadata.get("namespace") or "")
            changed = podstates.inject(pod, states, whitelist) or changed
        if enhanced_liveness and owned_by_kruise(pod):
            changed = probecontext.move_liveness_probes(pod) or changed
        if probe_markers is not None:
            markers = probe_markers(metadata.get("namespace") or "")
            changed = serverless.annotate_new_pod(pod, markers) or changed
        if not had_namespace:
            metadata.pop("namespace", None)
        return patched(pod) if changed else allow()

    return handle


def _budget_gates(ctx: WebhookContext) -> tuple[bool, bool]:
    return (
        ctx.enabled(features.POD_UNAVAILABLE_BUDGET_DELETE_GATE),
        ctx.enabled(features.POD_UNAVAILABLE_BUDGET_UPDATE_GATE),
    )


def _mutating(ctx: WebhookContext) -> Handler:
    budgets = ctx.budgets if any(_budget_gates(ctx)) else None
    serverless = ctx.enabled(features.ENABLE_POD_PROBE_MARKER_ON_SERVERLESS)
    handler = pod_create_handler(
        ctx.enabled(features.KRUISE_POD_READINESS_GATE),
        ctx.sidecarsets,
        sort_sidecars_by_name=ctx.enabled(features.ENABLE_SORT_SIDECAR_CONTAINER_BY_NAME),
        pubs_in_namespace=budgets.source.in_namespace if budgets is not None else None,
        pub_workload_of=budgets.source.workload_of if budgets is not None else None,
        spreads=ctx.spreads if ctx.enabled(features.WORKLOAD_SPREAD) else None,
        persistent_pod_states=ctx.persistent_pod_states,
        configuration=ctx.configuration,
        enhanced_liveness=ctx.enabled(features.ENHANCED_LIVENESS_PROBE),
        probe_markers=ctx.probe_markers if serverless else None,
    )
    return shape_checked(handler, new=shapes.POD)


def _spread_first(spread_check: Callable[[AdmissionRequest], Any], then: Handler | None) -> Handler:
    """`/validate-pod` as upstream orders it: WorkloadSpread bookkeeping, then (when served) the
    PodUnavailableBudget checks."""

    async def handle(req: AdmissionRequest) -> Decision:
        refused = await spread_check(req)
        if refused is not None:
            return refused
        return await then(req) if then is not None else allow()

    return handle


def _validating(ctx: WebhookContext) -> Handler | None:
    """Served while PodUnavailableBudget checks (a keeper and a PUB gate) or WorkloadSpread bookkeeping
    of pod deletions/evictions (the keeper, the pod cache, gates WorkloadSpread and PodWebhook) apply."""
    delete_gate, update_gate = _budget_gates(ctx)
    handler = None
    if ctx.budgets is not None and (delete_gate or update_gate):
        handler = pub.pod_validating_handler(
            ctx.budgets,
            delete_gate=delete_gate,
            update_gate=update_gate,
            in_place_pod_vertical_scaling=ctx.enabled(features.IN_PLACE_POD_VERTICAL_SCALING),
        )
    spread_gates = ctx.enabled(features.WORKLOAD_SPREAD) and ctx.enabled(features.POD_WEBHOOK)
    if ctx.spreads is not None and ctx.objects is not None and spread_gates:
        handler = _spread_first(workloadspread.pod_deletion_check(ctx.spreads, ctx.objects.pod), handler)
    if handler is None:
        return None
    return shape_checked(handler, new=shapes.POD, old=shapes.POD, subresources={"eviction": shapes.EVICTION})


# Pods in kruise's own namespace (label control-plane=openkruise) and kube-system are never intercepted:
# a webhook that must admit its own pods could never start.
POD_NAMESPACE_SELECTOR = {
    "matchExpressions": [
        {"key": "control-plane", "operator": "NotIn", "values": ["openkruise"]},
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system"]},
    ]
}


def _pods(name: str, path: str, resource: str, operations: tuple[str, ...]) -> WebhookSpec:
    return WebhookSpec(
        name, path, (resource,), operations, versions=("v1",), namespace_selector=POD_NAMESPACE_SELECTOR
    )


REGISTRATIONS = (
    Registration(
        "pod create", (paths.POD_MUTATE,), _mutating, gates=(features.POD_WEBHOOK,),
        webhooks=(_pods("mpod.kb.io", paths.POD_MUTATE, "pods", ("CREATE",)),),
    ),
    Registration(
        "pod update, delete and eviction", (paths.POD_VALIDATE,), _validating,
        webhooks=(
            _pods("vpod.kb.io", paths.POD_VALIDATE, "pods", ("UPDATE", "DELETE")),
            _pods("vpodeviction.kb.io", paths.POD_VALIDATE, "pods/eviction", ("CREATE",)),
        ),
    ),
)  # fmt: skip
