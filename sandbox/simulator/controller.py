"""The skeleton the built-in controllers share (Job, ReplicaSet, Deployment).

Each keeps one work queue of owner keys, fed by the owners' informer and by the controller
references of the objects they own (a pod's owning ReplicaSet, a ReplicaSet's Deployment), and
reconciles an owner only while it is not being deleted — as kube-controller-manager's
controllers do. Subclasses implement ``sync(owner)`` with ``apiVersion``/``kind`` filled in
(informer items may lack them) and return when to look again (seconds) or None.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from kruise.sandbox.simulator.client import Client, Obj
from kruise.sandbox.simulator.events import Recorder
from kruise.sandbox.simulator.informer import Informer, key_of
from kruise.sandbox.simulator.owners import controller_of
from kruise.sandbox.simulator.workqueue import WorkQueue


class OwnerController(ABC):
    """Reconciles the objects of ``owners`` (``api_version``/``kind``) and reacts to ``owned``."""

    api_version = ""
    kind = ""
    name = ""

    def __init__(self, client: Client, owners: Informer, owned: Informer) -> None:
        self.client = client
        self.owners = owners
        self.owned = owned
        self.recorder = Recorder(client, self.name)
        self.queue = WorkQueue(self.name, self._reconcile, workers=4)
        self._group = self.api_version.rpartition("/")[0]
        owners.add_handler(lambda kind, obj: self.queue.add(key_of(obj)))
        owned.add_handler(self._on_owned)

    def _on_owned(self, kind: str, obj: Obj) -> None:
        ref = controller_of(obj)
        if (
            ref
            and ref.get("kind") == self.kind
            and str(ref.get("apiVersion", "")).rpartition("/")[0] == self._group
        ):
            self.queue.add(f"{obj['metadata']['namespace']}/{ref['name']}")

    def start(self) -> None:
        self.queue.start()

    async def stop(self) -> None:
        await self.queue.stop()
        await self.recorder.drain()

    async def _reconcile(self, key: str) -> float | None:
        owner = self.owners.get(key)
        if owner is None or owner["metadata"].get("deletionTimestamp"):
            return None
        return await self.sync({**owner, "apiVersion": self.api_version, "kind": self.kind})

    @abstractmethod
    async def sync(self, owner: Obj) -> float | None:
        """Make the world match ``owner``; return seconds until the next look, or None."""
