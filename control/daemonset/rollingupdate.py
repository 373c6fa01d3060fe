"""The rolling-update step of an Advanced DaemonSet (``rollingUpdate`` upstream), as a plan.

Each pass looks at every node that should run the daemon pod (or already runs one), keeps the
nodes the partition and the node selector allow to update, and then either

- without surge (``maxSurge`` 0): picks old pods to replace — every old pod that is unavailable
  anyway, plus available old pods while the count of unavailable nodes stays under
  ``maxUnavailable``. The controller deletes them (or updates them in place for
  ``InPlaceIfPossible``) and its manage step creates the new pods; or
- with surge: picks nodes to get a new pod beside the old one — every node whose old pod is
  unavailable, plus up to ``maxSurge`` nodes with an available old pod — and old pods to delete
  once the new pod on their node is available for ``minReadySeconds``.

Which nodes may update: nodes sorted by name, highest first, already-updated nodes first, then
nodes whose pod is being replaced (none left, or PreparingDelete), then either the nodes matching
``rollingUpdate.selector`` (when set; the others are left alone) or all others; the list is cut to
``nodes − partition`` (a percentage partition is scaled against ``status.desiredNumberScheduled``,
rounded down). Only the kept nodes count toward the unavailability and surge budgets.

Upstream walks a Go map here, so its choice among candidates is random; this plan walks the
sorted list, so it picks the highest node names first — deterministic, within the same rules.
``paused`` or the OnDelete strategy ⇒ no plan at all (new nodes still get pods from the manage step).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kruise.api.common import IntOrStringError, LabelSelector, scaled_value, selector_matches
from kruise.api.daemonset import STRATEGY_ROLLING_UPDATE
from kruise.api.keys import LABEL_CONTROLLER_REVISION_HASH, LIFECYCLE_STATE_PREPARING_DELETE
from kruise.api.objects import Obj, annotations_of, meta_of, section, status_of
from kruise.control.common import lifecycle
from kruise.control.common.nodeeligibility import LABEL_TEMPLATE_GENERATION, node_labels, node_name
from kruise.control.common.podstatus import is_available

Node = Mapping[str, Any]

ROLLING_UPDATE_PATH = "spec.updateStrategy.rollingUpdate"


class RollingUpdateError(ValueError):
    """A rolling-update setting that cannot be evaluated; the message names the field."""


@dataclass(frozen=True)
class RollingUpdateSettings:
    """What the rolling update reads from a DaemonSet (spec, and status.desiredNumberScheduled)."""

    strategy_type: str = STRATEGY_ROLLING_UPDATE
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None
    partition: int | str | None = None
    selector: Mapping[str, Any] | None = None
    paused: bool = False
    min_ready_seconds: int = 0
    status_desired_number_scheduled: int = 0
    template_generation: int | None = None

    @classmethod
    def from_daemonset(cls, ds: Mapping[str, Any]) -> RollingUpdateSettings:
        """Read a (defaulted) DaemonSet dict. ``template_generation`` comes from the deprecated
        ``deprecated.daemonset.template.generation`` annotation, ignored when unparsable."""
        spec = ds.get("spec") or {}
        strategy = spec.get("updateStrategy") or {}
        rolling = strategy.get("rollingUpdate") or {}
        annotation = annotations_of(ds).get("deprecated.daemonset.template.generation")
        try:
            generation = int(annotation) if annotation is not None else None
        except ValueError:
            generation = None
        return cls(
            strategy_type=strategy.get("type") or STRATEGY_ROLLING_UPDATE,
            max_unavailable=rolling.get("maxUnavailable"),
            max_surge=rolling.get("maxSurge"),
            partition=rolling.get("partition"),
            selector=rolling.get("selector"),
            paused=bool(rolling.get("paused")),
            min_ready_seconds=int(spec.get("minReadySeconds") or 0),
            status_desired_number_scheduled=int(status_of(ds).get("desiredNumberScheduled") or 0),
            template_generation=generation,
        )


@dataclass(frozen=True)
class RolloutBudget:
    """The budgets of one pass, scaled against the nodes that should run the pod now."""

    desired_number_scheduled: int
    max_surge: int
    max_unavailable: int


@dataclass(frozen=True)
class RollingUpdatePlan:
    """What one rolling-update pass asks for. ``budget`` is None when no rolling update runs.

    ``pods_to_delete``: names of old pods to replace (without surge) or to remove because the new
    pod on their node is available (with surge). ``nodes_to_create``: nodes that get a new pod
    beside their old one (surge only). ``nodes_in_scope``: the nodes the partition and selector
    let update, in the order they were considered."""

    budget: RolloutBudget | None
    nodes_in_scope: tuple[str, ...] = ()
    pods_to_delete: tuple[str, ...] = ()
    nodes_to_create: tuple[str, ...] = ()


NO_PLAN = RollingUpdatePlan(budget=None)


def _name(pod: Obj) -> str:
    return meta_of(pod).get("name") or ""


def is_pod_updated(pod: Obj, update_hash: str, template_generation: int | None) -> bool:
    """util.IsPodUpdated: the revision-hash label equals the update hash, or the legacy
    ``pod-template-generation`` label equals the template generation."""
    labels = meta_of(pod).get("labels") or {}
    if update_hash and labels.get(LABEL_CONTROLLER_REVISION_HASH) == update_hash:
        return True
    if template_generation is None:
        return False
    return labels.get(LABEL_TEMPLATE_GENERATION) == str(template_generation)


@dataclass(frozen=True)
class NodePods:
    """The live (not deleting) daemon pods of one node, split by revision. ``ok`` is False when
    the node runs more than one old or more than one new pod: the manage step must prune first."""

    new: Obj | None
    old: Obj | None
    ok: bool


def split_node_pods(pods: Sequence[Obj], update_hash: str, template_generation: int | None) -> NodePods:
    """findUpdatedPodsOnNode."""
    new: Obj | None = None
    old: Obj | None = None
    for pod in pods:
        if meta_of(pod).get("deletionTimestamp"):
            continue
        if is_pod_updated(pod, update_hash, template_generation):
            if new is not None:
                return NodePods(None, None, False)
            new = pod
        else:
            if old is not None:
                return NodePods(None, None, False)
            old = pod
    return NodePods(new, old, True)


def _pre_deleting(pod: Obj | None) -> bool:
    return pod is not None and lifecycle.pod_state(pod) == LIFECYCLE_STATE_PREPARING_DELETE


def _nil_or_pre_deleting(pod: Obj | None) -> bool:
    return pod is None or _pre_deleting(pod)


def _scaled(value: int | str | None, total: int, round_up: bool, field: str) -> int:
    if value is None:
        return 0
    try:
        return scaled_value(value, total, round_up=round_up)
    except IntOrStringError as err:
        raise RollingUpdateError(f"{ROLLING_UPDATE_PATH}.{field}: {err}") from None


def rollout_budget(settings: RollingUpdateSettings, desired: int) -> RolloutBudget:
    """updatedDesiredNodeCounts: both budgets rounded up; if both come out 0 on a non-empty
    DaemonSet, one unavailable pod is allowed (the apiserver default)."""
    max_unavailable = _scaled(settings.max_unavailable, desired, True, "maxUnavailable")
    max_surge = _scaled(settings.max_surge, desired, True, "maxSurge")
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return RolloutBudget(desired, max_surge, max_unavailable)


def _update_selector(settings: RollingUpdateSettings) -> LabelSelector | None:
    if settings.selector is None:
        return None
    try:
        return LabelSelector.model_validate(settings.selector)
    except ValueError as err:
        raise RollingUpdateError(f"{ROLLING_UPDATE_PATH}.selector: {err}") from None


def nodes_in_scope(
    settings: RollingUpdateSettings,
    node_to_pods: Mapping[str, Sequence[Obj]],
    labels_of: Mapping[str, Mapping[str, str]],
    update_hash: str,
) -> list[str]:
    """filterDaemonPodsNodeToUpdate: the nodes this pass may touch, in the order it considers them."""
    partition = _scaled(settings.partition, settings.status_desired_number_scheduled, False, "partition")
    selector = _update_selector(settings)
    all_names = sorted(node_to_pods, reverse=True)
    updated: list[str] = []
    updating: list[str] = []
    selected: list[str] = []
    rest: list[str] = []
    for name in all_names:
        split = split_node_pods(node_to_pods[name], update_hash, settings.template_generation)
        if not split.ok or split.new is not None:
            updated.append(name)
        elif _nil_or_pre_deleting(split.old):
            updating.append(name)
        elif selector is not None:
            try:
                matched = selector_matches(selector, dict(section(labels_of, name)))
            except ValueError as err:
                raise RollingUpdateError(f"{ROLLING_UPDATE_PATH}.selector: {err}") from None
            if matched:
                selected.append(name)
        else:
            rest.append(name)
    ordered = updated + updating + (selected if selector is not None else rest)
    max_update = len(all_names) - partition
    if max_update <= 0:
        return []
    return ordered[:max_update]


def plan_rolling_update(
    settings: RollingUpdateSettings,
    nodes: Sequence[Node],
    eligible: Set[str],
    node_to_pods: Mapping[str, Sequence[Obj]],
    update_hash: str,
    now: datetime,
    *,
    prune_ineligible_nodes: bool = False,
) -> RollingUpdatePlan:
    """One rolling-update pass.

    ``nodes``: every Node. ``eligible``: names of the nodes where the daemon pod should run
    (``should_run`` of :func:`kruise.control.common.nodeeligibility.should_run_on_node`).
    ``node_to_pods``: the DaemonSet's pods grouped by target node. ``prune_ineligible_nodes`` is
    the DaemonSetPruneIneligibleNodes gate: pods on nodes that no longer qualify stop counting
    toward the budgets (the manage step deletes them either way).
    """
    if settings.paused or settings.strategy_type != STRATEGY_ROLLING_UPDATE:
        return NO_PLAN
    existing = {node_name(node): node for node in nodes}
    pods_by_node: dict[str, Sequence[Obj]] = dict(node_to_pods)
    if prune_ineligible_nodes:
        pods_by_node = {
            name: pods for name, pods in pods_by_node.items() if name in existing and name in eligible
        }
    desired = 0
    for name in existing:
        if name in eligible:
            desired += 1
            pods_by_node.setdefault(name, [])
    budget = rollout_budget(settings, desired)
    pods_by_node = {name: pods for name, pods in pods_by_node.items() if name in existing}
    labels_of = {name: node_labels(node) for name, node in existing.items()}
    scope = nodes_in_scope(settings, pods_by_node, labels_of, update_hash)
    generation = settings.template_generation
    splits = [(name, split_node_pods(pods_by_node[name], update_hash, generation)) for name in scope]
    min_ready = settings.min_ready_seconds
    if budget.max_surge == 0:
        return _without_surge(budget, tuple(scope), splits, min_ready, now)
    return _with_surge(budget, tuple(scope), splits, min_ready, now)


def _without_surge(
    budget: RolloutBudget,
    scope: tuple[str, ...],
    splits: Sequence[tuple[str, NodePods]],
    min_ready: int,
    now: datetime,
) -> RollingUpdatePlan:
    unavailable = 0
    replacements: list[str] = []
    candidates: list[str] = []
    for _node, split in splits:
        if not split.ok:
            unavailable += 1  # excess pods: the manage step prunes them; count the node as unavailable
            continue
        new, old = split.new, split.old
        if _nil_or_pre_deleting(old) == _nil_or_pre_deleting(new):
            # nothing live to judge, or both an old and a new pod: the manage step sorts it out
            unavailable += 1
        elif new is not None:
            # updated node (or a PreparingDelete new pod beside a live old one): an unavailable
            # new pod and a new pod on its way out each cost one unit of the budget
            if not is_available(new, min_ready, now):
                unavailable += 1
            if _pre_deleting(new):
                unavailable += 1
        else:
            assert old is not None
            if not is_available(old, min_ready, now):
                replacements.append(_name(old))  # unavailable anyway: replacing it costs nothing
            elif unavailable < budget.max_unavailable:
                candidates.append(_name(old))
    room = max(0, min(budget.max_unavailable - unavailable, len(candidates)))
    return RollingUpdatePlan(budget, scope, pods_to_delete=tuple(replacements + candidates[:room]))


def _with_surge(
    budget: RolloutBudget,
    scope: tuple[str, ...],
    splits: Sequence[tuple[str, NodePods]],
    min_ready: int,
    now: datetime,
) -> RollingUpdatePlan:
    surging = 0
    to_delete: list[str] = []
    replacements: list[str] = []
    candidates: list[str] = []
    for name, split in splits:
        if not split.ok:
            surging += 1
            continue
        new, old = split.new, split.old
        if _nil_or_pre_deleting(old):
            continue  # nothing to replace here; the manage step creates a pod if none is left
        assert old is not None
        if new is None:
            if not is_available(old, min_ready, now):
                replacements.append(name)
            elif surging < budget.max_surge:
                candidates.append(name)
        elif not is_available(new, min_ready, now) or _pre_deleting(new):
            surging += 1  # waiting for the new pod
        else:
            to_delete.append(_name(old))
    room = max(0, min(budget.max_surge - surging, len(candidates)))
    to_create = tuple(replacements + candidates[:room])
    return RollingUpdatePlan(budget, scope, pods_to_delete=tuple(to_delete), nodes_to_create=to_create)
