"""Carry out the update half of a CloneSet pass: refresh in-flight pods, then update the chosen ones.

Upstream's order is kept because it is what makes restarts safe: every pass first advances pods
already mid-update (grace period, next container batch, InPlaceUpdateReady back to True, lifecycle
state), and if any lifecycle state was written the pass ends there; only then are new pods picked,
from the observed state alone. A manager killed between two writes therefore resumes where the pod
objects say it was — the plan lives in the pods, not in memory.
"""

from __future__ import annotations

import copy
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
from kruise.control import lifecycle
from kruise.control.cloneset.diffs import ExpectationDiffs
from kruise.control.cloneset.update import (
    in_place_event_message,
    in_place_failed_message,
    plan_updates,
    pod_update_action,
    recreate_event_message,
    refresh_pod,
)
from kruise.control.inplace.engine import refresh, start_update, unready_pod
from kruise.control.inplace.spec import UpdateSpec, calculate_update_spec
from kruise.control.revision import equal_to_revision_hash, revision_labels_for_pod
from kruise.kube.client import Client, PatchType
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.resources import PODS
from kruise.manager.controllers.cloneset.podwrites import PodWriter
from kruise.manager.controllers.cloneset.pubgate import REFUSED_RETRY_SECONDS, PubGate

log = structlog.get_logger("kruise.manager.cloneset")

Pod = Mapping[str, Any]


class UpdateError(Exception):
    """A pod could not be updated; the message becomes the FailedUpdate condition."""


class Updater:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        pod_writer: PodWriter,
        rv_expectations: ResourceVersionExpectations,
        *,
        short_hash_gate: bool = False,
        env_from_metadata: bool = True,
        pub_gate: PubGate | None = None,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.pod_writer = pod_writer
        self.rv_expectations = rv_expectations
        self.short_hash_gate = short_hash_gate
        self.env_from_metadata = env_from_metadata
        self.pub_gate = pub_gate

    async def update(
        self,
        cloneset: dict[str, Any],
        current_revision: Mapping[str, Any],
        update_revision: Mapping[str, Any],
        revisions: Sequence[Mapping[str, Any]],
        pods: Sequence[Pod],
        diffs: ExpectationDiffs,
        now: datetime,
    ) -> float | None:
        """Returns seconds after which to come back (grace periods), or None."""
        update_name = update_revision["metadata"]["name"]
        delay: float | None = None
        modified = False
        for pod in pods:
            changed, pod_delay = await self._refresh(cloneset, pod, update_name, now)
            modified = modified or changed
            if pod_delay:
                delay = pod_delay if delay is None else min(delay, pod_delay)
        if modified:
            return delay

        target, chosen = plan_updates(
            cloneset, pods, current_revision["metadata"]["name"], update_name, diffs, now
        )
        target_revision = update_revision if target == update_name else current_revision
        for pod in chosen:
            if self.pub_gate is not None and not await self.pub_gate.allows(pod):
                delay = REFUSED_RETRY_SECONDS if delay is None else min(delay, REFUSED_RETRY_SECONDS)
                continue
            pod_delay = await self._update_pod(cloneset, pod, target_revision, revisions, now)
            if pod_delay:
                delay = pod_delay if delay is None else min(delay, pod_delay)
        return delay

    async def _refresh(
        self, cloneset: Mapping[str, Any], pod: Pod, update_name: str, now: datetime
    ) -> tuple[bool, float | None]:
        """`refreshPodState` (+ the template-hash label fix): True when a lifecycle state was written."""
        plan = refresh_pod(cloneset, pod, update_name, now)
        if plan.inplace.error:
            raise UpdateError(plan.inplace.error)
        if plan.inplace.pod is not None:
            await self.pod_writer.write_with(
                pod, lambda fresh: refresh(fresh, now, equal_to_revision_hash).pod
            )
        elif plan.inplace.status_pod is not None:
            await self.pod_writer.patch_conditions(pod, lambda _: plan.inplace.status_pod)
        if plan.template_hash_label:
            meta = pod["metadata"]
            patched = await self.client.patch(
                PODS,
                meta["name"],
                {"metadata": {"labels": {LABEL_POD_TEMPLATE_HASH: plan.template_hash_label}}},
                meta["namespace"],
                patch_type=PatchType.STRATEGIC,
            )
            self.rv_expectations.expect(patched)
        modified = False
        if plan.lifecycle_state:
            written = await self.pod_writer.set_lifecycle_state(
                pod, plan.lifecycle_state, plan.mark_not_ready, now
            )
            modified = written is not None
        return modified, (plan.inplace.delay_seconds or None)

    def _update_spec(
        self,
        cloneset: Mapping[str, Any],
        pod: Pod,
        target: Mapping[str, Any],
        revisions: Sequence[Mapping[str, Any]],
    ) -> UpdateSpec | None:
        old = next((r for r in revisions if equal_to_revision_hash(pod, r["metadata"]["name"])), None)
        grace = int(
            (
                ((cloneset.get("spec") or {}).get("updateStrategy") or {}).get("inPlaceUpdateStrategy") or {}
            ).get("gracePeriodSeconds")
            or 0
        )
        return calculate_update_spec(
            old, target, grace_seconds=grace, env_from_metadata=self.env_from_metadata
        )

    async def _update_pod(
        self,
        cloneset: dict[str, Any],
        pod: Pod,
        target: Mapping[str, Any],
        revisions: Sequence[Mapping[str, Any]],
        now: datetime,
    ) -> float | None:
        spec = self._update_spec(cloneset, pod, target, revisions)
        action = pod_update_action(cloneset, pod, spec is not None)
        target_name = target["metadata"]["name"]
        name = pod["metadata"]["name"]
        if action.kind == "wait":
            return None
        if action.kind == "error":
            raise UpdateError(action.message)
        if action.kind == "preparing-update":
            hook = ((cloneset.get("spec") or {}).get("lifecycle") or {}).get("inPlaceUpdate") or {}
            await self.pod_writer.set_lifecycle_state(
                pod, LIFECYCLE_STATE_PREPARING_UPDATE, bool(hook.get("markPodNotReady")), now
            )
            return None
        if action.kind == "in-place":
            assert spec is not None
            try:
                await self._in_place(pod, spec, now)
            except Exception as exc:
                self.recorder.event(
                    cloneset,
                    "Warning",
                    "FailedUpdatePodInPlace",
                    in_place_failed_message(name, target_name, str(exc)),
                )
                raise
            self.recorder.event(
                cloneset, "Normal", "SuccessfulUpdatePodInPlace", in_place_event_message(name, target_name)
            )
            return float(spec.grace_seconds) if spec.grace_seconds > 0 else None
        await self._recreate(cloneset, pod, target_name)
        return None

    async def _in_place(self, pod: Pod, spec: UpdateSpec, now: datetime) -> None:
        """`inplaceControl.Update`: InPlaceUpdateReady False first (status), then the new revision,
        state annotation, images and lifecycle state `Updating` in one object write."""
        written = await self.pod_writer.patch_conditions(pod, lambda current: unready_pod(current, now))
        base: Pod = written or pod

        def write_revision(obj: dict[str, Any], revision: str) -> None:
            obj.setdefault("metadata", {}).setdefault("labels", {}).update(
                revision_labels_for_pod(revision, self.short_hash_gate)
            )

        def change(fresh: Pod) -> dict[str, Any]:
            updated = start_update(fresh, spec, now, write_revision)
            if lifecycle.pod_state(updated) != LIFECYCLE_STATE_UPDATING:
                state = lifecycle.state_patch(LIFECYCLE_STATE_UPDATING, now)["metadata"]
                updated["metadata"].setdefault("labels", {}).update(state["labels"])
                updated["metadata"].setdefault("annotations", {}).update(state["annotations"])
            return updated

        await self.pod_writer.write_with(copy.deepcopy(dict(base)), change)

    async def _recreate(self, cloneset: dict[str, Any], pod: Pod, target_name: str) -> None:
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
