"""The arithmetic of `migrate CloneSet --from Deployment`, with no I/O, so every step is testable.

kruise-tools 1.2.2 moves replicas by alternating two writes: grow the CloneSet by at most
`--max-surge` pods beyond what the Deployment has already given up, then, once every CloneSet
pod is available, shrink the Deployment by what the CloneSet gained. The Deployment never loses
a pod before its replacement is available, so the pods serving stay at or above the starting
count (no unavailability is allowed) and at most `max_surge` extra pods exist at any time.
Between writes it waits until both controllers have observed the last change.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEPLOYMENT_API = "apps/v1"
CLONESET_API = "apps.kruise.io/v1alpha1"


def ref_text(api_version: str, kind: str, namespace: str, name: str) -> str:
    """How kruise-tools prints the object it failed on (Go's `%v` of its ResourceRef struct)."""
    return f"{{{api_version} {kind} {namespace} {name}}}"


@dataclass(frozen=True)
class Observed:
    """What the planner needs of one workload, read from the object the server returned."""

    generation: int
    observed_generation: int
    replicas: int  # spec.replicas
    available: int = 0  # status.availableReplicas

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Observed:
        metadata = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        replicas = spec.get("replicas")
        return cls(
            generation=int(metadata.get("generation") or 0),
            observed_generation=int(status.get("observedGeneration") or 0),
            replicas=1 if replicas is None else int(replicas),
            available=int(status.get("availableReplicas") or 0),
        )

    @property
    def settled(self) -> bool:
        """Its controller has acted on the latest spec."""
        return self.generation == self.observed_generation


@dataclass(frozen=True)
class Progress:
    """Replicas moved so far: taken off the Deployment (`src`) and added to the CloneSet (`dst`)."""

    src: int = 0
    dst: int = 0


@dataclass(frozen=True)
class Wait:
    reason: str


@dataclass(frozen=True)
class ScaleOut:
    """Add `by` replicas to the CloneSet."""

    by: int


@dataclass(frozen=True)
class ScaleIn:
    """Take `by` replicas off the Deployment."""

    by: int


@dataclass(frozen=True)
class Done:
    pass


Step = Wait | ScaleOut | ScaleIn | Done


def next_step(
    target: int,
    max_surge: int,
    progress: Progress,
    deployment: Observed,
    cloneset: Observed,
    written: tuple[int, int] = (0, 0),
) -> Step:
    """The one write (or wait) that comes next.

    `written` is the (Deployment, CloneSet) generation our last writes produced: an older
    object read back means a stale read, which must not be planned on.
    """
    if progress.src == target and progress.dst == target:
        return Done()
    if deployment.generation < written[0] or cloneset.generation < written[1]:
        return Wait("stale read")
    if not deployment.settled:
        return Wait("deployment controller has not observed the last change")
    if not cloneset.settled:
        return Wait("cloneset controller has not observed the last change")
    if progress.dst < target:
        surge_left = max_surge - (progress.dst - progress.src)
        grow = min(surge_left, target - progress.dst)
        if grow > 0:
            return ScaleOut(grow)
    if progress.src < target:
        shrink = min(deployment.replicas, target - progress.src, progress.dst - progress.src)
        if shrink > 0:
            if cloneset.replicas != cloneset.available:
                return Wait("cloneset pods are not all available")
            return ScaleIn(shrink)
    return Wait("the deployment has no replicas left to move")


def advance(progress: Progress, step: Step) -> Progress:
    """Progress once `step`'s write went through."""
    if isinstance(step, ScaleOut):
        return Progress(progress.src, progress.dst + step.by)
    if isinstance(step, ScaleIn):
        return Progress(progress.src + step.by, progress.dst)
    return progress


def cloneset_from_deployment(deployment: Mapping[str, Any], name: str, copy_replicas: bool) -> dict[str, Any]:
    """The CloneSet `--create` makes: the Deployment's metadata labels, annotations and finalizers,
    selector, template, history limit and minReadySeconds; its rolling-update surge and
    unavailability; paused if it is; the ReCreate update type. Replicas are 0 unless
    `copy_replicas` (`--copy`), as the flags document."""
    source = copy.deepcopy(dict(deployment))
    metadata = source.get("metadata") or {}
    spec = source.get("spec") or {}
    cs_meta: dict[str, Any] = {"name": name, "namespace": metadata.get("namespace", "")}
    for key in ("labels", "annotations", "finalizers"):
        if metadata.get(key):
            cs_meta[key] = metadata[key]
    strategy: dict[str, Any] = {"type": "ReCreate"}
    if spec.get("paused"):
        strategy["paused"] = True
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    for key in ("maxUnavailable", "maxSurge"):
        if rolling.get(key) is not None:
            strategy[key] = rolling[key]
    cs_spec: dict[str, Any] = {
        "replicas": (spec.get("replicas", 1) if copy_replicas else 0),
        "selector": spec.get("selector"),
        "template": spec.get("template") or {},
        "updateStrategy": strategy,
    }
    for key in ("revisionHistoryLimit", "minReadySeconds"):
        if spec.get(key) is not None:
            cs_spec[key] = spec[key]
    return {"apiVersion": CLONESET_API, "kind": "CloneSet", "metadata": cs_meta, "spec": cs_spec}
