"""Progressive pod creation of an Advanced DaemonSet: the rolling-update partition also holds back
pods on nodes that have none yet.

Upstream 1.9 (``GetNodesNeedingPods`` in the manage step): when the DaemonSet is a RollingUpdate
with a non-zero ``partition`` and progressive creation is on (v1beta1
``spec.scaleStrategy.partitionedScaling: true``; v1alpha1, which this controller reads, the
annotation ``daemonset.kruise.io/progressive-create-pod: "true"``), the manage step creates at most

    desired − (nodes already running an updated pod) − partition

new pods, on the nodes needing one taken in name order (plain string order, so ``node-10`` comes
before ``node-5``). The partition is clamped to ``[0, desired]``. Lowering the partition is what
lets more pods be created; a partition of 0 (or none) creates on every node needing a pod.

Without progressive creation the partition does not limit creation: a new node, or a node whose
pod was deleted, gets its pod at once (the rolling update decides its revision).

A percentage partition is scaled against ``status.desiredNumberScheduled`` — the count written by
the previous pass, as upstream — rounded down; an unparsable partition does not limit anything
(upstream logs it and goes on).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kruise.api.common import IntOrStringError, scaled_value
from kruise.api.daemonset import STRATEGY_ROLLING_UPDATE
from kruise.api.keys import ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD
from kruise.api.objects import Obj, annotations_of, status_of
from kruise.control.common.nodeeligibility import node_name
from kruise.control.daemonset.rollingupdate import split_node_pods

Node = Mapping[str, Any]


def is_creation_progressive(ds: Mapping[str, Any]) -> bool:
    """isDaemonSetCreationProgressively, read from the v1alpha1 annotation the v1beta1
    ``scaleStrategy.partitionedScaling`` converts to (only the exact value ``"true"`` counts)."""
    annotations = annotations_of(ds)
    return annotations.get(ANNOTATION_DAEMONSET_PROGRESSIVE_CREATE_POD) == "true"


def creation_partition(ds: Mapping[str, Any]) -> int:
    """The partition the manage step limits creation by; 0 means no limit. Only a RollingUpdate
    with a ``rollingUpdate.partition`` has one."""
    spec = ds.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    if (strategy.get("type") or STRATEGY_ROLLING_UPDATE) != STRATEGY_ROLLING_UPDATE:
        return 0
    rolling = strategy.get("rollingUpdate")
    if not rolling or rolling.get("partition") is None:
        return 0
    desired = int(status_of(ds).get("desiredNumberScheduled") or 0)
    try:
        return scaled_value(rolling["partition"], desired, round_up=False)
    except IntOrStringError:
        return 0


def nodes_needing_pods(
    new_pods: int, desired: int, partition: int, progressive: bool, needing: Sequence[str]
) -> tuple[str, ...]:
    """GetNodesNeedingPods: of the nodes needing a pod (sorted), the ones to create on now.
    ``new_pods``: nodes already running an updated pod; ``desired``: nodes that should run one."""
    ordered = sorted(needing)
    if not progressive:
        return tuple(ordered)
    partition = max(min(partition, desired), 0)
    room = max(desired - new_pods - partition, 0)
    return tuple(ordered[:room])


def count_updated_nodes(
    nodes: Sequence[Node],
    node_to_pods: Mapping[str, Sequence[Obj]],
    update_hash: str,
    template_generation: int | None,
) -> int:
    """Nodes whose live pods split cleanly and include one of the update revision."""
    count = 0
    for node in nodes:
        split = split_node_pods(node_to_pods.get(node_name(node)) or [], update_hash, template_generation)
        if split.ok and split.new is not None:
            count += 1
    return count


def limit_creation(
    ds: Mapping[str, Any],
    needing: Sequence[str],
    nodes: Sequence[Node],
    should_run: Callable[[Node], bool],
    node_to_pods: Mapping[str, Sequence[Obj]],
    update_hash: str,
    template_generation: int | None,
) -> tuple[str, ...]:
    """The manage step's nodes to create on, after the partition (see the module docstring)."""
    partition = creation_partition(ds)
    if partition == 0:
        return tuple(sorted(needing))
    desired = sum(1 for node in nodes if should_run(node))
    new_pods = count_updated_nodes(nodes, node_to_pods, update_hash, template_generation)
    return nodes_needing_pods(new_pods, desired, partition, is_creation_progressive(ds), needing)
