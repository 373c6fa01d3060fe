"""A minimal apps/v1 StatefulSet controller, worded after kube-controller-manager's.

One pass (``sync``) does what upstream's ``updateStatefulSet`` does, in its order:

1. revisions: the update revision is the ControllerRevision of the current template (reused when
   one holds it, created otherwise, ``collisionCount`` bumped on a name clash); the current
   revision is ``status.currentRevision``'s, or the update revision when there is none;
2. pods are sorted by ordinal into the wanted range ``[ordinals.start, start+replicas)`` and the
   condemned rest; a missing ordinal gets a pod (after its PVCs) of the current revision below
   the partition and of the update revision from it; Failed/Succeeded pods are deleted to be
   recreated;
3. condemned pods are deleted, highest ordinal first;
4. RollingUpdate deletes the highest-ordinal pod at or above ``partition`` that is not at the
   update revision, one at a time and only while the others are healthy (with
   ``rollingUpdate.maxUnavailable`` set, up to that many unavailable at once); OnDelete leaves
   pods alone.

``podManagementPolicy: OrderedReady`` (the default) stops the pass at the first pod it creates,
deletes, or finds not Running+Ready (+``minReadySeconds``) or terminating, so pods come up one at
a time in ordinal order and go down in reverse; ``Parallel`` does all of steps 2 and 3 at once.
Status is written as upstream (replicas, readyReplicas, currentReplicas, updatedReplicas,
availableReplicas, currentRevision, updateRevision, observedGeneration, collisionCount); when
every pod is updated and ready the current revision becomes the update revision.

Not simulated: adopting or releasing pods by selector (only pods controlled by the set count),
the failed-pod back-off, conditions, PVC resizing.
"""

from __future__ import annotations

import math

from kruise.sandbox.simulator.client import MERGE_PATCH, ApiError, Client, Obj, resource_path
from kruise.sandbox.simulator.controller import OwnerController
from kruise.sandbox.simulator.informer import Informer
from kruise.sandbox.simulator.owners import owned_by, remember, remember_deletion
from kruise.sandbox.simulator.statefulset_history import (
    equal_revisions,
    new_revision,
    next_number,
    revision_data,
    template_of,
    to_prune,
)
from kruise.sandbox.simulator.statefulset_pods import (
    available_wait,
    claim_owner_changes,
    claims_for,
    identity_labels,
    identity_matches,
    is_created,
    is_healthy,
    is_terminating,
    new_pod,
    ordinal_of,
    ordinal_range,
    revision_of,
    running_and_ready,
    start_ordinal,
)

APPS = "apps/v1"
_FINISHED = ("Failed", "Succeeded")


class _Stop(Exception):
    """OrderedReady: this pass can make no more progress (upstream's ``shouldExit``)."""


def max_unavailable(sts: Obj, replicas: int) -> int | None:
    """``rollingUpdate.maxUnavailable`` as a number (percent of replicas rounded up, at least 1)."""
    raw = ((((sts.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate")) or {}).get(
        "maxUnavailable"
    )
    if raw is None:
        return None
    if isinstance(raw, str) and raw.endswith("%"):
        value = math.ceil(int(raw[:-1]) * replicas / 100)
    else:
        value = int(raw)
    return max(value, 1)


def _available(pod: Obj | None, min_ready: int) -> bool:
    return pod is not None and not is_terminating(pod) and available_wait(pod, min_ready) == 0.0


class StatefulSetController(OwnerController):
    api_version = APPS
    kind = "StatefulSet"
    name = "statefulset-controller"

    def __init__(
        self, client: Client, owners: Informer, owned: Informer, revisions: Informer, claims: Informer
    ) -> None:
        super().__init__(client, owners, owned)
        self.revisions = revisions
        self.claims = claims
        self.informers = [revisions, claims]

    def start(self) -> None:
        self.revisions.start()
        self.claims.start()
        super().start()

    async def stop(self) -> None:
        await super().stop()
        await self.revisions.stop()
        await self.claims.stop()

    # ----------------------------------------------------------------- the pass

    async def sync(self, sts: Obj) -> float | None:
        spec = sts.get("spec") or {}
        status = sts.get("status") or {}
        collision = int(status.get("collisionCount") or 0)
        update, collision = await self._update_revision(sts, collision)
        revisions = owned_by(self.revisions, sts)
        current = next(
            (r for r in revisions if r["metadata"]["name"] == status.get("currentRevision")), update
        )
        set_name = sts["metadata"]["name"]
        wanted = ordinal_range(sts)
        slots: dict[int, Obj | None] = dict.fromkeys(wanted)
        condemned: list[tuple[int, Obj]] = []
        for pod in owned_by(self.owned, sts):
            ordinal = ordinal_of(pod, set_name)
            if ordinal is None:
                continue
            if ordinal in slots:
                slots[ordinal] = pod
            else:
                condemned.append((ordinal, pod))
        condemned.sort(key=lambda item: -item[0])
        order = [slots[o] for o in wanted] + [p for _, p in reversed(condemned)]
        first_unhealthy = next((i for i, p in enumerate(order) if not is_healthy(p)), None)
        first_unhealthy_pod = order[first_unhealthy] if first_unhealthy is not None else None
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        min_ready = int(spec.get("minReadySeconds") or 0)
        waits: list[float] = []
        if not sts["metadata"].get("deletionTimestamp"):
            try:
                for ordinal in wanted:
                    await self._replica(sts, ordinal, slots, current, update, monotonic, waits)
                for ordinal, pod in condemned:
                    await self._fix_claims(sts, pod, ordinal)
                for _, pod in condemned:
                    await self._condemned(sts, pod, first_unhealthy_pod, monotonic, min_ready, waits)
                if ((spec.get("updateStrategy") or {}).get("type") or "RollingUpdate") == "RollingUpdate":
                    await self._roll(sts, slots, update["metadata"]["name"], min_ready)
            except _Stop:
                pass
        await self._write_status(sts, current, update, collision)
        await self._prune(sts, current, update)
        pending = [w for w in waits if w]
        return min(pending) if pending else None

    async def _replica(
        self,
        sts: Obj,
        ordinal: int,
        slots: dict[int, Obj | None],
        current: Obj,
        update: Obj,
        monotonic: bool,
        waits: list[float],
    ) -> None:
        """processReplica: create, replace a finished pod, or wait for it (OrderedReady)."""
        pod = slots[ordinal]
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        if pod is None:
            if await self._claims_being_deleted(sts, ordinal):
                waits.append(1.0)
                self._stop_if(monotonic)
                return
            set_name = sts["metadata"]["name"]
            revision = current if self._below_partition(sts, ordinal) else update
            body = new_pod(sts, template_of(revision), ordinal, revision["metadata"]["name"])
            await self._create_claims(sts, body, ordinal)
            created = await self.client.create(
                resource_path("v1", "pods", sts["metadata"]["namespace"]), body
            )
            remember(self.owned, created)
            slots[ordinal] = created
            self.recorder.event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Pod {created['metadata']['name']} in StatefulSet {set_name} successful",
            )
            self._stop_if(monotonic)
            return
        if (pod.get("status") or {}).get("phase") in _FINISHED:
            if not is_terminating(pod):
                await self._delete(sts, pod)
            self._stop_if(monotonic)
            return
        if (pod.get("status") or {}).get("phase") == "Pending":
            await self._create_claims(sts, pod, ordinal)
        if is_terminating(pod):
            self._stop_if(monotonic)
            return
        wait = available_wait(pod, min_ready)
        if wait:
            waits.append(wait)
        if wait != 0.0:
            self._stop_if(monotonic)
        await self._fix_claims(sts, pod, ordinal)
        if not identity_matches(sts, pod, ordinal):
            patched = await self.client.patch(
                resource_path("v1", "pods", pod["metadata"]["namespace"], pod["metadata"]["name"]),
                {"metadata": {"labels": identity_labels(sts["metadata"]["name"], ordinal)}},
                MERGE_PATCH,
            )
            remember(self.owned, patched)

    async def _condemned(
        self,
        sts: Obj,
        pod: Obj,
        first_unhealthy: Obj | None,
        monotonic: bool,
        min_ready: int,
        waits: list[float],
    ) -> None:
        """processCondemned: delete, in OrderedReady one at a time and only the first unhealthy one."""
        if is_terminating(pod):
            self._stop_if(monotonic)
            return
        wait = available_wait(pod, min_ready)
        if wait:
            waits.append(wait)
        if wait != 0.0 and monotonic and pod is not first_unhealthy:
            raise _Stop
        await self._delete(sts, pod)
        self._stop_if(monotonic)

    async def _roll(self, sts: Obj, slots: dict[int, Obj | None], update: str, min_ready: int) -> None:
        """RollingUpdate from the highest ordinal down to the partition."""
        rolling = ((sts.get("spec") or {}).get("updateStrategy") or {}).get("rollingUpdate") or {}
        start = start_ordinal(sts)
        floor = start + int(rolling.get("partition") or 0)
        ordinals = sorted(slots, reverse=True)
        budget = max_unavailable(sts, len(ordinals))
        if budget is None:
            for ordinal in (o for o in ordinals if o >= floor):
                pod = slots[ordinal]
                if pod is not None and revision_of(pod) != update and not is_terminating(pod):
                    await self._delete(sts, pod)
                    raise _Stop
                if not is_healthy(pod):
                    raise _Stop
            return
        unavailable = sum(1 for o in ordinals if not _available(slots[o], min_ready))
        for ordinal in (o for o in ordinals if o >= floor):
            if unavailable >= budget:
                return
            pod = slots[ordinal]
            if pod is not None and revision_of(pod) != update and not is_terminating(pod):
                await self._delete(sts, pod)
                if is_healthy(pod):
                    unavailable += 1

    @staticmethod
    def _stop_if(monotonic: bool) -> None:
        if monotonic:
            raise _Stop

    @staticmethod
    def _below_partition(sts: Obj, ordinal: int) -> bool:
        """newVersionedStatefulSetPod: ordinals below the partition are created at the current revision."""
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
            return False
        rolling = strategy.get("rollingUpdate")
        if rolling is None:
            limit = int((sts.get("status") or {}).get("currentReplicas") or 0)
        else:
            limit = int(rolling.get("partition") or 0)
        return ordinal < start_ordinal(sts) + limit

    # ------------------------------------------------------------ pods and claims

    async def _delete(self, sts: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            deleted = await self.client.delete(
                resource_path("v1", "pods", pod["metadata"]["namespace"], name)
            )
        except ApiError as error:
            if not error.not_found:
                raise
            return
        remember_deletion(self.owned, deleted)
        self.recorder.event(
            sts,
            "Normal",
            "SuccessfulDelete",
            f"delete Pod {name} in StatefulSet {sts['metadata']['name']} successful",
        )

    async def _claims_being_deleted(self, sts: Obj, ordinal: int) -> bool:
        """PodClaimIsStale: a claim still being deleted must go before the pod is recreated."""
        for claim in claims_for(sts, ordinal):
            held = self.claims.get(f"{claim['metadata']['namespace']}/{claim['metadata']['name']}")
            if held is not None and held["metadata"].get("deletionTimestamp"):
                return True
        return False

    async def _create_claims(self, sts: Obj, pod: Obj, ordinal: int) -> None:
        namespace, set_name = sts["metadata"]["namespace"], sts["metadata"]["name"]
        for claim in claims_for(sts, ordinal):
            name = claim["metadata"]["name"]
            if self.claims.get(f"{namespace}/{name}") is not None:
                continue
            refs = claim_owner_changes(sts, claim, pod, ordinal)
            if refs:
                claim["metadata"]["ownerReferences"] = refs
            try:
                created = await self.client.create(
                    resource_path("v1", "persistentvolumeclaims", namespace), claim
                )
            except ApiError as error:
                if error.conflict:
                    continue
                self.recorder.event(
                    sts,
                    "Warning",
                    "FailedCreate",
                    f"create Claim {name} for Pod {pod['metadata']['name']} in StatefulSet "
                    f"{sts['metadata']['name']} failed error: {error.message}",
                )
                raise
            remember(self.claims, created)
            self.recorder.event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {name} Pod {pod['metadata']['name']} in StatefulSet {set_name} success",
            )

    async def _fix_claims(self, sts: Obj, pod: Obj, ordinal: int) -> None:
        """Keep each claim's ownerReferences as the retention policy wants them."""
        namespace = sts["metadata"]["namespace"]
        for wanted in claims_for(sts, ordinal):
            claim = self.claims.get(f"{namespace}/{wanted['metadata']['name']}")
            if claim is None or claim["metadata"].get("deletionTimestamp"):
                continue
            refs = claim_owner_changes(sts, claim, pod, ordinal)
            if refs is None:
                continue
            patched = await self.client.patch(
                resource_path("v1", "persistentvolumeclaims", namespace, claim["metadata"]["name"]),
                {
                    "metadata": {
                        "ownerReferences": refs,
                        "resourceVersion": claim["metadata"]["resourceVersion"],
                    }
                },
                MERGE_PATCH,
            )
            remember(self.claims, patched)

    # ------------------------------------------------------------------ revisions

    async def _update_revision(self, sts: Obj, collision: int) -> tuple[Obj, int]:
        """The revision of the set's template: reused if one holds it, created otherwise."""
        namespace = sts["metadata"]["namespace"]
        revisions = owned_by(self.revisions, sts)
        data = revision_data(sts)
        equal = equal_revisions(revisions, data)
        if equal:
            found = equal[-1]
            newest = max(int(r.get("revision", 0)) for r in revisions)
            if int(found.get("revision", 0)) == newest:
                return found, collision
            bumped = await self.client.patch(
                resource_path(APPS, "controllerrevisions", namespace, found["metadata"]["name"]),
                {"revision": next_number(revisions)},
                MERGE_PATCH,
            )
            remember(self.revisions, bumped)
            return bumped, collision
        while True:
            body = new_revision(sts, next_number(revisions), collision)
            try:
                created = await self.client.create(
                    resource_path(APPS, "controllerrevisions", namespace), body
                )
            except ApiError as error:
                if not error.conflict:
                    raise
                existing = await self.client.get(
                    resource_path(APPS, "controllerrevisions", namespace, body["metadata"]["name"])
                )
                if existing.get("data") == data:
                    remember(self.revisions, existing)
                    return existing, collision
                collision += 1  # a hash clash with another template: rename by bumping collisionCount
                continue
            remember(self.revisions, created)
            return created, collision

    async def _prune(self, sts: Obj, current: Obj, update: Obj) -> None:
        revisions = owned_by(self.revisions, sts)
        live = {current["metadata"]["name"], update["metadata"]["name"]}
        live |= {revision_of(p) for p in owned_by(self.owned, sts)}
        limit = int((sts.get("spec") or {}).get("revisionHistoryLimit", 10))
        for revision in to_prune(revisions, live, limit):
            try:
                await self.client.delete(
                    resource_path(
                        APPS,
                        "controllerrevisions",
                        revision["metadata"]["namespace"],
                        revision["metadata"]["name"],
                    )
                )
            except ApiError as error:
                if not error.not_found:
                    raise
            self.revisions.store.pop(
                f"{revision['metadata']['namespace']}/{revision['metadata']['name']}", None
            )

    # --------------------------------------------------------------------- status

    async def _write_status(self, sts: Obj, current: Obj, update: Obj, collision: int) -> None:
        meta = sts["metadata"]
        spec = sts.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        pods = [p for p in owned_by(self.owned, sts) if ordinal_of(p, meta["name"]) is not None]
        created = [p for p in pods if is_created(p)]
        counted = [p for p in created if not is_terminating(p)]
        status: Obj = {
            "observedGeneration": meta.get("generation", 1),
            "replicas": len(created),
            "readyReplicas": sum(1 for p in pods if running_and_ready(p)),
            "currentReplicas": sum(1 for p in counted if revision_of(p) == current_name),
            "updatedReplicas": sum(1 for p in counted if revision_of(p) == update_name),
            "availableReplicas": sum(1 for p in pods if available_wait(p, min_ready) == 0.0),
            "currentRevision": current_name,
            "updateRevision": update_name,
            "collisionCount": collision,
        }
        strategy = (spec.get("updateStrategy") or {}).get("type") or "RollingUpdate"
        if (
            strategy == "RollingUpdate"
            and status["updatedReplicas"] == status["replicas"]
            and status["readyReplicas"] == status["replicas"]
        ):
            status["currentReplicas"] = status["updatedReplicas"]
            status["currentRevision"] = update_name
        for optional in ("readyReplicas", "currentReplicas", "updatedReplicas"):
            if status[optional] == 0:
                del status[optional]
        old = sts.get("status") or {}
        if {k: v for k, v in old.items() if k != "conditions"} == status:
            return
        keep = {k: v for k, v in old.items() if k == "conditions"}
        written = await self.client.replace(
            resource_path(APPS, "statefulsets", meta["namespace"], meta["name"], "status"),
            {**sts, "status": {**status, **keep}},
        )
        remember(self.owners, written)
