"""The update half of an Advanced StatefulSet pass: refresh pods mid-update, then carry out the
``UpdatePlan`` (specified deletions, then updates in place or by recreation).

In-place updates go through the shared ``InPlaceWriter`` (InPlaceUpdateReady False, then one
object write with the new images and the ``controller-revision-hash`` label); ``refresh`` later
flips the gate back once the kubelet runs the new containers. Everything is derived from the pod
objects, so a manager restarted between two writes picks up where the pods say it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.api.keys import (
    LABEL_CONTROLLER_REVISION_HASH,
    LIFECYCLE_STATE_PREPARING_DELETE,
    LIFECYCLE_STATE_PREPARING_UPDATE,
    LIFECYCLE_STATE_UPDATING,
)
from kruise.api.objects import Obj, section, spec_of
from kruise.control.common import lifecycle, podreadiness
from kruise.control.common.inplace.engine import update_completed_problem
from kruise.control.common.inplace.spec import calculate_update_spec
from kruise.control.common.revision import equal_to_revision_hash
from kruise.control.statefulset import health
from kruise.control.statefulset.actions import Action, DeletePod, PrepareDelete, ResizeClaims, UpdatePod
from kruise.control.statefulset.pods import revision_of
from kruise.control.statefulset.update import refreshed_lifecycle_state, update_method
from kruise.kube.events import EventRecorder
from kruise.manager.controllers.statefulset.podcontrol import StatefulPodControl
from kruise.manager.writers.inplace import InPlaceRefreshError, InPlaceWriter
from kruise.manager.writers.pods import state_for_status_write


class UpdateError(Exception):
    """A pod could not be updated; the message becomes the FailedUpdatePod condition."""


def _earliest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _grace_seconds(sts: Mapping[str, Any]) -> int:
    rolling = section(sts, "spec", "updateStrategy").get("rollingUpdate") or {}
    return int(section(rolling, "inPlaceUpdateStrategy").get("gracePeriodSeconds") or 0)


def _write_revision(pod: dict[str, Any], revision: str) -> None:
    """Advanced StatefulSet pods carry the full revision name, nothing else."""
    pod.setdefault("metadata", {}).setdefault("labels", {})[LABEL_CONTROLLER_REVISION_HASH] = revision


class StatefulSetUpdater:
    def __init__(
        self,
        recorder: EventRecorder,
        inplace: InPlaceWriter,
        pod_control: StatefulPodControl,
        *,
        env_from_metadata: bool = True,
    ) -> None:
        self.recorder = recorder
        self.inplace = inplace
        self.pod_control = pod_control
        self.env_from_metadata = env_from_metadata

    async def refresh(
        self, sts: Mapping[str, Any], pods: Sequence[Obj], update_revision: str, now: datetime
    ) -> tuple[bool, float | None]:
        """``refreshPodState`` for every pod: advance in-place updates, then move lifecycle states.
        Returns (a lifecycle state was written, seconds until a grace period ends)."""
        spec_lifecycle = spec_of(sts).get("lifecycle") or {}
        mark = bool(section(spec_lifecycle, "inPlaceUpdate").get("markPodNotReady"))
        modified, delay = False, None
        for pod in pods:
            if lifecycle.pod_state(pod) == LIFECYCLE_STATE_PREPARING_DELETE or health.is_terminating(pod):
                continue
            completed = update_completed_problem(pod, vertical_scaling=self.inplace.vertical_scaling) is None
            state = refreshed_lifecycle_state(sts, pod, update_revision, completed)
            # a new pod's KruisePodReady and a move that needs no readiness change ride in the
            # refresh's status write
            step = podreadiness.fold_initial_condition(
                self.inplace.refresh_step(pod, now, equal_to_revision_hash), pod, now
            )
            try:
                moves = state_for_status_write(pod, state, mark, now)
                outcome = await self.inplace.refresh(pod, now, equal_to_revision_hash, step, state=moves)
            except InPlaceRefreshError as exc:
                raise UpdateError(str(exc)) from exc
            delay = _earliest(delay, outcome.requeue_after)
            if outcome.wrote:
                # the next pass sees the refreshed pod; a move that did not ride along starts there
                modified = True
                continue
            if state is not None and await self.inplace.pods.set_lifecycle_state(pod, state, mark, now):
                modified = True
        return modified, delay

    async def execute(
        self,
        sts: dict[str, Any],
        key: str,
        actions: Sequence[Action],
        revisions: Sequence[Mapping[str, Any]],
        update_revision: Mapping[str, Any],
        now: datetime,
    ) -> float | None:
        delay: float | None = None
        for action in actions:
            if isinstance(action, DeletePod | PrepareDelete):
                await self.pod_control.remove(sts, key, action, now)
            elif isinstance(action, ResizeClaims):
                await self.pod_control.resize_claims(sts, action)
            elif isinstance(action, UpdatePod):
                delay = _earliest(
                    delay, await self._update(sts, key, action, revisions, update_revision, now)
                )
        return delay

    async def _update(
        self,
        sts: dict[str, Any],
        key: str,
        action: UpdatePod,
        revisions: Sequence[Mapping[str, Any]],
        update_revision: Mapping[str, Any],
        now: datetime,
    ) -> float | None:
        """``inPlaceUpdatePod``, falling back to ``deletePod``."""
        pod = action.pod
        name = pod["metadata"]["name"]
        old = next((r for r in revisions if r["metadata"]["name"] == revision_of(pod)), None)
        spec = calculate_update_spec(
            old,
            update_revision,
            grace_seconds=_grace_seconds(sts),
            env_from_metadata=self.env_from_metadata,
            vertical_scaling=self.inplace.vertical_scaling,
        )
        method = update_method(sts, pod, spec is not None)
        target = update_revision["metadata"]["name"]
        writer = self.inplace.pods
        if method.kind == "error":
            raise UpdateError(method.message)
        if method.kind == "wait":
            return None
        if method.kind == "preparing-update":
            await writer.set_lifecycle_state(
                pod, LIFECYCLE_STATE_PREPARING_UPDATE, method.mark_not_ready, now
            )
            return None
        if method.kind in ("delete", "prepare-delete"):
            removal: DeletePod | PrepareDelete = (
                DeletePod(pod, "update")
                if method.kind == "delete"
                else PrepareDelete(pod, "update", method.mark_not_ready)
            )
            await self.pod_control.remove(sts, key, removal, now)
            return None
        assert spec is not None, "update_method only answers in-place when a spec exists"
        has_state = lifecycle.pod_state(pod) != ""
        try:
            await self.inplace.start(
                pod,
                spec,
                now,
                write_revision=_write_revision,
                also=(lambda p: _mark_updating(p, now)) if has_state else None,
            )
        except Exception as exc:
            self.recorder.event(
                sts,
                "Warning",
                "FailedUpdatePodInPlace",
                f"failed to update pod {name} in-place(revision {target}): {exc}",
            )
            raise
        self.recorder.event(
            sts,
            "Normal",
            "SuccessfulUpdatePodInPlace",
            f"successfully update pod {name} in-place(revision {target})",
        )
        return float(spec.grace_seconds) if spec.grace_seconds > 0 else None


def _mark_updating(pod: dict[str, Any], now: datetime) -> None:
    """Lifecycle Updating rides on the in-place object write, as upstream's AdditionalFuncs."""
    if lifecycle.pod_state(pod) == LIFECYCLE_STATE_UPDATING:
        return
    state = lifecycle.state_patch(LIFECYCLE_STATE_UPDATING, now)["metadata"]
    pod["metadata"].setdefault("labels", {}).update(state["labels"])
    pod["metadata"].setdefault("annotations", {}).update(state["annotations"])
