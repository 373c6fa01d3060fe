"""Helpers for the simulator integration tests: the ``Cluster`` handle and event-driven waits.

Waits never sleep: they list, then watch from the list's resourceVersion until the condition
holds, under a timeout. Imported by module name (test folders are not packages), hence the unique name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kruise.sandbox.cri.client import CriClient
from kruise.sandbox.cri.schema import messages
from kruise.sandbox.simulator import Simulator
from kruise.sandbox.simulator.client import ApiError, Client, resource_path

Obj = dict[str, Any]
SPEED = 100.0
WAIT = 20.0


@dataclass
class Cluster:
    simulator: Simulator
    client: Client
    cri_dir: Path

    async def create(self, obj: Obj, plural: str = "pods", group_version: str = "v1") -> Obj:
        namespace = obj["metadata"].get("namespace", "default")
        return await self.client.create(resource_path(group_version, plural, namespace), obj)

    async def wait_for(
        self,
        plural: str,
        name: str,
        predicate: Callable[[Obj], bool],
        *,
        namespace: str | None = "default",
        group_version: str = "v1",
        timeout: float = WAIT,
    ) -> Obj:
        """The object once ``predicate`` holds for it (watched, not polled)."""
        path = resource_path(group_version, plural, namespace)
        latest: Obj | None = None
        async with asyncio.timeout(timeout):
            while True:
                listing = await self.client.list(path, fieldSelector=f"metadata.name={name}")
                items = listing.get("items") or []
                latest = items[0] if items else None
                if latest is not None and predicate(latest):
                    return latest
                version = listing["metadata"]["resourceVersion"]
                try:
                    async for event in self.client.watch(
                        path, version, fieldSelector=f"metadata.name={name}"
                    ):
                        if event["type"] in ("ADDED", "MODIFIED"):
                            latest = event["object"]
                            if predicate(latest):
                                return latest
                except ApiError as error:
                    if not error.gone:
                        raise

    async def wait_list(
        self,
        plural: str,
        predicate: Callable[[list[Obj]], bool],
        *,
        namespace: str | None = "default",
        group_version: str = "v1",
        label_selector: str | None = None,
        timeout: float = WAIT,
    ) -> list[Obj]:
        """The collection once ``predicate`` holds for all its items."""
        path = resource_path(group_version, plural, namespace)
        async with asyncio.timeout(timeout):
            while True:
                listing = await self.client.list(path, labelSelector=label_selector)
                items = {(i["metadata"].get("namespace"), i["metadata"]["name"]): i for i in listing["items"]}
                if predicate(list(items.values())):
                    return list(items.values())
                try:
                    async for event in self.client.watch(
                        path, listing["metadata"]["resourceVersion"], labelSelector=label_selector
                    ):
                        obj = event.get("object") or {}
                        if event["type"] == "BOOKMARK":
                            continue
                        key = (obj["metadata"].get("namespace"), obj["metadata"]["name"])
                        if event["type"] == "DELETED":
                            items.pop(key, None)
                        else:
                            items[key] = obj
                        if predicate(list(items.values())):
                            return list(items.values())
                except ApiError as error:
                    if not error.gone:
                        raise

    async def events_for(self, name: str, namespace: str = "default") -> list[Obj]:
        listing = await self.client.list(resource_path("v1", "events", namespace))
        return [e for e in listing["items"] if e["involvedObject"].get("name") == name]

    async def wait_event(self, name: str, reason: str, namespace: str = "default") -> Obj:
        events = await self.wait_list(
            "events",
            lambda items: any(
                e["involvedObject"].get("name") == name and e["reason"] == reason for e in items
            ),
            namespace=namespace,
        )
        return next(e for e in events if e["involvedObject"].get("name") == name and e["reason"] == reason)


def pod_manifest(name: str, *containers: Obj, **spec: Any) -> Obj:
    metadata = {"name": name, "namespace": "default"}
    if "annotations" in spec:
        metadata["annotations"] = spec.pop("annotations")
    if "labels" in spec:
        metadata["labels"] = spec.pop("labels")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"containers": list(containers) or [{"name": "main", "image": "nginx:1.25"}], **spec},
    }


def condition(obj: Obj, kind: str) -> Obj | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def is_ready(pod: Obj) -> bool:
    ready = condition(pod, "Ready")
    return ready is not None and ready["status"] == "True"


def container(pod: Obj, name: str) -> Obj:
    return next(c for c in (pod.get("status") or {}).get("containerStatuses") or [] if c["name"] == name)


async def trap_armed(cri: CriClient, container_id: str, deadline: float = 30.0) -> None:
    """Until a process container's script has set its SIGTERM trap (it touches `armed` in its working
    directory right after): a container reported running may not have run its first line yet, and a
    SIGTERM before the trap kills the shell with 143 (seen on a loaded machine)."""
    async with asyncio.timeout(deadline):
        while True:
            answer = await cri.ExecSync(
                messages.ExecSyncRequest(
                    container_id=container_id, cmd=["sh", "-c", "test -f armed"], timeout=5
                )
            )
            if answer.exit_code == 0:
                return
            await asyncio.sleep(0.05)
