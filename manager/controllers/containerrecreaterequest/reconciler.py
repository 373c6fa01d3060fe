"""One ContainerRecreateRequest reconcile: the manager's half of a CRR (kruise-daemon kills containers).

- A request whose pod is gone (or replaced: another UID) completes with "pod has gone"; one the daemon
  never answered (phase still empty) within a minute of its creation with "daemon has not responded
  for a long time"; one running past `activeDeadlineSeconds` with "recreating has exceeded the
  activeDeadlineSeconds".
- With `unreadyGracePeriodSeconds`, once the daemon has picked the request up (phase `Recreating`)
  and before it may kill anything, the pod is taken out of service: a not-ready key on
  `KruisePodReady` (user agent `ContainerRecreateRequest`), guarded by the finalizer
  `crr.apps.kruise.io/unready-acquired`, then the acquisition time is stamped in the annotation of
  the same name, which the daemon waits on. Completion or deletion releases the key and finalizer.
- A completed request loses its `crr.apps.kruise.io/active` label and is deleted
  `ttlSecondsAfterFinished` after completion.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kruise.api.keys import (
    ANNOTATION_CRR_UNREADY_ACQUIRED,
    FINALIZER_CRR_UNREADY_ACQUIRED,
    LABEL_CRR_ACTIVE,
    LABEL_CRR_POD_UID,
)
from kruise.api.objects import Obj, section, status_of
from kruise.control.common import podreadiness, podstatus
from kruise.control.common.lifecycle import rfc3339
from kruise.kube.client import Client, PatchType
from kruise.kube.controller import Result
from kruise.kube.errors import NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS
from kruise.manager.writers.pods import PodWriter
from kruise.manager.writers.status import StatusWriter

RESPONSE_TIMEOUT = 60.0
"""Seconds kruise-daemon has, from the request's creation, to set a phase (its answer)."""
USER_AGENT = "ContainerRecreateRequest"


class ContainerRecreateRequestReconciler:
    """Reads requests and pods from the caches; patches requests, and writes statuses through the writers."""

    def __init__(
        self,
        client: Client,
        *,
        requests: SharedInformer,
        pods: SharedInformer,
        wall: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.requests = requests
        self.pods = pods
        self.wall = wall
        self.pod_writer = PodWriter(client)
        self.status_writer = StatusWriter(client, CONTAINER_RECREATE_REQUESTS)

    async def reconcile(self, key: str) -> Result | None:
        crr = self.requests.get(key)
        if crr is None:
            return None
        now = self.wall()
        meta, spec, status = crr["metadata"], crr.get("spec") or {}, crr.get("status") or {}
        pod = self.pods.get(f"{meta['namespace']}/{spec.get('podName', '')}")
        if meta.get("deletionTimestamp") or status.get("completionTime"):
            return await self._finish(key, crr, pod, now)
        if (
            pod is None
            or pod["metadata"].get("deletionTimestamp")
            or pod["metadata"].get("uid") != section(meta, "labels").get(LABEL_CRR_POD_UID)
        ):
            await self._complete(crr, "pod has gone", now)
            return None
        created = podstatus.parse_time(meta.get("creationTimestamp")) or now
        age = (now - created).total_seconds()
        waits: list[float] = []
        if not status.get("phase"):
            if age >= RESPONSE_TIMEOUT:
                await self._complete(crr, "daemon has not responded for a long time", now)
                return None
            waits.append(RESPONSE_TIMEOUT - age)
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None:
            if age >= float(deadline):
                await self._complete(crr, "recreating has exceeded the activeDeadlineSeconds", now)
                return None
            waits.append(float(deadline) - age)
        grace = section(spec, "strategy").get("unreadyGracePeriodSeconds")
        acquired = section(meta, "annotations").get(ANNOTATION_CRR_UNREADY_ACQUIRED)
        if grace is not None and status.get("phase") == "Recreating" and not acquired:
            await self._acquire_unready(key, crr, pod, now)
            return None
        return Result(requeue_after=min(waits)) if waits else None

    # ---- steps ---------------------------------------------------------------------------------

    async def _finish(self, key: str, crr: Obj, pod: Obj | None, now: datetime) -> Result | None:
        """A completed or deleted request: release the pod, drop the active label, honour the TTL."""
        meta, spec, status = crr["metadata"], crr.get("spec") or {}, crr.get("status") or {}
        finalizers = meta.get("finalizers") or []
        if FINALIZER_CRR_UNREADY_ACQUIRED in finalizers:
            await self._pod_readiness(pod, key, add=False, now=now)
            kept = [f for f in finalizers if f != FINALIZER_CRR_UNREADY_ACQUIRED]
            await self._patch(crr, {"metadata": {"finalizers": kept}})
            return None
        if meta.get("deletionTimestamp"):
            return None
        if LABEL_CRR_ACTIVE in section(meta, "labels"):
            await self._patch(crr, {"metadata": {"labels": {LABEL_CRR_ACTIVE: None}}})
            return None
        ttl = spec.get("ttlSecondsAfterFinished")
        if ttl is None:
            return None
        finished = podstatus.parse_time(status["completionTime"]) or now
        left = float(ttl) - (now - finished).total_seconds()
        if left > 0:
            return Result(requeue_after=left)
        with contextlib.suppress(NotFound):
            await self.client.delete(CONTAINER_RECREATE_REQUESTS, meta["name"], meta["namespace"])
        return None

    async def _acquire_unready(self, key: str, crr: Obj, pod: Obj, now: datetime) -> None:
        """Finalizer first (so a crash cannot leak the not-ready key), then the key, then the stamp."""
        finalizers = crr["metadata"].get("finalizers") or []
        if FINALIZER_CRR_UNREADY_ACQUIRED not in finalizers:
            await self._patch(
                crr, {"metadata": {"finalizers": [*finalizers, FINALIZER_CRR_UNREADY_ACQUIRED]}}
            )
            return
        await self._pod_readiness(pod, key, add=True, now=now)
        await self._patch(crr, {"metadata": {"annotations": {ANNOTATION_CRR_UNREADY_ACQUIRED: rfc3339(now)}}})

    async def _complete(self, crr: Obj, message: str, now: datetime) -> None:
        status = {
            **status_of(crr),
            "phase": "Completed",
            "completionTime": rfc3339(now),
            "message": message,
        }
        await self.status_writer.write(crr, status)  # a request deleted meanwhile needs nothing more

    async def _patch(self, crr: Obj, body: dict[str, Any]) -> None:
        """A merge patch of the request's metadata; a request deleted meanwhile needs nothing more."""
        meta = crr["metadata"]
        with contextlib.suppress(NotFound):
            await self.client.patch(
                CONTAINER_RECREATE_REQUESTS, meta["name"], body, meta["namespace"], patch_type=PatchType.MERGE
            )

    async def _pod_readiness(self, pod: Obj | None, key: str, *, add: bool, now: datetime) -> None:
        """Add or remove this request's not-ready key on the pod (a pod without the gate is left alone).
        The pod writer recomputes the change on a fresh read after a conflict, as upstream's
        `AddNotReadyKey` does in `RetryOnConflict`; a conflict left after those retries propagates so the
        request is reconciled again before anything is stamped. A pod gone meanwhile needs nothing."""
        if pod is None:
            return
        change = podreadiness.add_not_ready_key if add else podreadiness.remove_not_ready_key
        with contextlib.suppress(NotFound):
            await self.pod_writer.write_status_with(pod, lambda fresh: change(fresh, USER_AGENT, key, now))
