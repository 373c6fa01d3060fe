"""Carry out the per-node pod writes of an Advanced DaemonSet pass (upstream ``syncNodes``).

Both plans that move pods act through here: the manage plan (pods onto eligible nodes, off
ineligible ones) and the rolling update (old pods deleted, surge pods created). Keeping one
executor is what keeps their writes alike: the same burst cap, the same expectations announced
before each request and taken back when it fails, the same preDelete hook and the same pod built
from the template. No decision is taken here; which nodes get or lose a pod comes from
``kruise.control.daemonset``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.api.common import IntOrStringError, scaled_value
from kruise.api.controllerref import new_controller_ref
from kruise.api.daemonset import ROLLING_IN_PLACE_IF_POSSIBLE, STRATEGY_ROLLING_UPDATE
from kruise.api.keys import CONDITION_INPLACE_UPDATE_READY, LIFECYCLE_STATE_PREPARING_DELETE
from kruise.api.objects import Obj, section, spec_of, status_of
from kruise.control.common import lifecycle
from kruise.control.common.nodeeligibility import bind_to_node, create_pod_template
from kruise.control.daemonset.rollingupdate import RollingUpdateSettings
from kruise.kube.client import Client
from kruise.kube.clock import Clock
from kruise.kube.errors import NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.expectations import ScaleExpectations
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import PODS
from kruise.kube.slowstart import slow_start
from kruise.manager.writers.pods import PodWriter

DEFAULT_BURST_REPLICAS = 250
CREATE_PASS_SECONDS = 3.0
"""No pod create starts once a pass has been creating this long: the pass ends as any pass does (status
written once, with the pods created so far) and the pods' add events bring the next one, so status
shows progress during a long scale-up instead of staying at 0 until the last create (issue 18)."""


class NodeSync:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        scale_expectations: ScaleExpectations,
        pods: SharedInformer,
        pod_writer: PodWriter,
        wall: Callable[[], datetime],
        *,
        clock: Clock,
        create_pass_seconds: float = CREATE_PASS_SECONDS,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.scale_expectations = scale_expectations
        self.pods = pods
        self.pod_writer = pod_writer
        self.wall = wall
        self.clock = clock
        self.create_pass_seconds = create_pass_seconds

    async def sync(
        self,
        ds: dict[str, Any],
        key: str,
        to_delete: Sequence[str],
        to_create: Sequence[str],
        update_hash: str,
    ) -> None:
        """syncNodes: PreparingDelete first for pods a preDelete hook holds; then at most
        ``burstReplicas`` creates and deletes, each expected before it is sent. Creates go in
        slow-start batches (1, 2, 4, ... at once, as upstream), none after a batch with a failure and
        none starting after ``CREATE_PASS_SECONDS`` (the nodes left are not expected, the next pass
        creates them). One create at a time would leave the client's rate limit mostly unused: each
        request waits for the previous answer."""
        to_delete = await self._prepare_delete(ds, to_delete)
        burst = _burst_replicas(ds)
        to_create, to_delete = list(to_create)[:burst], list(to_delete)[:burst]
        errors: list[BaseException] = []
        if to_create:
            template = _pod_template(ds, update_hash)
            deadline = self.clock.now() + self.create_pass_seconds

            async def create_on(node: str) -> None:
                if self.clock.now() >= deadline:
                    return  # the other nodes next pass (CREATE_PASS_SECONDS), after this status write
                self.scale_expectations.expect(key, ScaleExpectations.CREATE, node)
                try:
                    created = await self.client.create(PODS, _pod_for(ds, template, node))
                except Exception as exc:
                    self.scale_expectations.observe(key, ScaleExpectations.CREATE, node)
                    self.recorder.event(ds, "Warning", "FailedCreate", f"Error creating: {exc}")
                    raise
                self.recorder.event(
                    ds, "Normal", "SuccessfulCreate", f"Created pod: {created['metadata']['name']}"
                )

            _, error = await slow_start(to_create, create_on)
            if error is not None:
                errors.append(error)
        namespace = ds["metadata"]["namespace"]
        for name in to_delete:
            self.scale_expectations.expect(key, ScaleExpectations.DELETE, name)
            try:
                await self.client.delete(PODS, name, namespace)
            except NotFound:
                self.scale_expectations.observe(key, ScaleExpectations.DELETE, name)
                continue
            except Exception as exc:
                self.scale_expectations.observe(key, ScaleExpectations.DELETE, name)
                self.recorder.event(ds, "Warning", "FailedDelete", f"Error deleting: {exc}")
                errors.append(exc)
                continue
            self.recorder.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {name}")
        if errors:
            raise errors[0]

    async def _prepare_delete(self, ds: Obj, names: Sequence[str]) -> list[str]:
        """syncWithPreparingDelete: a pod its preDelete hook still holds is moved to PreparingDelete
        (and marked not ready when asked) instead of being deleted; it goes once the hook lets go."""
        hook = section(ds, "spec", "lifecycle").get("preDelete")
        if not hook:
            return list(names)
        namespace = ds["metadata"]["namespace"]
        deletable = []
        for name in names:
            pod = self.pods.get(f"{namespace}/{name}")
            if pod is None:
                continue
            if not lifecycle.is_hooked(hook, pod):
                deletable.append(name)
                continue
            if lifecycle.pod_state(pod) != LIFECYCLE_STATE_PREPARING_DELETE:
                await self.pod_writer.set_lifecycle_state(
                    pod, LIFECYCLE_STATE_PREPARING_DELETE, bool(hook.get("markPodNotReady")), self.wall()
                )
        return deletable


def rolling(ds: Obj) -> Mapping[str, Any]:
    return (section(ds, "spec", "updateStrategy").get("rollingUpdate")) or {}


def rolling_type(ds: Obj) -> str:
    return rolling(ds).get("rollingUpdateType") or ""


def _pod_template(ds: Obj, update_hash: str) -> dict[str, Any]:
    settings = RollingUpdateSettings.from_daemonset(ds)
    template = create_pod_template(
        spec_of(ds).get("template") or {}, settings.template_generation, update_hash
    )
    if settings.strategy_type == STRATEGY_ROLLING_UPDATE and rolling_type(ds) == ROLLING_IN_PLACE_IF_POSSIBLE:
        gates = list(template["spec"].get("readinessGates") or [])
        gates.append({"conditionType": CONDITION_INPLACE_UPDATE_READY})
        template["spec"]["readinessGates"] = gates
    return template


def _pod_for(ds: Obj, template: Obj, node: str) -> dict[str, Any]:
    """GetPodFromTemplate for one node: ``generateName <ds>-``, controller reference, the
    template bound to the node by required node affinity."""
    bound = bind_to_node(template, node)
    meta = ds["metadata"]
    template_meta = bound.get("metadata") or {}
    pod_meta: dict[str, Any] = {
        "generateName": f"{meta['name']}-",
        "namespace": meta["namespace"],
        "labels": dict(section(template_meta, "labels")),
        "ownerReferences": [new_controller_ref(ds, api_version="apps.kruise.io/v1alpha1", kind="DaemonSet")],
    }
    for field in ("annotations", "finalizers"):
        if template_meta.get(field):
            pod_meta[field] = copy.deepcopy(template_meta[field])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": bound["spec"]}


def _burst_replicas(ds: Obj) -> int:
    burst = spec_of(ds).get("burstReplicas")
    desired = int(status_of(ds).get("desiredNumberScheduled") or 0)
    try:
        return scaled_value(DEFAULT_BURST_REPLICAS if burst is None else burst, desired, round_up=False)
    except IntOrStringError:
        return DEFAULT_BURST_REPLICAS
