"""core/v1 Events as the kubelet, scheduler and controllers record them.

Events are best effort in Kubernetes too: a failed write is logged and dropped, never retried
into the caller's path. Each event is written in a background task so reconcile loops never
wait on them; ``drain()`` lets a clean shutdown finish in-flight writes.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import UTC, datetime
from typing import Any

from kruise.sandbox.simulator.client import Client, Obj, resource_path

log = logging.getLogger(__name__)


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_micro() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Recorder:
    """Writes Events for one component (``source.component``) on one host (kubelets only)."""

    def __init__(self, client: Client, component: str, host: str = "") -> None:
        self.client = client
        self.component = component
        self.host = host
        self._tasks: set[asyncio.Task[None]] = set()

    def event(self, obj: Obj, kind: str, reason: str, message: str, *, field_path: str = "") -> None:
        """Record ``reason``/``message`` (type Normal or Warning) about ``obj``."""
        body = self.build(obj, kind, reason, message, field_path=field_path)
        task = asyncio.create_task(self._write(body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def build(self, obj: Obj, kind: str, reason: str, message: str, *, field_path: str = "") -> Obj:
        meta = obj.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        involved: dict[str, Any] = {
            "kind": obj.get("kind") or "Pod",
            "apiVersion": obj.get("apiVersion") or "v1",
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name", ""),
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        }
        if field_path:
            involved["fieldPath"] = field_path
        if not involved["namespace"]:
            del involved["namespace"]
        stamp = now_rfc3339()
        source = {"component": self.component}
        if self.host:
            source["host"] = self.host
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta.get('name', 'unknown')}.{secrets.token_hex(8)}",
                "namespace": namespace,
            },
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": kind,
            "eventTime": None,
            "reportingComponent": self.component,
            "reportingInstance": self.host or self.component,
        }

    async def _write(self, body: Obj) -> None:
        namespace = body["metadata"]["namespace"]
        try:
            await self.client.create(resource_path("v1", "events", namespace), body)
        except Exception as error:  # events are best effort
            log.debug("event %s dropped: %s", body["reason"], error)

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
