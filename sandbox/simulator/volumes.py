"""Dynamic volumes: the external provisioner, the PV binder, the external resizer and the kubelet's
file-system expansion, for claims of StorageClasses whose ``provisioner`` is ``PROVISIONER``.

No PersistentVolume objects exist in the sandbox; a claim is provisioned and bound in place: it
gets ``spec.volumeName`` ``pvc-<uid>`` and ``status`` ``phase: Bound``, its access modes and a
capacity equal to its request. Claims of other classes (or of none) are left alone, as a real
provisioner leaves claims it does not serve — a test may then play the provisioner itself.
``volumeBindingMode: WaitForFirstConsumer`` waits for a scheduled pod that mounts the claim.

Expansion follows Kubernetes 1.33 (RecoverVolumeExpansionFailure on): when the request exceeds
``status.capacity`` the resizer records ``allocatedResources.storage`` (the size being made),
``allocatedResourceStatuses.storage: ControllerResizeInProgress`` and the ``Resizing`` condition;
after ``Timing.volume_resize_seconds`` the controller side is done and the claim waits for the
node: ``NodeResizePending`` with the ``FileSystemResizePending`` condition. The kubelet of a
running pod that mounts the claim then grows the file system (``NodeResizeInProgress`` for
``Timing.filesystem_resize_seconds``) and finishes: ``status.capacity`` becomes the allocated size,
the conditions and the resize status go, ``allocatedResources`` stays. A claim no running pod
mounts stays ``FileSystemResizePending`` until one does (online expansion needs a mount).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable

from kruise.sandbox.quantity import amount
from kruise.sandbox.simulator.client import Client, Obj, resource_path
from kruise.sandbox.simulator.events import now_rfc3339
from kruise.sandbox.simulator.informer import Informer, key_of
from kruise.sandbox.simulator.owners import remember
from kruise.sandbox.simulator.timing import Timing
from kruise.sandbox.simulator.workqueue import WorkQueue

PROVISIONER = "sandbox.kruise.io/volumes"
CLAIMS = "persistentvolumeclaims"
CONTROLLER_RESIZING = "ControllerResizeInProgress"
NODE_PENDING = "NodeResizePending"
NODE_RESIZING = "NodeResizeInProgress"
RESIZE_CONDITIONS = ("Resizing", "FileSystemResizePending")
NODE_PENDING_MESSAGE = "Waiting for user to (re-)start a pod to finish file system resize of volume on node."


def claims_mounted_by(pod: Obj) -> list[str]:
    """The ``namespace/name`` keys of the claims a pod mounts."""
    namespace = pod["metadata"].get("namespace", "")
    return [
        f"{namespace}/{v['persistentVolumeClaim']['claimName']}"
        for v in (pod.get("spec") or {}).get("volumes") or []
        if (v.get("persistentVolumeClaim") or {}).get("claimName")
    ]


def storage_of(resources: Obj | None) -> object:
    return (resources or {}).get("storage")


def bigger(a: object, b: object) -> bool:
    """Quantity a > b, a missing quantity being zero."""
    return (amount(a) or 0) > (amount(b) or 0)


class VolumeController:
    """One work queue of claim keys; each pass moves a claim one step through binding or resizing."""

    def __init__(self, client: Client, claims: Informer, classes: Informer, pods: Informer, timing: Timing):
        self.client = client
        self.claims = claims
        self.classes = classes
        self.pods = pods
        self.timing = timing
        self.informers = [claims, classes]
        self.queue = WorkQueue("volumes", self._reconcile, workers=2)
        self._due: dict[str, float] = {}  # claim key -> when its current resize step is done
        claims.add_handler(lambda kind, obj: self.queue.add(key_of(obj)))
        classes.add_handler(lambda kind, obj: self._requeue_all())
        pods.add_handler(self._pod_changed)

    def _requeue_all(self) -> None:
        for key in list(self.claims.store):
            self.queue.add(key)

    def _pod_changed(self, kind: str, pod: Obj) -> None:
        for key in claims_mounted_by(pod):
            self.queue.add(key)

    def start(self) -> None:
        self.claims.start()
        self.classes.start()
        self.queue.start()

    async def stop(self) -> None:
        await self.queue.stop()
        await self.claims.stop()
        await self.classes.stop()

    def _consumers(self, key: str, running: bool) -> list[Obj]:
        """Pods mounting the claim: scheduled ones, or (``running``) ones running on their node."""
        return [
            pod
            for pod in self.pods.store.values()
            if key in claims_mounted_by(pod)
            and (pod.get("spec") or {}).get("nodeName")
            and not pod["metadata"].get("deletionTimestamp")
            and (not running or (pod.get("status") or {}).get("phase") == "Running")
        ]

    async def _reconcile(self, key: str) -> float | None:
        claim = self.claims.get(key)
        if claim is None or claim["metadata"].get("deletionTimestamp"):
            self._due.pop(key, None)
            return None
        spec = claim.get("spec") or {}
        sc = self.classes.get(spec.get("storageClassName") or "")
        if sc is None or sc.get("provisioner") != PROVISIONER:
            return None
        if (claim.get("status") or {}).get("phase") != "Bound":
            if sc.get("volumeBindingMode") == "WaitForFirstConsumer" and not self._consumers(key, False):
                return None
            await self._bind(claim)
            return None
        return await self._resize_step(key, claim)

    async def _bind(self, claim: Obj) -> None:
        namespace, name = claim["metadata"]["namespace"], claim["metadata"]["name"]
        if not (claim.get("spec") or {}).get("volumeName"):
            claim = copy.deepcopy(claim)
            claim["spec"]["volumeName"] = f"pvc-{claim['metadata']['uid']}"
            claim = await self.client.replace(resource_path("v1", CLAIMS, namespace, name), claim)
            remember(self.claims, claim)
        request = storage_of(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
        status = {
            "phase": "Bound",
            "accessModes": list(claim["spec"].get("accessModes") or []),
            "capacity": {"storage": request} if request is not None else {},
        }
        await self._write_status(claim, lambda s: (s.clear(), s.update(status)))

    async def _resize_step(self, key: str, claim: Obj) -> float | None:
        status = claim.get("status") or {}
        requested = storage_of(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
        allocated = storage_of(status.get("allocatedResources"))
        step = storage_of(status.get("allocatedResourceStatuses"))
        wait = self._due.get(key, 0.0) - time.monotonic()
        if bigger(requested, allocated or storage_of(status.get("capacity"))) and step in (
            None,
            NODE_PENDING,
        ):
            self._due[key] = time.monotonic() + self.timing.scaled(self.timing.volume_resize_seconds)
            await self._write_status(claim, lambda s: self._controller_resizing(s, requested))
            return self.timing.scaled(self.timing.volume_resize_seconds)
        if step in (CONTROLLER_RESIZING, NODE_RESIZING) and wait > 0:
            return wait
        if step == CONTROLLER_RESIZING:
            await self._write_status(claim, self._node_pending)
            return None
        if step == NODE_PENDING and self._consumers(key, True):
            self._due[key] = time.monotonic() + self.timing.scaled(self.timing.filesystem_resize_seconds)
            await self._write_status(
                claim, lambda s: s["allocatedResourceStatuses"].update(storage=NODE_RESIZING)
            )
            return self.timing.scaled(self.timing.filesystem_resize_seconds)
        if step == NODE_RESIZING:
            self._due.pop(key, None)
            await self._write_status(claim, self._finished)
        return None

    @staticmethod
    def _controller_resizing(status: Obj, requested: object) -> None:
        status.setdefault("allocatedResources", {})["storage"] = requested
        status.setdefault("allocatedResourceStatuses", {})["storage"] = CONTROLLER_RESIZING
        set_condition(status, "Resizing", "")

    @staticmethod
    def _node_pending(status: Obj) -> None:
        status["allocatedResourceStatuses"]["storage"] = NODE_PENDING
        drop_conditions(status, ("Resizing",))
        set_condition(status, "FileSystemResizePending", NODE_PENDING_MESSAGE)

    @staticmethod
    def _node_resizing(status: Obj) -> None:
        status["allocatedResourceStatuses"]["storage"] = NODE_RESIZING

    @staticmethod
    def _finished(status: Obj) -> None:
        status.setdefault("capacity", {})["storage"] = status["allocatedResources"]["storage"]
        statuses = status.get("allocatedResourceStatuses") or {}
        statuses.pop("storage", None)
        if not statuses:
            status.pop("allocatedResourceStatuses", None)
        drop_conditions(status, RESIZE_CONDITIONS)

    async def _write_status(self, claim: Obj, change: Callable[[Obj], object]) -> None:
        new = copy.deepcopy(claim)
        change(new.setdefault("status", {}))
        namespace, name = claim["metadata"]["namespace"], claim["metadata"]["name"]
        written = await self.client.replace(resource_path("v1", CLAIMS, namespace, name, "status"), new)
        remember(self.claims, written)


def set_condition(status: Obj, kind: str, message: str) -> None:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != kind]
    condition = {"type": kind, "status": "True", "lastTransitionTime": now_rfc3339()}
    if message:
        condition["message"] = message
    status["conditions"] = [*conditions, condition]


def drop_conditions(status: Obj, kinds: tuple[str, ...]) -> None:
    kept = [c for c in status.get("conditions") or [] if c.get("type") not in kinds]
    if kept:
        status["conditions"] = kept
    else:
        status.pop("conditions", None)
