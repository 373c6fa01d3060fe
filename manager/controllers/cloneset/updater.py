"""Carry out the update half of a CloneSet pass: refresh in-flight pods, then update the chosen ones.

Upstream's order is kept because it is what makes restarts safe: every pass first advances pods
already mid-update (grace period, next container batch, InPlaceUpdateReady back to True, lifecycle
state), and if any lifecycle state was written the pass ends there; only then are new pods picked,
from the observed state alone. A manager killed between two writes therefore resumes where the pod
objects say it was — the plan lives in the pods, not in memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import structlog

from kruise.api.keys import (
    LABEL_POD_TEMPLATE_HASH,
    LABEL_SPECIFIED_DELETE,
    LIFECYCLE_STATE_PREPARING_UPDATE,
    LIFECYCLE_STATE_UPDATING,
)
from kruise.api.objects import Obj
from kruise.control.cloneset.diffs import ExpectationDiffs
from kruise.control.cloneset.update import (
    PodRefresh,
    PodUpdate,
    UpdateKind,
    first_readiness_refreshes,
    in_place_event_message,
    in_place_failed_message,
    plan_update,
    recreate_event_message,
)
from kruise.control.common import lifecycle
from kruise.control.common.revision import equal_to_revision_hash, revision_labels_for_pod
from kruise.kube.client import Client, PatchType
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import PODS
from kruise.manager.controllers.cloneset.pubgate import REFUSED_RETRY_SECONDS, PubGate
from kruise.manager.writers.inplace import InPlaceRefreshError, InPlaceWriter
from kruise.manager.writers.pods import PodWriter, state_for_status_write

log = structlog.get_logger("kruise.manager.cloneset")


class UpdateError(Exception):
    """A pod could not be updated; the message becomes the FailedUpdate condition."""


def _earliest(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


class Updater:
    """Carries out `kruise.control.cloneset.update.plan_update`: no decision is taken here except
    asking the PodUnavailableBudget for a slot, which needs the API."""

    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        inplace: InPlaceWriter,
        rv_expectations: ResourceVersionExpectations,
        *,
        short_hash_gate: bool = False,
        env_from_metadata: bool = True,
        recreate_on_vct_change: bool = False,
        pub_gate: PubGate | None = None,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.inplace = inplace
        self.pod_writer: PodWriter = inplace.pods
        self.rv_expectations = rv_expectations
        self.short_hash_gate = short_hash_gate
        self.env_from_metadata = env_from_metadata
        self.recreate_on_vct_change = recreate_on_vct_change
        self.pub_gate = pub_gate

    async def update(
        self,
        cloneset: dict[str, Any],
        current_revision: Mapping[str, Any],
        update_revision: Mapping[str, Any],
        revisions: Sequence[Mapping[str, Any]],
        pods: Sequence[Obj],
        diffs: ExpectationDiffs,
        now: datetime,
    ) -> float | None:
        """Returns seconds after which to come back (grace periods, PUB refusals), or None."""
        plan = plan_update(
            cloneset,
            pods,
            current_revision,
            update_revision,
            revisions,
            diffs,
            now,
            env_from_metadata=self.env_from_metadata,
            recreate_on_vct_change=self.recreate_on_vct_change,
            **self.inplace.modes,
        )
        delay: float | None = None
        for step in plan.refreshes:
            delay = _earliest(delay, await self._refresh(step, now))
        for action in plan.updates:
            if self.pub_gate is not None and not await self.pub_gate.allows(action.pod):
                delay = _earliest(delay, REFUSED_RETRY_SECONDS)
                continue
            delay = _earliest(delay, await self._update_pod(cloneset, action, now))
        return delay

    async def refresh_new_pods(
        self, cloneset: Mapping[str, Any], pods: Sequence[Obj], update_revision: str, now: datetime
    ) -> None:
        """A scale-up's first move: the first write of every new pod that is due one
        (`first_readiness_refreshes`), one after another and before any of the pass's creates, so the
        creates cannot take the QPS those writes wait for."""
        for step in first_readiness_refreshes(cloneset, pods, update_revision, now, **self.inplace.modes):
            await self._refresh(step, now)

    async def _refresh(self, step: PodRefresh, now: datetime) -> float | None:
        """`refreshPodState` (+ the template-hash label fix) for one pod."""
        pod = step.pod
        try:
            outcome = await self.inplace.refresh(
                pod,
                now,
                equal_to_revision_hash,
                step.inplace,
                state=state_for_status_write(pod, step.lifecycle_state, step.mark_not_ready, now),
            )
        except InPlaceRefreshError as exc:
            raise UpdateError(str(exc)) from exc
        if step.template_hash_label:
            meta = pod["metadata"]
            patched = await self.client.patch(
                PODS,
                meta["name"],
                {"metadata": {"labels": {LABEL_POD_TEMPLATE_HASH: step.template_hash_label}}},
                meta["namespace"],
                patch_type=PatchType.STRATEGIC,
            )
            self.rv_expectations.expect(patched)
        if step.lifecycle_state and not outcome.state_moved:
            await self.pod_writer.set_lifecycle_state(pod, step.lifecycle_state, step.mark_not_ready, now)
        return outcome.requeue_after

    async def _update_pod(self, cloneset: dict[str, Any], action: PodUpdate, now: datetime) -> float | None:
        pod, target_name = action.pod, action.target_revision
        name = pod["metadata"]["name"]
        if action.kind is UpdateKind.WAIT:
            return None
        if action.kind is UpdateKind.BLOCKED:
            raise UpdateError(action.message)
        if action.kind is UpdateKind.PREPARE_UPDATE:
            await self.pod_writer.set_lifecycle_state(
                pod, LIFECYCLE_STATE_PREPARING_UPDATE, action.mark_not_ready, now
            )
            return None
        if action.kind is UpdateKind.RECREATE:
            await self._recreate(cloneset, pod, target_name)
            return None
        spec = action.spec
        assert spec is not None, "an IN_PLACE action always carries its spec"
        try:
            written = await self.inplace.start(
                pod, spec, now, write_revision=self._write_revision, also=lambda p: _mark_updating(p, now)
            )
        except Exception as exc:
            self.recorder.event(
                cloneset,
                "Warning",
                "FailedUpdatePodInPlace",
                in_place_failed_message(name, target_name, str(exc)),
            )
            raise
        if written is None:  # a fresh read showed this update already begun (`already_begun`)
            return None
        self.recorder.event(
            cloneset, "Normal", "SuccessfulUpdatePodInPlace", in_place_event_message(name, target_name)
        )
        return float(spec.grace_seconds) if spec.grace_seconds > 0 else None

    def _write_revision(self, obj: dict[str, Any], revision: str) -> None:
        obj.setdefault("metadata", {}).setdefault("labels", {}).update(
            revision_labels_for_pod(revision, self.short_hash_gate)
        )

    async def _recreate(self, cloneset: dict[str, Any], pod: Obj, target_name: str) -> None:
        meta = pod["metadata"]
        try:
            patched = await self.client.patch(
                PODS,
                meta["name"],
                {"metadata": {"labels": {LABEL_SPECIFIED_DELETE: "true"}}},
                meta["namespace"],
                patch_type=PatchType.STRATEGIC,
            )
        except Exception as exc:
            self.recorder.event(
                cloneset,
                "Warning",
                "FailedUpdatePodReCreate",
                f"failed to patch pod specified-delete {meta['name']} "
                f"for update(revision {target_name}): {exc}",
            )
            raise
        self.rv_expectations.expect(patched)
        self.recorder.event(
            cloneset,
            "Normal",
            "SuccessfulUpdatePodReCreate",
            recreate_event_message(meta["name"], target_name),
        )


def _mark_updating(pod: dict[str, Any], now: datetime) -> None:
    """The lifecycle state rides on the in-place object write (one write, as upstream)."""
    if lifecycle.pod_state(pod) == LIFECYCLE_STATE_UPDATING:
        return
    state = lifecycle.state_patch(LIFECYCLE_STATE_UPDATING, now)["metadata"]
    pod["metadata"].setdefault("labels", {}).update(state["labels"])
    pod["metadata"].setdefault("annotations", {}).update(state["annotations"])
