"""One pass over a WorkloadSpread: read its target workload and that workload's pods from the caches,
adopt pods that lack its annotation into the subset their node fits (see
`kruise.control.workloadspread.adoption`), patch the deletion cost each pod should carry, write the
recomputed status when it changed, then (Adaptive strategy) delete the pods that failed to schedule
(see `kruise.control.workloadspread.reschedule`).

Pods are the target's own (by controller reference; a Deployment's through its ReplicaSets, a Job's
also by its selector), narrowed by `targetFilter.selector`. A missing workload counts as no pods and
zero replicas. Costs are written only for CloneSet, Deployment and ReplicaSet targets, the kinds that
honour them; while a Deployment's newest ReplicaSet is not in the cache the pass retries instead of
ranking versions it cannot tell apart. The status write is an update of the cached copy, so a
concurrent webhook booking makes it conflict and the pass runs again on fresh books.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import structlog

from kruise.api.controllerref import controller_of
from kruise.api.objects import Obj, section, spec_of
from kruise.control.sidecarset.matching import SelectorError, selector_matches
from kruise.control.workloadspread import adoption, deletioncost, status
from kruise.control.workloadspread.targets import (
    OwnerNotFound,
    group_of,
    is_builtin_target,
    pod_selected,
    references,
    workload_replicas,
)
from kruise.control.workloadspread.whitelist import GroupVersionKind, parse_whitelist
from kruise.kube.client import Client, PatchType
from kruise.kube.clock import Clock, RealClock
from kruise.kube.controller import Result, TerminalError
from kruise.kube.errors import NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.informer import SharedInformer
from kruise.kube.kinds import resource_for_kind
from kruise.kube.resources import PODS, WORKLOADSPREADS, ResourceRef
from kruise.kube.store import NAMESPACE_INDEX, OWNER_UID_INDEX
from kruise.manager.writers.status import StatusWriter

log = structlog.get_logger(__name__)


class WorkloadSpreadReconciler:
    def __init__(
        self,
        client: Client,
        *,
        spreads: SharedInformer,
        pods: SharedInformer,
        workloads: Mapping[tuple[str, str], SharedInformer],
        nodes: SharedInformer | None = None,
        recorder: EventRecorder | None = None,
        clock: Clock | None = None,
        configuration: Callable[[], Mapping[str, str]] = dict,
        follow: Callable[[ResourceRef], None] | None = None,
    ) -> None:
        """`workloads`: (API group, kind) → informer; it must hold ("apps", "ReplicaSet") to follow a
        Deployment's pods. Built-in target kinds without an informer are not followed. Without
        `nodes`, pods lacking the annotation are not adopted (their nodes cannot be read).
        `configuration`: `data` of ConfigMap kruise-configuration, whose custom-workload whitelist
        lets a WorkloadSpread target other kinds; `follow` is told each such kind's resource once, so
        the caller can watch it (replica changes wake the WorkloadSpread)."""
        self.client = client
        self.status_writer = StatusWriter(client, WORKLOADSPREADS)
        self.configuration = configuration
        self.follow = follow
        self._resources: dict[tuple[str, str, str], ResourceRef] = {}
        self.spreads = spreads
        self.pods = pods
        self.nodes = nodes
        self.workloads = workloads
        self.recorder = recorder
        self.clock = clock or RealClock()

    def _workload(self, ws: Obj) -> tuple[str, Obj | None] | None:
        """(kind, workload or None when missing); None when the target kind is not followed."""
        ref = spec_of(ws).get("targetRef") or {}
        kind = str(ref.get("kind") or "")
        informer = self.workloads.get((group_of(str(ref.get("apiVersion") or "")), kind))
        if informer is None:
            return None
        namespace = ws["metadata"].get("namespace") or ""
        workload = informer.get(f"{namespace}/{ref.get('name') or ''}")
        # list items may come without `kind`; the rules read it (Job parallelism, versions)
        return kind, {**workload, "kind": kind} if workload is not None else None

    def _owned(self, uid: str) -> list[Obj]:
        return [
            p for p in self.pods.by_index(OWNER_UID_INDEX, uid) if (controller_of(p) or {}).get("uid") == uid
        ]

    def _replicasets(self, workload: Obj) -> list[Obj]:
        informer = self.workloads.get(("apps", "ReplicaSet"))
        if informer is None:
            return []
        return informer.by_index(OWNER_UID_INDEX, workload["metadata"].get("uid") or "")

    def _pods_of(self, kind: str, workload: Obj) -> list[Obj]:
        uid = workload["metadata"].get("uid") or ""
        if kind == "Deployment":
            pods: list[Obj] = []
            for rs in self._replicasets(workload):
                if (controller_of(rs) or {}).get("uid") == uid:
                    pods.extend(self._owned(rs["metadata"].get("uid") or ""))
            return pods
        owned = self._owned(uid)
        if kind == "Job":
            selector = spec_of(workload).get("selector")
            try:
                return [p for p in owned if selector_matches(selector, section(p["metadata"], "labels"))]
            except SelectorError:
                return []
        return owned

    async def _resource(self, gvk: GroupVersionKind) -> ResourceRef:
        """The resource serving a whitelisted kind (looked up once); the first lookup also asks
        `follow` to watch it. Raises LookupError while no resource serves it (retried)."""
        key = (gvk.group, gvk.version, gvk.kind)
        ref = self._resources.get(key)
        if ref is None:
            ref = await resource_for_kind(self.client, gvk.group, gvk.version, gvk.kind)
            if ref is None:
                raise LookupError(f"no resource serves {gvk.kind}.{gvk.group}/{gvk.version}")
            self._resources[key] = ref
            if self.follow is not None:
                self.follow(ref)
        return ref

    async def _custom_target(self, ws: Obj, key: str) -> tuple[Obj | None, list[Obj], int] | None:
        """(workload or None when missing, its pods, its replicas) of a whitelisted custom target;
        None when the kind is not whitelisted. The workload and its subResources are read from the
        apiserver (upstream reads unstructured kinds uncached); a pod is the target's when its
        controller chain reaches the target through whitelisted kinds."""
        whitelist = parse_whitelist(self.configuration())
        ref = spec_of(ws).get("targetRef") or {}
        group, kind = group_of(str(ref.get("apiVersion") or "")), str(ref.get("kind") or "")
        entry = next((w for w in whitelist.workloads if (w.gvk.group, w.gvk.kind) == (group, kind)), None)
        if entry is None:
            log.info("workloadspread target kind not followed", workloadspread=key)
            return None
        namespace = ws["metadata"].get("namespace") or ""
        target_ref = await self._resource(GroupVersionKind(group, entry.gvk.version, kind))
        try:
            workload: Obj | None = await self.client.get(target_ref, str(ref.get("name") or ""), namespace)
        except NotFound:
            workload = None
        if workload is None or workload["metadata"].get("deletionTimestamp"):
            return workload, [], workload_replicas(ws, workload, whitelist)
        known: dict[tuple[str, str, str], Obj] = {(group, kind, workload["metadata"]["name"]): workload}
        for sub in entry.sub_resources:
            if (sub.group, sub.kind) in self.workloads:
                continue
            sub_ref = await self._resource(sub)
            for item in (await self.client.list(sub_ref, namespace)).get("items") or []:
                known[(sub.group, sub.kind, item["metadata"]["name"])] = item

        def lookup(owner: Mapping[str, Any], ns: str) -> Mapping[str, Any] | None:
            owner_group = group_of(str(owner.get("apiVersion") or ""))
            informer = self.workloads.get((owner_group, str(owner.get("kind") or "")))
            if informer is not None:
                return informer.get(f"{ns}/{owner.get('name') or ''}")
            return known.get((owner_group, str(owner.get("kind") or ""), str(owner.get("name") or "")))

        extra = whitelist.owner_kinds()
        pods: list[Obj] = []
        for pod in self.pods.by_index(NAMESPACE_INDEX, namespace):
            try:
                if references(ref, controller_of(pod), namespace, lookup, extra):
                    pods.append(pod)
            except OwnerNotFound:
                continue
        return workload, pods, workload_replicas(ws, workload, whitelist)

    async def reconcile(self, key: str) -> Result | None:
        ws = self.spreads.get(key)
        if ws is None or ws["metadata"].get("deletionTimestamp"):
            return None
        target = spec_of(ws).get("targetRef")
        if not target:
            return None
        if is_builtin_target(target):
            found = self._workload(ws)
            if found is None:
                log.info("workloadspread target kind not followed", workloadspread=key)
                return None
            kind, workload = found
            pods = self._pods_of(kind, workload) if workload is not None else []
            replicas = workload_replicas(ws, workload)
        else:
            # a whitelist that does not parse raises WhitelistError: retried, as upstream returns it
            custom = await self._custom_target(ws, key)
            if custom is None:
                return None
            kind = str(target.get("kind") or "")
            workload, pods, replicas = custom
        try:
            pods = [p for p in pods if pod_selected(ws, p)]
        except SelectorError as exc:
            raise TerminalError(f"WorkloadSpread {key}: spec.targetFilter.selector: {exc}") from exc
        grouping = adoption.group_and_adopt(ws, pods, replicas, self._node)
        await self._adopt(ws, grouping)
        versioned, by_subset = grouping.versioned, grouping.by_subset
        if kind in deletioncost.COST_KINDS:
            latest: str | None = ""  # upstream: no workload, no version; every pod ranks as old
            if workload is not None:
                latest = deletioncost.latest_version(workload, self._replicasets(workload))
            if latest is None:
                log.info("workloadspread waits for the workload's newest version", workloadspread=key)
                return Result(requeue=True)
            for version, pods_by_subset in versioned.items():
                old = version != latest
                for pod, cost in deletioncost.deletion_costs(ws, pods_by_subset, replicas, old_version=old):
                    await self._patch_cost(ws, pod, cost)
        notes = status.Notes()
        desired = status.next_status(ws, versioned, by_subset, replicas, self.clock.wall(), notes)
        for reason, message in notes.events:
            if self.recorder is not None:
                self.recorder.event(dict(ws), "Warning", reason, message)
        for reason, message in notes.normal_events:
            if self.recorder is not None:
                self.recorder.event(dict(ws), "Normal", reason, message)
        if desired is not None:
            # the pod webhook writes this status too: a conflict retries the pass on a fresher cache
            if (await self.status_writer.write(ws, desired, conditional=True)).gone:
                return None
            for subset_name, pod in notes.failed_to_schedule:
                await self._delete_unschedulable(ws, subset_name, pod)
        if notes.requeue_after is not None:
            return Result(requeue_after=max(notes.requeue_after.total_seconds(), 0.0))
        return None

    def _node(self, name: str) -> Obj | None:
        return self.nodes.get(name) if self.nodes is not None else None

    async def _adopt(self, ws: Obj, grouping: adoption.Grouping) -> None:
        """Write each adoption onto its pod (an error fails the pass, as upstream, so it is retried)
        and carry on with the patched pods."""
        patched: dict[str, Obj] = {}
        for adopted in grouping.adoptions:
            meta = adopted.pod["metadata"]
            log.info(
                "workloadspread adopts existing pod",
                workloadspread=f"{ws['metadata'].get('namespace')}/{ws['metadata']['name']}",
                pod=meta["name"],
                subset=adopted.subset,
            )
            patched[meta["name"]] = await self.client.patch(
                PODS, meta["name"], adopted.patch, meta.get("namespace"), patch_type=PatchType.STRATEGIC
            )
        if patched:
            grouping.replace(patched)

    async def _delete_unschedulable(self, ws: Obj, subset_name: str, pod: Obj) -> None:
        """Adaptive: a pod stuck unschedulable goes so its workload re-creates it elsewhere."""
        meta = pod["metadata"]
        try:
            await self.client.delete(PODS, meta["name"], meta.get("namespace"))
        except NotFound:
            return
        except Exception:
            if self.recorder is not None:
                spread = f"{ws['metadata'].get('namespace')}/{ws['metadata']['name']}"
                message = (
                    f"Failed to delete unschedulabe Pod {meta.get('namespace')}/{meta['name']} "
                    f"in Subset {subset_name} of WorkloadSpread {spread}"
                )
                self.recorder.event(dict(ws), "Warning", "DeletePodFailed", message)
            raise
        log.info("workloadspread deleted unschedulable pod", pod=meta["name"], subset=subset_name)

    async def _patch_cost(self, ws: Obj, pod: Obj, cost: int) -> None:
        patch = deletioncost.cost_patch(pod, cost)
        if patch is None:
            return
        meta = pod["metadata"]
        try:
            await self.client.patch(PODS, meta["name"], patch, meta.get("namespace"))
        except NotFound:
            return
        except Exception:
            if self.recorder is not None:
                spread = f"{ws['metadata'].get('namespace')}/{ws['metadata']['name']}"
                message = (
                    f"WorkloadSpread {spread} failed to patch deletion-cost annotation to {cost} "
                    f"for Pod {meta.get('namespace')}/{meta['name']}"
                )
                self.recorder.event(dict(ws), "Warning", "PatchPodDeletionCostFailed", message)
            raise
