"""The ContainerRecreateRequest controller: the manager's half of a CRR (the daemon kills containers).

- A request whose pod is gone (or replaced: another UID) completes with "pod has gone"; one the daemon
  never picked up within a minute with "daemon has not responded for a long time"; one running past
  `activeDeadlineSeconds` with "recreating has exceeded the activeDeadlineSeconds".
- With `unreadyGracePeriodSeconds`, before the daemon may kill anything the pod is taken out of
  service: a not-ready key on `KruisePodReady` (user agent `ContainerRecreateRequest`), guarded by the
  finalizer `crr.apps.kruise.io/unready-acquired`, then the acquisition time is stamped in the
  annotation of the same name, which the daemon waits on. Completion releases the key and finalizer.
- A completed request loses its `crr.apps.kruise.io/active` label and is deleted
  `ttlSecondsAfterFinished` after completion.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from kruise.api import features
from kruise.api.keys import (
    ANNOTATION_CRR_UNREADY_ACQUIRED,
    FINALIZER_CRR_UNREADY_ACQUIRED,
    LABEL_CRR_ACTIVE,
    LABEL_CRR_POD_UID,
)
from kruise.control import podreadiness, podstatus
from kruise.control.lifecycle import rfc3339
from kruise.kube.client import PatchType
from kruise.kube.controller import Controller, Result
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import CONTAINER_RECREATE_REQUESTS, PODS, object_key
from kruise.kube.store import NAMESPACE_INDEX
from kruise.manager.context import ControllerSetup, ManagerContext

NAME = "containerrecreaterequest"
RESPONSE_TIMEOUT = 60.0
USER_AGENT = "ContainerRecreateRequest"


def build(ctx: ManagerContext) -> Controller:
    requests = ctx.informers.informer(CONTAINER_RECREATE_REQUESTS)
    pods = ctx.informers.informer(PODS)

    async def patch_request(
        name: str, namespace: str, body: dict[str, Any], subresource: str | None = None
    ) -> None:
        with contextlib.suppress(NotFound):
            await ctx.client.patch(
                CONTAINER_RECREATE_REQUESTS, name, body, namespace, patch_type=PatchType.MERGE,
                subresource=subresource,
            )  # fmt: skip

    async def complete(crr: dict[str, Any], message: str, now: datetime) -> None:
        meta = crr["metadata"]
        status = {
            **(crr.get("status") or {}),
            "phase": "Completed",
            "completionTime": rfc3339(now),
            "message": message,
        }
        await patch_request(meta["name"], meta["namespace"], {"status": status}, subresource="status")

    async def pod_readiness(pod: dict[str, Any] | None, key: str, add: bool, now: datetime) -> None:
        if pod is None:
            return
        change = podreadiness.add_not_ready_key if add else podreadiness.remove_not_ready_key
        updated = change(pod, USER_AGENT, key, now)
        if updated is not None:
            with contextlib.suppress(NotFound, Conflict):
                await ctx.client.update_status(PODS, updated)

    async def reconcile(key: str) -> Result | None:
        crr = requests.get(key)
        if crr is None:
            return None
        now = ctx.clock.wall()
        meta, spec, status = crr["metadata"], crr.get("spec") or {}, crr.get("status") or {}
        namespace = meta["namespace"]
        pod = pods.get(f"{namespace}/{spec.get('podName', '')}")
        finalizers = meta.get("finalizers") or []
        if meta.get("deletionTimestamp") or status.get("completionTime"):
            if FINALIZER_CRR_UNREADY_ACQUIRED in finalizers:
                await pod_readiness(pod, key, False, now)
                kept = [f for f in finalizers if f != FINALIZER_CRR_UNREADY_ACQUIRED]
                await patch_request(meta["name"], namespace, {"metadata": {"finalizers": kept}})
                return None
            if meta.get("deletionTimestamp"):
                return None
            if LABEL_CRR_ACTIVE in (meta.get("labels") or {}):
                await patch_request(
                    meta["name"], namespace, {"metadata": {"labels": {LABEL_CRR_ACTIVE: None}}}
                )
                return None
            ttl = spec.get("ttlSecondsAfterFinished")
            if ttl is not None:
                finished = podstatus.parse_time(status["completionTime"]) or now
                left = float(ttl) - (now - finished).total_seconds()
                if left <= 0:
                    with contextlib.suppress(NotFound):
                        await ctx.client.delete(CONTAINER_RECREATE_REQUESTS, meta["name"], namespace)
                    return None
                return Result(requeue_after=left)
            return None
        if (
            pod is None
            or pod["metadata"].get("deletionTimestamp")
            or pod["metadata"].get("uid") != (meta.get("labels") or {}).get(LABEL_CRR_POD_UID)
        ):
            await complete(crr, "pod has gone", now)
            return None
        created = podstatus.parse_time(meta.get("creationTimestamp")) or now
        age = (now - created).total_seconds()
        waits: list[float] = []
        if not status.get("phase"):
            if age >= RESPONSE_TIMEOUT:
                await complete(crr, "daemon has not responded for a long time", now)
                return None
            waits.append(RESPONSE_TIMEOUT - age)
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None:
            if age >= float(deadline):
                await complete(crr, "recreating has exceeded the activeDeadlineSeconds", now)
                return None
            waits.append(float(deadline) - age)
        grace = (spec.get("strategy") or {}).get("unreadyGracePeriodSeconds")
        acquired = (meta.get("annotations") or {}).get(ANNOTATION_CRR_UNREADY_ACQUIRED)
        if grace is not None and status.get("phase") == "Recreating" and not acquired:
            if FINALIZER_CRR_UNREADY_ACQUIRED not in finalizers:
                await patch_request(
                    meta["name"],
                    namespace,
                    {"metadata": {"finalizers": [*finalizers, FINALIZER_CRR_UNREADY_ACQUIRED]}},
                )
                return None
            await pod_readiness(pod, key, True, now)
            await patch_request(
                meta["name"],
                namespace,
                {"metadata": {"annotations": {ANNOTATION_CRR_UNREADY_ACQUIRED: rfc3339(now)}}},
            )
            return None
        return Result(requeue_after=min(waits)) if waits else None

    controller = Controller(NAME, reconcile, workers=ctx.workers_for(NAME), clock=ctx.clock)
    controller.watch(requests)

    def requests_of_pod(pod: dict[str, Any]) -> list[str]:
        namespace = pod["metadata"].get("namespace", "")
        return [
            object_key(r)
            for r in requests.by_index(NAMESPACE_INDEX, namespace)
            if (r.get("spec") or {}).get("podName") == pod["metadata"]["name"]
        ]

    controller.watch(pods, requests_of_pod, update_filter=lambda old, new: old["metadata"] != new["metadata"])
    return controller


SETUP = ControllerSetup(
    NAME, build, gate=features.KRUISE_DAEMON, kinds=("ContainerRecreateRequest.apps.kruise.io",)
)
