"""Read and write a UnitedDeployment's child workloads (upstream's SubsetControl and its adapters).

A child is a StatefulSet, Advanced StatefulSet, CloneSet or Deployment; which fields each kind
keeps its replicas, partition and pods in is decided in ``kruise.control.uniteddeployment.subsets``.
What is left per kind is I/O, and it lives here so the pass in ``reconciler.py`` reads as upstream's
order of steps: finding a child's pods (a Deployment's through its ReplicaSets), creating and
deleting children, updating them, and the native StatefulSet's post-update (deleting pods a rolling
update would wait on forever). Errors are collected per step and raised together, as upstream
reports a provision or update failure once for the whole pass.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from kruise.api.controllerref import controlled_by
from kruise.control.uniteddeployment.subsets import (
    KIND_DEPLOYMENT,
    KIND_STATEFULSET,
    Child,
    read_child,
    stuck_pods,
)
from kruise.kube.client import Client
from kruise.kube.errors import NotFound
from kruise.kube.events import EventRecorder
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import PODS, ResourceRef
from kruise.kube.store import NAMESPACE_INDEX, OWNER_UID_INDEX


def owned_in_namespace(informer: SharedInformer, owner: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What ``owner`` controls among the objects of its namespace."""
    meta = owner["metadata"]
    return [o for o in informer.by_index(NAMESPACE_INDEX, meta["namespace"]) if controlled_by(o, meta["uid"])]


def _controlled(informer: SharedInformer, owner: Mapping[str, Any]) -> list[dict[str, Any]]:
    uid = owner["metadata"]["uid"]
    return [o for o in informer.by_index(OWNER_UID_INDEX, uid) if controlled_by(o, uid)]


class ChildWorkloads:
    def __init__(
        self,
        client: Client,
        recorder: EventRecorder,
        children: Mapping[str, tuple[ResourceRef, SharedInformer]],
        pods: SharedInformer,
        replicasets: SharedInformer,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.children = children
        """Child kind (subsets.KIND_*) -> its resource and informer."""
        self.pods = pods
        self.replicasets = replicasets
        """ReplicaSets, to find a Deployment child's pods."""

    def _child_pods(self, kind: str, obj: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The child's pods: its own, or for a Deployment those of its ReplicaSets (as upstream)."""
        if kind == KIND_DEPLOYMENT:
            sets = _controlled(self.replicasets, obj)
            return [pod for rs in sets for pod in _controlled(self.pods, rs)]
        return _controlled(self.pods, obj)

    def read(self, kind: str, ud_obj: Mapping[str, Any], revision: str) -> list[Child]:
        _, informer = self.children[kind]
        return [
            read_child(kind, obj, self._child_pods(kind, obj), revision)
            for obj in owned_in_namespace(informer, ud_obj)
        ]

    async def delete(self, kind: str, obj: Mapping[str, Any]) -> None:
        ref, _ = self.children[kind]
        meta = obj["metadata"]
        with contextlib.suppress(NotFound):
            await self.client.delete(ref, meta["name"], meta["namespace"], propagation_policy="Background")

    async def provision(self, kind: str, ud_obj: Mapping[str, Any], plan: Any, bound: Any) -> bool:
        """Create missing children, delete removed subsets' and other kinds' children."""
        ref, _ = self.children[kind]
        errors: list[str] = []
        created = 0
        for write in plan.creates:
            try:
                await self.client.create(ref, write.body)
                created += 1
            except Exception as exc:
                errors.append(f"fail to create Subset ({kind}) {write.subset}: {exc}")
                break
        if plan.creates and not errors:
            bound.info("Created subsets", kind=kind, subsets=[w.subset for w in plan.creates])
            self.recorder.event(
                dict(ud_obj), "Normal", "SuccessfulUpdateSubset", f"Create {created} Subset ({kind})"
            )
        delete_errors: list[str] = []
        for child in plan.deletes:
            try:
                await self.delete(kind, child.obj)
            except Exception as exc:
                meta = child.obj["metadata"]
                delete_errors.append(
                    f"fail to delete Subset ({kind}) {meta['namespace']}/{child.name} "
                    f"for {child.subset_name}: {exc}"
                )
        if plan.deletes and not delete_errors:
            bound.info("Deleted subsets", kind=kind, subsets=[c.subset_name for c in plan.deletes])
            self.recorder.event(
                dict(ud_obj),
                "Normal",
                "SuccessfulUpdateSubset",
                f"Delete {len(plan.deletes)} Subset ({kind})",
            )
        errors.extend(delete_errors)
        cleaned = False
        for other in self.children:
            if other == kind:
                continue
            for obj in owned_in_namespace(self.children[other][1], ud_obj):
                cleaned = True
                try:
                    await self.delete(other, obj)
                except Exception as exc:
                    errors.append(
                        f"fail to delete Subset {obj['metadata']['name']} of other type {other}: {exc}"
                    )
        if errors:
            raise RuntimeError(f"fail to manage Subset provision: {'; '.join(errors)}")
        return bool(plan.creates or plan.deletes or cleaned)

    async def update(self, kind: str, ud_obj: Mapping[str, Any], plan: Any, bound: Any) -> None:
        ref, _ = self.children[kind]
        errors: list[str] = []
        for write in plan.updates:
            bound.info(
                "UnitedDeployment needed to update Subset",
                subset=write.body["metadata"].get("name"),
                reason=write.reason,
                replicas=write.body["spec"].get("replicas"),
            )
            try:
                written = await self.client.update(ref, write.body)
                if kind == KIND_STATEFULSET:
                    await self._delete_stuck_pods(written, write.revision, write.partition, bound)
            except Exception as exc:
                name = write.body["metadata"].get("name")
                self.recorder.event(
                    dict(ud_obj),
                    "Warning",
                    "FailedUpdateSubset",
                    f"Error updating PodSet ({kind}) {name} when updating: {exc}",
                )
                errors.append(str(exc))
        if errors:
            raise RuntimeError("; ".join(errors))

    async def _delete_stuck_pods(
        self, child: Mapping[str, Any], revision: str, partition: int, bound: Any
    ) -> None:
        """Upstream's native StatefulSet PostUpdate: delete pods a rolling update would wait on forever."""
        for pod in stuck_pods(child, self._child_pods(KIND_STATEFULSET, child), revision, partition):
            meta = pod["metadata"]
            bound.info("Deleted pod at stuck state", pod=f"{meta['namespace']}/{meta['name']}")
            with contextlib.suppress(NotFound):
                await self.client.delete(
                    PODS, meta["name"], meta["namespace"], propagation_policy="Background"
                )
