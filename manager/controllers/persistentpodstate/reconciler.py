"""One pass over a PersistentPodState, or over an auto-generation request.

Queue names starting with `generate#` ask whether a StatefulSet's own PersistentPodState should
exist and with which spec (created, updated or deleted to match its annotations).
`follow#custom-workloads` asks to watch the kinds of kruise-configuration's
PPS_Watch_Custom_Workload_WhiteList. Other names are PersistentPodStates: the pass reads the target
workload, its active pods and their nodes from the caches, computes the new `status.podStates`
with `kruise.control.persistentpodstate.podstates` and writes it only when it changed (a status update, so a
concurrent writer makes the pass retry).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

import structlog

from kruise.api.controllerref import controller_of
from kruise.api.objects import Obj, spec_of
from kruise.control.common import podstatus
from kruise.control.common.customworkloads import (
    GroupVersionKind,
    StatefulSetLikeWhitelist,
    parse_pps_whitelist,
)
from kruise.control.persistentpodstate import podstates
from kruise.kube.client import Client
from kruise.kube.controller import Result
from kruise.kube.errors import AlreadyExists, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.kinds import resource_for_kind
from kruise.kube.resources import PERSISTENT_POD_STATES, ResourceRef, split_key
from kruise.kube.store import OWNER_UID_INDEX
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger("kruise.manager.persistentpodstate")


FOLLOW_CUSTOM_WORKLOADS = "follow#custom-workloads"
"""Queue name (in kruise's namespace) asking to watch every kind of PPS_Watch_Custom_Workload_WhiteList."""


class PersistentPodStateReconciler:
    def __init__(
        self,
        client: Client,
        *,
        states: SharedInformer,
        pods: SharedInformer,
        nodes: SharedInformer,
        workloads: Mapping[str, SharedInformer],
        configuration: Callable[[], Mapping[str, str]] = dict,
        follow: Callable[[ResourceRef], None] | None = None,
    ) -> None:
        """`workloads`: API group ("apps", "apps.kruise.io") -> its StatefulSet informer.
        `configuration`: `data` of ConfigMap kruise-configuration, whose
        PPS_Watch_Custom_Workload_WhiteList lets a PersistentPodState target other kinds; `follow`
        is told each such kind's resource once, so the controller watches it."""
        self.client = client
        self.status_writer = StatusWriter(client, PERSISTENT_POD_STATES)
        self.states = states
        self.pods = pods
        self.nodes = nodes
        self.workloads = workloads
        self.configuration = configuration
        self.follow = follow
        self._resources: dict[GroupVersionKind, ResourceRef] = {}

    def whitelist(self) -> StatefulSetLikeWhitelist:
        """Raises WhitelistError when it does not parse: the pass is retried, as upstream's finder
        returns the error."""
        return parse_pps_whitelist(self.configuration())

    async def _resource(self, gvk: GroupVersionKind) -> ResourceRef:
        """The resource serving a whitelisted kind (looked up once); the first lookup also asks
        `follow` to watch it. Raises LookupError while no resource serves it (retried)."""
        ref = self._resources.get(gvk)
        if ref is None:
            ref = await resource_for_kind(self.client, gvk.group, gvk.version, gvk.kind)
            if ref is None:
                raise LookupError(f"no resource serves {gvk.kind}.{gvk.group}/{gvk.version}")
            self._resources[gvk] = ref
            if self.follow is not None:
                self.follow(ref)
        return ref

    async def _workload(self, namespace: str, api_version: str, kind: str, name: str) -> Obj | None:
        """The target: a StatefulSet from its informer, a whitelisted kind from the apiserver (at
        the targetRef's version, as upstream reads it unstructured); None when missing or neither."""
        if podstates.is_statefulset(api_version, kind):
            informer = self.workloads.get(podstates.group_of(api_version))
            return None if informer is None else informer.get(f"{namespace}/{name}")
        if not self.whitelist().is_custom(api_version, kind):
            return None
        group, _, version = api_version.rpartition("/")
        ref = await self._resource(GroupVersionKind(group, version, kind))
        try:
            return await self.client.get(ref, name, namespace)
        except NotFound:
            return None

    async def _follow_custom_workloads(self) -> None:
        """Watch every whitelisted kind (upstream adds a watch per kind at start), so their
        auto-generation annotations and deletions wake the controller before any PPS targets them."""
        for gvk in self.whitelist().workloads:
            await self._resource(gvk)

    async def reconcile(self, key: str) -> Result | None:
        namespace, name = split_key(key)
        namespace = namespace or ""
        if name == FOLLOW_CUSTOM_WORKLOADS:
            await self._follow_custom_workloads()
            return None
        if name.startswith(podstates.GENERATE_PREFIX):
            await self._generate(namespace, name)
            return None
        pps = self.states.get(key)
        if pps is None:
            return None
        ref = spec_of(pps).get("targetRef") or {}
        api_version, kind = ref.get("apiVersion") or "", ref.get("kind") or ""
        workload = await self._workload(namespace, api_version, kind, ref.get("name") or "")
        shape = None
        if workload is not None:
            custom = not podstates.is_statefulset(api_version, kind)
            shape = podstates.Workload.of_custom(workload) if custom else podstates.Workload.of(workload)
        pods: dict[str, Obj] = {}
        if workload is not None:
            uid = workload["metadata"]["uid"]
            for pod in self.pods.by_index(OWNER_UID_INDEX, uid):
                owner = controller_of(pod)
                if owner is not None and owner.get("uid") == uid and podstatus.is_active(pod):
                    pods[pod["metadata"]["name"]] = pod
        status = podstates.next_status(pps, shape, pods, self.nodes.get)
        await self.status_writer.write(pps, status)
        return None

    async def _generate(self, namespace: str, name: str) -> None:
        parsed = podstates.parse_generate_name(name)
        if parsed is None:
            return
        api_version, kind, workload_name = parsed
        workload = await self._workload(namespace, api_version, kind, workload_name)
        if workload is None:
            return
        existing = self.states.get(f"{namespace}/{workload_name}")
        if not podstates.wants_generated(workload):
            if podstates.keeps_generated(workload) or existing is None:
                return
            if not podstates.generated_by(existing, workload):
                return  # a PersistentPodState the user made under that name is not ours to delete
            with contextlib.suppress(NotFound):
                await self.client.delete(PERSISTENT_POD_STATES, workload_name, namespace)
            return
        desired = podstates.generated(workload, api_version, kind)
        if existing is None:
            with contextlib.suppress(AlreadyExists):
                await self.client.create(PERSISTENT_POD_STATES, desired, namespace)
            return
        if existing.get("spec") != desired["spec"]:
            await self.client.update(PERSISTENT_POD_STATES, {**existing, "spec": desired["spec"]})
