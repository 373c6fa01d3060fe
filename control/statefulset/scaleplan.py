"""One scale pass of an Advanced StatefulSet as a plan (upstream ``updateStatefulSet`` up to the
rolling update: ``processReplica`` over live ordinals, then ``processCondemned``).

OrderedReady (monotonic) handles one pod at a time: ordinals ascending, each only after its
predecessors are Running and Available; scale-in from the highest ordinal, only when every
remaining pod is healthy (the first unhealthy pod itself may go). Parallel acts on every pod at
once, except that ``scaleStrategy.maxUnavailable`` caps how many not-yet-available pods the
pass may leave in flight. A failed or succeeded pod is deleted and recreated under its name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kruise.api.common import scaled_value
from kruise.api.keys import (
    ANNOTATION_LIFECYCLE_TIMESTAMP,
    LABEL_LIFECYCLE_STATE,
    LIFECYCLE_STATE_NORMAL,
    LIFECYCLE_STATE_PREPARING_NORMAL,
)
from kruise.api.objects import Obj, meta_of, section, spec_of
from kruise.control.common import lifecycle
from kruise.control.statefulset import health
from kruise.control.statefulset.actions import (
    Action,
    AlignClaimOwners,
    CreatePod,
    EnsureClaims,
    FixIdentity,
    deletion,
)
from kruise.control.statefulset.identity import (
    OrdinalRange,
    ordinal_of,
    ordinal_range,
    partition_pods,
    pod_name_of,
)
from kruise.control.statefulset.pods import (
    identity_matches,
    identity_patch,
    needs_current_revision,
    new_pod,
    revision_of,
)


@dataclass(frozen=True)
class Revisions:
    """The set's current and update revisions: names and pod templates (``ApplyRevision``)."""

    current: str
    update: str
    current_template: Mapping[str, Any]
    update_template: Mapping[str, Any]


@dataclass(frozen=True)
class Gates:
    start_ordinal: bool = False
    pod_index_label: bool = True
    # PreparingUpdateAsUpdate: a PreparingUpdate pod counts as updated (see `needs_current_revision`)
    preparing_update_as_update: bool = False
    # StatefulSetAutoDeletePVC: claims of existing pods are kept owned as the retention policy says
    auto_delete_pvc: bool = False


@dataclass(frozen=True)
class ScalePlan:
    """``actions`` in execution order. ``replicas`` maps every live ordinal to its pod, with
    ``placeholders`` (ordinals whose pod does not exist yet; those created by this pass and
    those held back) standing in as built pods: the update phase counts them as unavailable.
    ``condemned``: pods to remove, highest ordinal first. ``update_allowed``: the pass reached
    the end and the rolling update may run. ``wait``: what blocked the pass (for logs);
    ``requeue_after``: seconds until a pod may become available."""

    live_range: OrdinalRange
    replicas: dict[int, Obj]
    placeholders: frozenset[int]
    condemned: tuple[Obj, ...]
    actions: tuple[Action, ...]
    update_allowed: bool
    wait: str | None
    requeue_after: float | None
    first_unhealthy: str | None
    unhealthy: int


@dataclass
class _ScalePass:
    """The ScalePlan while the pass walks the pods (the steps below fill it in turn); `result` freezes
    it once the pass ends."""

    live_range: OrdinalRange
    replicas: dict[int, Obj]
    placeholders: frozenset[int]
    condemned: list[Obj]
    actions: list[Action] = field(default_factory=list)
    update_allowed: bool = True
    wait: str | None = None
    requeue_after: float | None = None
    first_unhealthy: str | None = None
    unhealthy: int = 0

    def wait_for(self, seconds: float) -> None:
        if seconds > 0 and (self.requeue_after is None or seconds < self.requeue_after):
            self.requeue_after = seconds

    def result(self) -> ScalePlan:
        return ScalePlan(
            live_range=self.live_range,
            replicas=self.replicas,
            placeholders=self.placeholders,
            condemned=tuple(self.condemned),
            actions=tuple(self.actions),
            update_allowed=self.update_allowed,
            wait=self.wait,
            requeue_after=self.requeue_after,
            first_unhealthy=self.first_unhealthy,
            unhealthy=self.unhealthy,
        )


class _Budget:
    """``scaleStrategy.maxUnavailable`` as upstream's ``decreaseAndCheckMaxUnavailable``: each
    use takes one unit and reports exhaustion once the count reaches zero; no budget never
    exhausts."""

    def __init__(self, value: int | None) -> None:
        self.left = value

    def take(self) -> bool:
        if self.left is None:
            return False
        self.left -= 1
        return self.left <= 0


def scale_max_unavailable(sts: Mapping[str, Any]) -> int | None:
    """``scaleStrategy.maxUnavailable`` against spec.replicas, rounded down, at least 1."""
    spec = sts.get("spec") or {}
    value = section(spec, "scaleStrategy").get("maxUnavailable")
    if value is None:
        return None
    replicas = spec.get("replicas")
    total = 1 if replicas is None else int(replicas)
    try:
        scaled = scaled_value(value, total, round_up=False)
    except ValueError as err:
        raise ValueError(f"spec.scaleStrategy.maxUnavailable: {err}") from err
    return max(scaled, 1)


def is_monotonic(sts: Mapping[str, Any]) -> bool:
    return spec_of(sts).get("podManagementPolicy") != "Parallel"


def _initial_lifecycle(sts: Mapping[str, Any], pod: dict[str, Any], now: datetime) -> None:
    hook = section(sts, "spec", "lifecycle").get("preNormal")
    state = LIFECYCLE_STATE_NORMAL
    if hook and not lifecycle.is_all_hooked(hook, pod):
        state = LIFECYCLE_STATE_PREPARING_NORMAL
    meta = pod["metadata"]
    meta["labels"][LABEL_LIFECYCLE_STATE] = state
    meta["annotations"] = {
        **section(meta, "annotations"),
        ANNOTATION_LIFECYCLE_TIMESTAMP: lifecycle.rfc3339(now),
    }


def _build_missing(
    sts: Mapping[str, Any],
    live_range: OrdinalRange,
    replicas: dict[int, Obj],
    revisions: Revisions,
    gates: Gates,
    now: datetime,
) -> dict[int, dict[str, Any]]:
    built: dict[int, dict[str, Any]] = {}
    for ordinal in live_range.ordinals():
        if ordinal in replicas:
            continue
        if needs_current_revision(
            sts,
            live_range,
            ordinal,
            replicas,
            revisions.update,
            preparing_update_as_update=gates.preparing_update_as_update,
        ):
            revision, template = revisions.current, revisions.current_template
        else:
            revision, template = revisions.update, revisions.update_template
        pod = new_pod(sts, template, ordinal, revision, pod_index_label=gates.pod_index_label)
        _initial_lifecycle(sts, pod, now)
        replicas[ordinal] = pod
        built[ordinal] = pod
    return built


def _find_unhealthy(plan: _ScalePass) -> Obj | None:
    first: Obj | None = None
    for pod in [*(plan.replicas[n] for n in sorted(plan.replicas)), *reversed(plan.condemned)]:
        if not health.is_healthy(pod):
            plan.unhealthy += 1
            if first is None or ordinal_of(pod) < ordinal_of(first):
                first = pod
    plan.first_unhealthy = pod_name_of(first) if first is not None else None
    return first


def _process_replicas(
    sts: Mapping[str, Any], plan: _ScalePass, built: Mapping[int, dict[str, Any]], gates: Gates, now: datetime
) -> bool:
    """Returns True when the pass must end here (monotonic block or an action in monotonic
    mode); a Parallel pass only ever stops the replica loop and goes on."""
    monotonic = is_monotonic(sts)
    budget = _Budget(scale_max_unavailable(sts))
    min_ready = health.min_ready_seconds(sts)
    has_claims = bool(spec_of(sts).get("volumeClaimTemplates"))
    for ordinal in plan.live_range.ordinals():
        pod = plan.replicas[ordinal]
        name = pod_name_of(pod)
        if health.is_failed(pod) or health.is_succeeded(pod):
            if budget.take():
                plan.wait = f"scale budget used up at failed pod {name}"
                return False
            if not health.is_terminating(pod):
                action = deletion(sts, pod, "failed")
                if action is not None:
                    plan.actions.append(action)
            if monotonic:
                plan.wait = f"failed pod {name} is being recreated"
                return True
            continue
        if ordinal in built:
            plan.actions.append(CreatePod(ordinal, revision_of(pod), built[ordinal]))
            if monotonic:
                plan.wait = f"created pod {name}"
                return True
            if budget.take():
                plan.wait = f"scale budget used up after creating pod {name}"
                return False
            continue
        if health.is_pending(pod) and has_claims:
            plan.actions.append(EnsureClaims(pod, ordinal))
        if health.is_terminating(pod):
            if monotonic:
                plan.wait = f"waiting for pod {name} to terminate"
                return True
            if budget.take():
                plan.wait = f"scale budget used up at terminating pod {name}"
                return False
        if monotonic or budget.left is not None:
            available, wait = health.running_and_available(pod, min_ready, now)
            if not available:
                plan.wait_for(wait)
                if monotonic:
                    plan.wait = f"waiting for pod {name} to be Running and Available"
                    return True
                # upstream takes budget again here even for a terminating pod (counted above)
                if budget.take():
                    plan.wait = f"scale budget used up at unavailable pod {name}"
                    return False
        if not identity_matches(sts, pod, pod_index_label=gates.pod_index_label):
            plan.actions.append(
                FixIdentity(pod, identity_patch(sts, pod, pod_index_label=gates.pod_index_label))
            )
        if gates.auto_delete_pvc and has_claims:
            plan.actions.append(AlignClaimOwners(pod, condemned=False))
    return False


def _process_condemned(
    sts: Mapping[str, Any], plan: _ScalePass, first_unhealthy: Obj | None, now: datetime
) -> bool:
    monotonic = is_monotonic(sts)
    min_ready = health.min_ready_seconds(sts)
    for pod in plan.condemned:
        name = pod_name_of(pod)
        if health.is_terminating(pod):
            if monotonic:
                plan.wait = f"waiting for pod {name} to terminate before scaling down"
                return True
            continue
        if monotonic and pod is not first_unhealthy:
            blocker = pod_name_of(first_unhealthy or pod)
            if not health.is_running_and_ready(pod):
                plan.wait = f"waiting for pod {blocker} to be Running and Ready before scaling down"
                return True
            available, wait = health.running_and_available(pod, min_ready, now)
            if not available:
                plan.wait_for(wait)
                plan.wait = f"waiting for pod {blocker} to be Available before scaling down"
                return True
        action = deletion(sts, pod, "condemned")
        if action is not None:
            plan.actions.append(action)
            if monotonic:
                plan.wait = f"scaling down pod {name}"
                return True
    return False


def plan_scale(
    sts: Mapping[str, Any],
    pods: Sequence[Obj],
    revisions: Revisions,
    now: datetime,
    gates: Gates = Gates(),
) -> ScalePlan:
    """The scale actions of one pass for ``sts`` (a defaulted v1beta1 dict) owning ``pods``.

    The controller refreshes pod states (in-place conditions, lifecycle) itself; this plan only
    needs the pods as observed. With ``gates.auto_delete_pvc`` it asks for the claims' owner
    references to be checked (``AlignClaimOwners``) where upstream does: for each live pod the
    replica loop reaches, and for every condemned pod before the first removal.
    """
    live_range = ordinal_range(sts.get("spec") or {}, gates.start_ordinal)
    split = partition_pods(pods, live_range)
    replicas: dict[int, Obj] = dict(split.live)
    built = _build_missing(sts, live_range, replicas, revisions, gates, now)
    plan = _ScalePass(live_range, replicas, frozenset(built), split.condemned)
    first_unhealthy = _find_unhealthy(plan)
    if meta_of(sts).get("deletionTimestamp"):
        plan.update_allowed = False
        plan.wait = "statefulset is being deleted"
        return plan.result()
    if _process_replicas(sts, plan, built, gates, now):
        plan.update_allowed = False
        return plan.result()
    if gates.auto_delete_pvc and spec_of(sts).get("volumeClaimTemplates"):
        # upstream fixes every condemned pod's claims before removing any of them
        plan.actions.extend(AlignClaimOwners(pod, condemned=True) for pod in split.condemned)
    if _process_condemned(sts, plan, first_unhealthy, now):
        plan.update_allowed = False
        return plan.result()
    return plan.result()
