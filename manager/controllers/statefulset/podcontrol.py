"""Pod and claim writes of the Advanced StatefulSet controller (upstream ``StatefulPodControl``),
each followed by the event upstream records: ``create Pod web-0 in StatefulSet web successful``,
``create Claim data-web-0 Pod web-0 in StatefulSet web success``, ``delete Pod ...``.

Claims resized with the rollout (``volumeClaimUpdateStrategy: OnPodRollingUpdate``) record
``SuccessfulResize`` (``resize Claim data-web-0 Pod web-0 in StatefulSet web success``) or
``FailedResize``; a claim that differs from its template in more than size records
``FailedUpdatePVC`` and stops the pass until it is deleted.

Creations and deletions are announced to the scale expectations before the request and taken
back when it fails, so a pass racing the informer never acts twice on one pod.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kruise.api.keys import LIFECYCLE_STATE_PREPARING_DELETE
from kruise.api.objects import Obj, meta_of, section
from kruise.api.statefulset import PVC_DELETE
from kruise.control.statefulset.actions import DeletePod, PrepareDelete, ResizeClaims
from kruise.control.statefulset.claimowners import claim_is_stale, realigned_owner_refs, set_owner_ref
from kruise.control.statefulset.claims import ANNOTATION_PVC_OWNED_BY_ASTS, ClaimResize
from kruise.control.statefulset.identity import ordinal_of
from kruise.control.statefulset.pods import claims_for_ordinal, retention_policy
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ResourceVersionExpectations, ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import PODS, PVCS, object_key
from kruise.manager.writers.expectations import settled
from kruise.manager.writers.pods import PodWriter


def _pod_message(verb: str, pod_name: str, set_name: str, error: Exception | None) -> tuple[str, str, str]:
    """(event type, reason, message) as ``recordPodEvent``."""
    if error is None:
        return (
            "Normal",
            f"Successful{verb.title()}",
            f"{verb} Pod {pod_name} in StatefulSet {set_name} successful",
        )
    return (
        "Warning",
        f"Failed{verb.title()}",
        f"{verb} Pod {pod_name} in StatefulSet {set_name} failed error: {error}",
    )


class StatefulPodControl:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        pvcs: SharedInformer,
        scale_expectations: ScaleExpectations,
        rv_expectations: ResourceVersionExpectations,
        storage_classes: SharedInformer | None = None,
        auto_delete_pvc: bool = True,
    ) -> None:
        """``storage_classes``: the StorageClass informer, watched only under
        StatefulSetAutoResizePVCGate (a claim grows only if its class allows expansion).
        ``auto_delete_pvc``: gate StatefulSetAutoDeletePVC; off, the retention policy is ignored."""
        self.client = client
        self.auto_delete_pvc = auto_delete_pvc
        self.storage_classes = storage_classes
        self.recorder = recorder
        self.pvcs = pvcs
        self.scale_expectations = scale_expectations
        self.rv_expectations = rv_expectations
        self.pod_writer = PodWriter(client, rv_expectations)

    def _event(self, sts: dict[str, Any], verb: str, pod: Obj, error: Exception | None) -> None:
        type_, reason, message = _pod_message(verb, pod["metadata"]["name"], sts["metadata"]["name"], error)
        self.recorder.event(sts, type_, reason, message)

    async def create_claims(self, sts: dict[str, Any], pod: Obj) -> None:
        """``createPersistentVolumeClaims``: every missing claim of the pod's ordinal; a claim being
        deleted blocks the pod (it would bind to a dying volume)."""
        errors = []
        policy = retention_policy(sts, self.auto_delete_pvc)
        for claim in claims_for_ordinal(sts, ordinal_of(pod)):
            meta = claim["metadata"]
            if policy.get("whenDeleted") == PVC_DELETE:
                # whenDeleted: Delete — the garbage collector removes the claim with the set
                meta["ownerReferences"] = [set_owner_ref(sts)]
            existing = self.pvcs.get(object_key(claim))
            if existing is not None:
                if meta_of(existing).get("deletionTimestamp"):
                    errors.append(f"pvc {meta['name']} is to be deleted")
                continue
            try:
                await self.client.create(PVCS, claim, meta.get("namespace"))
            except AlreadyExists:
                continue
            except Exception as exc:
                errors.append(f"failed to create PVC {meta['name']}: {exc}")
                self.recorder.event(
                    sts,
                    "Warning",
                    "FailedCreate",
                    f"create Claim {meta['name']} for Pod {pod['metadata']['name']} in StatefulSet "
                    f"{sts['metadata']['name']} failed error: {exc}",
                )
                continue
            self.recorder.event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {meta['name']} Pod {pod['metadata']['name']} in StatefulSet "
                f"{sts['metadata']['name']} success",
            )
        if errors:
            raise RuntimeError("; ".join(errors))

    async def create_pod(self, sts: dict[str, Any], key: str, pod: dict[str, Any]) -> None:
        """``CreateStatefulPod``: claims first, then the pod."""
        try:
            await self.create_claims(sts, pod)
        except Exception as exc:
            self._event(sts, "create", pod, exc)
            raise
        name = pod["metadata"]["name"]
        self.scale_expectations.expect(key, ScaleExpectations.CREATE, name)
        try:
            created = await self.client.create(PODS, pod, pod["metadata"].get("namespace"))
        except AlreadyExists:
            self.scale_expectations.observe(key, ScaleExpectations.CREATE, name)
            raise
        except Exception as exc:
            self.scale_expectations.observe(key, ScaleExpectations.CREATE, name)
            self._event(sts, "create", pod, exc)
            raise
        if self.auto_delete_pvc:
            # as much of the retention policy as can be set now that the pod has a UID
            try:
                await self.align_claim_owners(sts, created, condemned=False)
            except Exception as exc:
                self._event(sts, "update", pod, exc)
                raise
        self._event(sts, "create", pod, None)

    async def delete_pod(self, sts: dict[str, Any], key: str, pod: Obj) -> None:
        """``DeleteStatefulPod``."""
        meta = pod["metadata"]
        self.scale_expectations.expect(key, ScaleExpectations.DELETE, meta["name"])
        try:
            await self.client.delete(PODS, meta["name"], meta["namespace"], uid=meta.get("uid"))
        except NotFound:
            self.scale_expectations.observe(key, ScaleExpectations.DELETE, meta["name"])
            return
        except Exception as exc:
            self.scale_expectations.observe(key, ScaleExpectations.DELETE, meta["name"])
            self._event(sts, "delete", pod, exc)
            raise
        self._event(sts, "delete", pod, None)

    async def remove(
        self, sts: dict[str, Any], key: str, action: DeletePod | PrepareDelete, now: datetime
    ) -> None:
        """``deletePod``: a preDelete hook moves the pod to PreparingDelete instead."""
        if isinstance(action, PrepareDelete):
            await self.pod_writer.set_lifecycle_state(
                action.pod, LIFECYCLE_STATE_PREPARING_DELETE, action.mark_not_ready, now
            )
            return
        await self.delete_pod(sts, key, action.pod)

    async def fix_identity(self, sts: dict[str, Any], pod: Obj, patch: dict[str, Any]) -> None:
        """``UpdateStatefulPod`` for a pod whose identity labels drifted."""
        meta = pod["metadata"]
        try:
            patched = await self.client.patch(
                PODS, meta["name"], patch, meta["namespace"], patch_type=PatchType.MERGE
            )
        except NotFound:
            return
        except Exception as exc:
            self._event(sts, "update", pod, exc)
            raise
        self.rv_expectations.expect(patched)
        self._event(sts, "update", pod, None)

    def _cached_claims(self, sts: Mapping[str, Any], pod: Obj) -> list[Mapping[str, Any]]:
        """The pod's claims as the informer holds them (missing ones skipped: created later)."""
        found = []
        for claim in claims_for_ordinal(sts, ordinal_of(pod)):
            cached = self.pvcs.get(object_key(claim))
            if cached is not None:
                found.append(cached)
        return found

    def claim_is_stale(self, sts: Mapping[str, Any], pod: Obj) -> bool:
        """``PodClaimIsStale``: a claim of the pod's ordinal still belongs to an earlier pod of that
        name; the pod must not be created until the garbage collector has removed the claim."""
        policy = retention_policy(sts, self.auto_delete_pvc)
        return any(claim_is_stale(claim, pod, policy) for claim in self._cached_claims(sts, pod))

    async def align_claim_owners(self, sts: dict[str, Any], pod: Obj, condemned: bool) -> None:
        """``UpdatePodClaimForRetentionPolicy``: one update per claim whose owner references differ
        from what the policy wants; nothing is written for claims that match. A claim this
        controller updated is left alone until the informer shows that update (a conflict retries
        the pass with a fresh cache)."""
        policy = retention_policy(sts, self.auto_delete_pvc)
        for cached in settled(self.rv_expectations, self._cached_claims(sts, pod)):
            refs = realigned_owner_refs(cached, sts, pod, policy, condemned)
            if refs is None:
                continue
            claim = copy.deepcopy(dict(cached))
            claim["metadata"]["ownerReferences"] = refs
            name = claim["metadata"]["name"]
            try:
                updated = await self.client.update(PVCS, claim)
            except NotFound:
                continue
            except Exception as exc:
                message = f"could not update claim {name} for delete policy ownerRefs: {exc}"
                raise RuntimeError(message) from exc
            self.rv_expectations.expect(updated)

    async def delete_claims(self, sts: dict[str, Any], ordinal: int) -> None:
        """Delete the claims of an ordinal that left the set (whenScaled: Delete)."""
        namespace = sts["metadata"].get("namespace")
        for claim in claims_for_ordinal(sts, ordinal):
            with contextlib.suppress(NotFound):
                await self.client.delete(PVCS, claim["metadata"]["name"], namespace)

    async def resize_claims(self, sts: dict[str, Any], action: ResizeClaims) -> None:
        """``TryPatchPVC``: grow each claim in turn (its class must allow expansion), then fail on
        the conflicting claim if the plan found one."""
        pod_name = action.pod["metadata"]["name"]
        for resize in action.resizes:
            self._check_expandable(resize, pod_name)
            await self._resize_claim(sts, pod_name, resize)
        if action.conflict is not None:
            message = (
                f"failed to update pvc {action.conflict}: contains diff other than spec resource, "
                "wait pvc to be deleted"
            )
            self.recorder.event(sts, "Warning", "FailedUpdatePVC", message)
            raise RuntimeError(
                f"can not patch pvc {action.conflict}: contains diff other than spec resource, "
                "wait pvc to be deleted"
            )

    def _check_expandable(self, resize: ClaimResize, pod_name: str) -> None:
        if resize.storage_class is None:
            return
        found = None
        if self.storage_classes is not None:
            found = self.storage_classes.get(resize.storage_class)
        if found is None:
            raise RuntimeError(
                f"could not get sc {resize.storage_class} for {pod_name} when checking PVC spec"
            )
        if found.get("allowVolumeExpansion") is not True:
            raise RuntimeError(
                f"storage class {resize.storage_class} for {pod_name} does not support volume expansion"
            )

    async def _resize_claim(self, sts: dict[str, Any], pod_name: str, resize: ClaimResize) -> None:
        """One update of the cached claim (a conflict retries the pass with a fresh cache): the
        template's resources replace the claim's, and the annotation lets claim events wake the
        set."""
        namespace = sts["metadata"].get("namespace", "")
        set_name = sts["metadata"]["name"]
        cached = self.pvcs.get(f"{namespace}/{resize.name}")
        if cached is None:
            return
        claim = copy.deepcopy(dict(cached))
        meta = claim.setdefault("metadata", {})
        meta["annotations"] = {**section(meta, "annotations"), ANNOTATION_PVC_OWNED_BY_ASTS: set_name}
        claim.setdefault("spec", {})["resources"] = copy.deepcopy(dict(resize.resources))
        try:
            await self.client.update(PVCS, claim)
        except Exception as exc:
            self.recorder.event(
                sts,
                "Warning",
                "FailedResize",
                f"resize Claim {resize.name} for Pod {pod_name} in StatefulSet {set_name} "
                f"failed error: {exc}",
            )
            raise RuntimeError(f"could not update claim {resize.name}: {exc}") from exc
        self.recorder.event(
            sts,
            "Normal",
            "SuccessfulResize",
            f"resize Claim {resize.name} Pod {pod_name} in StatefulSet {set_name} success",
        )
