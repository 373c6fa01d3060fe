"""One pod-readiness reconcile: add `KruisePodReady=True` to a gated pod that has no such condition.

The condition is only ever created here, never overwritten: once it exists its status belongs to
whoever adds or removes not-ready keys (lifecycle hooks, PodUnavailableBudget). A pod this controller
patched is not patched again until the cache shows that patch: every status write the kubelet or a
workload controller makes meanwhile wakes the pod with the old, condition-less copy (issue 18 counted
~1.9 patches per StatefulSet pod before).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from kruise.api.keys import CONDITION_KRUISE_POD_READY
from kruise.api.objects import meta_of
from kruise.control.common import podreadiness
from kruise.control.common.lifecycle import rfc3339
from kruise.kube.client import Client
from kruise.kube.errors import NotFound
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.kube.informer import SharedInformer
from kruise.manager.writers.pods import PodWriter


def needs_condition(pod: Mapping[str, Any]) -> bool:
    """The pod carries the `KruisePodReady` readiness gate but not yet the condition, and its controller
    does not write it (CloneSet, Advanced StatefulSet/DaemonSet and BroadcastJob write it in their own
    status write: `kruise.control.common.podreadiness.written_by_owner`)."""
    return podreadiness.lacks_condition(pod) and not podreadiness.written_by_owner(pod)


class PodReadinessReconciler:
    """Reads pods from the cache; patches the condition through the status subresource."""

    def __init__(
        self,
        client: Client,
        *,
        pods: SharedInformer,
        wall: Callable[[], datetime],
        rv_expectations: ResourceVersionExpectations | None = None,
    ) -> None:
        self.client = client
        self.pods = pods
        self.wall = wall
        self.rv_expectations = rv_expectations or ResourceVersionExpectations()
        self.pod_writer = PodWriter(client, self.rv_expectations)

    async def reconcile(self, key: str) -> None:
        pod = self.pods.get(key)
        if pod is None or meta_of(pod).get("deletionTimestamp") or not needs_condition(pod):
            return
        if not self.rv_expectations.is_satisfied(pod):
            return  # our patch is on its way to the cache; the event that brings it settles the pod
        condition = {
            "type": CONDITION_KRUISE_POD_READY,
            "status": "True",
            "lastTransitionTime": rfc3339(self.wall()),
        }
        with contextlib.suppress(NotFound):
            await self.pod_writer.patch_status(pod, {"status": {"conditions": [condition]}})
