"""What `rollout status` prints for one observed object, and whether the rollout is done.

Pure functions of the object (as the apiserver returns it), so every wording and threshold is
tested table-driven. The texts are kubectl's for the built-in kinds and kruise-tools' for the
Kruise kinds; every message ends with a newline, as kubectl prints them.

Where kruise-tools' viewers skip a check (a CloneSet rollout without partition never waits for
pods to be updated; the Advanced StatefulSet looks at partition before the status is observed;
the Advanced DaemonSet has no viewer at all), these viewers wait for the spec to be observed,
then for the pods to be updated, then for them (the updated ones included) to be ready, reusing
the upstream sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.common import IntOrStringError, is_percent, scaled_value_round_up
from kruise.cli.kubectl_kruise import kinds
from kruise.cli.kubectl_kruise.errors import PluginError

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"


class RolloutError(PluginError):
    """The rollout cannot be watched or has failed; kubectl prints it as `error: <text>`."""


Obj = Mapping[str, Any]


def _spec(obj: Obj) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _name(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def _generation(obj: Obj) -> int:
    return int((obj.get("metadata") or {}).get("generation") or 0)


def _count(status: Mapping[str, Any], field: str) -> int:
    return int(status.get(field) or 0)


def _replicas(obj: Obj) -> int:
    """`spec.replicas`, defaulted to 1 like every scalable workload."""
    value = _spec(obj).get("replicas")
    return 1 if value is None else int(value)


def cloneset_partition(partition: int | str | None, replicas: int) -> int:
    """kruise-tools' CalculatePartitionReplicas: percentages round up, and any partition below
    100% still lets one pod update when there is more than one."""
    if partition is None:
        return 0
    try:
        value = scaled_value_round_up(partition, replicas)
    except IntOrStringError as err:
        raise RolloutError(f"failed calculate partition of CloneSet: {err}") from None
    if replicas > 1 and value == replicas and is_percent(partition) and partition != "100%":
        value = replicas - 1
    return max(min(value, replicas), 0)


def _unready(status: Mapping[str, Any], replicas: int, target: int) -> int:
    """Pods still to become ready: of all pods, and of the updated ones. The second matters with
    maxSurge, when old pods are still ready beside new ones that are not."""
    return max(replicas - _count(status, "readyReplicas"), target - _count(status, "updatedReadyReplicas"))


def _not_observed(obj: Obj) -> bool:
    observed = _count(_status(obj), "observedGeneration")
    return observed == 0 or _generation(obj) > observed


@dataclass(frozen=True)
class CloneSetPhase:
    """Where a CloneSet rollout stands; both the short and the detailed viewer render it."""

    stage: str  # "unobserved" | "updating" | "unready" | "partitioned" | "complete"
    updated: int = 0
    target: int = 0
    unready: int = 0
    available: int = 0
    revision: str = ""

    @property
    def done(self) -> bool:
        return self.stage in ("partitioned", "complete")


def cloneset_phase(obj: Obj) -> CloneSetPhase:
    spec, status = _spec(obj), _status(obj)
    replicas = _replicas(obj)
    partition = cloneset_partition((spec.get("updateStrategy") or {}).get("partition"), replicas)
    if _not_observed(obj):
        return CloneSetPhase("unobserved")
    updated = _count(status, "updatedReplicas")
    if updated < replicas - partition:
        return CloneSetPhase("updating", updated=updated, target=replicas - partition)
    unready = _unready(status, replicas, replicas - partition)
    if unready > 0:
        return CloneSetPhase("unready", unready=unready)
    if partition > 0:
        return CloneSetPhase("partitioned", updated=updated)
    return CloneSetPhase(
        "complete", available=_count(status, "availableReplicas"), revision=status.get("updateRevision", "")
    )


def cloneset_status(obj: Obj, revision: int = 0) -> tuple[str, bool]:
    phase = cloneset_phase(obj)
    messages = {
        "unobserved": "Waiting for CloneSet spec update to be observed...\n",
        "updating": f"Waiting for partitioned roll out to finish: {phase.updated} out of {phase.target} "
        "new pods have been updated...\n",
        "unready": f"Waiting for {phase.unready} pods to be ready...\n",
        "partitioned": f"partitioned roll out complete: {phase.updated} new pods have been updated...\n",
        "complete": f"CloneSet rolling update complete {phase.available} pods at revision "
        f"{phase.revision}...\n",
    }
    return messages[phase.stage], phase.done


def pods_info(ready: list[str], not_ready: list[str]) -> str:
    """kruise-tools' detail lines about the pods already on the update revision (Go's `%v`)."""
    return f"Updated ready pods: [{' '.join(ready)}]\nUpdated not ready pods: [{' '.join(not_ready)}]\n"


def cloneset_detail_status(obj: Obj, info: str) -> tuple[str, bool]:
    """`rollout status -d`: kruise-tools' wording, naming the CloneSet and appending `info`."""
    phase, name = cloneset_phase(obj), _name(obj)
    messages = {
        "unobserved": f"Waiting for CloneSet {name} spec update to be observed...\n",
        "updating": f"CloneSet {name} Waiting for partitioned roll out to finish: {phase.updated} out of "
        f"{phase.target} new pods have been updated...\n{info}",
        "unready": f"Waiting for {phase.unready} pods to be ready...\n{info}",
        "partitioned": f"partitioned roll out complete: {phase.updated} new pods have been updated...\n",
        "complete": f"CloneSet {name} rolling update complete {phase.available} pods at revision "
        f"{phase.revision}...\n{info}",
    }
    return messages[phase.stage], phase.done


def advanced_statefulset_status(obj: Obj, revision: int = 0) -> tuple[str, bool]:
    spec, status = _spec(obj), _status(obj)
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        raise RolloutError("rollout status is only available for RollingUpdate strategy type")
    if _not_observed(obj):
        return "Waiting for Advanced StatefulSet spec update to be observed...\n", False
    replicas = _replicas(obj)
    partition = min(max(int((strategy.get("rollingUpdate") or {}).get("partition") or 0), 0), replicas)
    updated = _count(status, "updatedReplicas")
    if updated < replicas - partition:
        return (
            f"Waiting for partitioned roll out to finish: {updated} out of {replicas - partition} "
            "new pods have been updated...\n",
            False,
        )
    unready = _unready(status, replicas, replicas - partition)
    if unready > 0:
        return f"Waiting for {unready} pods to be ready...\n", False
    if partition > 0:
        return f"partitioned roll out complete: {updated} new pods have been updated...\n", True
    available = _count(status, "availableReplicas")
    revision_name = status.get("updateRevision", "")
    return (
        f"Advanced StatefulSet rolling update complete {available} pods at revision {revision_name}...\n",
        True,
    )


def _daemonset_status(obj: Obj, partition: int) -> tuple[str, bool]:
    status, name = _status(obj), _name(obj)
    if _generation(obj) > _count(status, "observedGeneration"):
        return "Waiting for daemon set spec update to be observed...\n", False
    desired = _count(status, "desiredNumberScheduled")
    target = max(desired - partition, 0)
    updated = _count(status, "updatedNumberScheduled")
    if updated < target:
        return (
            f'Waiting for daemon set "{name}" rollout to finish: {updated} out of {target} '
            "new pods have been updated...\n",
            False,
        )
    available = _count(status, "numberAvailable")
    if available < desired:
        return (
            f'Waiting for daemon set "{name}" rollout to finish: {available} of {desired} '
            "updated pods are available...\n",
            False,
        )
    return f'daemon set "{name}" successfully rolled out\n', True


def _require_rolling_update(obj: Obj) -> Mapping[str, Any]:
    strategy = _spec(obj).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        raise RolloutError("rollout status is only available for RollingUpdate strategy type")
    return strategy


def daemonset_status(obj: Obj, revision: int = 0) -> tuple[str, bool]:
    _require_rolling_update(obj)
    return _daemonset_status(obj, 0)


def advanced_daemonset_status(obj: Obj, revision: int = 0) -> tuple[str, bool]:
    strategy = _require_rolling_update(obj)
    partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
    return _daemonset_status(obj, max(partition, 0))


def statefulset_status(obj: Obj, revision: int = 0) -> tuple[str, bool]:
    status = _status(obj)
    strategy = _require_rolling_update(obj)
    if _not_observed(obj):
        return "Waiting for statefulset spec update to be observed...\n", False
    replicas = _replicas(obj)
    ready = _count(status, "readyReplicas")
    if ready < replicas:
        return f"Waiting for {replicas - ready} pods to be ready...\n", False
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        partition = rolling.get("partition")
        updated = _count(status, "updatedReplicas")
        if partition is not None and updated < replicas - int(partition):
            return (
                f"Waiting for partitioned roll out to finish: {updated} out of {replicas - int(partition)} "
                "new pods have been updated...\n",
                False,
            )
        return f"partitioned roll out complete: {updated} new pods have been updated...\n", True
    if status.get("updateRevision") != status.get("currentRevision"):
        return (
            f"waiting for statefulset rolling update to complete {_count(status, 'updatedReplicas')} "
            f"pods at revision {status.get('updateRevision', '')}...\n",
            False,
        )
    return (
        f"statefulset rolling update complete {_count(status, 'currentReplicas')} pods at revision "
        f"{status.get('currentRevision', '')}...\n",
        True,
    )


def deployment_status(obj: Obj, revision: int = 0) -> tuple[str, bool]:
    status, name = _status(obj), _name(obj)
    if revision > 0:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        try:
            running = int(annotations.get(REVISION_ANNOTATION, ""))
        except ValueError:
            raise RolloutError(f'cannot get the revision of deployment "{name}"') from None
        if running != revision:
            raise RolloutError(
                f"desired revision ({revision}) is different from the running revision ({running})"
            )
    if _generation(obj) > _count(status, "observedGeneration"):
        return "Waiting for deployment spec update to be observed...\n", False
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Progressing" and condition.get("reason") == "ProgressDeadlineExceeded":
            raise RolloutError(f'deployment "{name}" exceeded its progress deadline')
    replicas = _replicas(obj)
    updated = _count(status, "updatedReplicas")
    if updated < replicas:
        return (
            f'Waiting for deployment "{name}" rollout to finish: {updated} out of {replicas} '
            "new replicas have been updated...\n",
            False,
        )
    total = _count(status, "replicas")
    if total > updated:
        return (
            f'Waiting for deployment "{name}" rollout to finish: {total - updated} old replicas '
            "are pending termination...\n",
            False,
        )
    available = _count(status, "availableReplicas")
    if available < updated:
        return (
            f'Waiting for deployment "{name}" rollout to finish: {available} of {updated} '
            "updated replicas are available...\n",
            False,
        )
    return f'deployment "{name}" successfully rolled out\n', True


StatusFn = Callable[[Obj, int], tuple[str, bool]]

VIEWERS: dict[kinds.Workload, StatusFn] = {
    kinds.DEPLOYMENT: deployment_status,
    kinds.STATEFULSET: statefulset_status,
    kinds.DAEMONSET: daemonset_status,
    kinds.CLONESET: cloneset_status,
    kinds.ADVANCED_STATEFULSET: advanced_statefulset_status,
    kinds.ADVANCED_DAEMONSET: advanced_daemonset_status,
}


def rollout_status(workload: kinds.Workload, obj: Obj, revision: int = 0) -> tuple[str, bool]:
    return VIEWERS[workload](obj, revision)
