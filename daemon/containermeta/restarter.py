"""Stops the containers the containermeta reporter found running with stale env-from-metadata values.

Keyed by container ID (``containerd://<id>``), not by pod: the reporter may ask again on every pod event
while the kill is pending, and each ask backs off further (3 s, doubling to 10 minutes), so a container
that keeps failing to stop does not hammer the runtime. Only a running container is stopped, so an ask
that arrives after the container already exited or was replaced does nothing. The kubelet starts the
container again, now reading the pod's current labels/annotations into its env.

The stop is the kubelet's ``KillContainer`` as upstream's daemon runs it without a pod at hand: the
grace period and the preStop hook come from the annotations the kubelet put on the runtime container
(``io.kubernetes.pod.deletionGracePeriod`` / ``io.kubernetes.pod.terminationGracePeriod``,
``io.kubernetes.container.preStopHandler``), at least 2 s.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import grpc
import structlog

from kruise.daemon.cri import api_pb2 as cri
from kruise.daemon.cri.client import RuntimeClient
from kruise.kube.controller import Controller
from kruise.kube.ratelimit import ItemExponentialFailureRateLimiter

log = structlog.get_logger("kruise.daemon.containermeta")

MIN_GRACE_SECONDS = 2
DELETION_GRACE_ANNOTATION = "io.kubernetes.pod.deletionGracePeriod"
TERMINATION_GRACE_ANNOTATION = "io.kubernetes.pod.terminationGracePeriod"
PRESTOP_ANNOTATION = "io.kubernetes.container.preStopHandler"


def _int(annotations: Mapping[str, str], key: str) -> int | None:
    try:
        return int(annotations[key])
    except (KeyError, ValueError):
        return None


def grace_seconds(annotations: Mapping[str, str]) -> int:
    """The kubelet's grace period for a container it has no pod for (at least 2 s)."""
    grace = _int(annotations, DELETION_GRACE_ANNOTATION)
    if grace is None:
        grace = _int(annotations, TERMINATION_GRACE_ANNOTATION)
    return max(MIN_GRACE_SECONDS if grace is None else grace, MIN_GRACE_SECONDS)


def prestop_command(annotations: Mapping[str, str]) -> list[str] | None:
    """The container's preStop exec command, if the kubelet recorded one."""
    try:
        handler = json.loads(annotations.get(PRESTOP_ANNOTATION) or "null")
    except json.JSONDecodeError:
        return None
    command = ((handler or {}).get("exec") or {}).get("command") if isinstance(handler, dict) else None
    return [str(part) for part in command] if isinstance(command, list) and command else None


class Restarter:
    def __init__(self, runtime: RuntimeClient, *, workers: int = 10) -> None:
        self.runtime = runtime
        self.controller = Controller(
            "runtime_container_meta_restarter",
            self.reconcile,
            workers=workers,
            rate_limiter=ItemExponentialFailureRateLimiter(3.0, 600.0),
        )

    def request(self, container_id: str) -> None:
        """Ask for the container to be stopped, after its backoff (the first ask waits 3 s)."""
        self.controller.queue.add_rate_limited(container_id)

    def start(self) -> None:
        self.controller.start()

    async def stop(self, timeout: float | None = 30.0) -> None:
        await self.controller.stop(timeout=timeout)

    async def reconcile(self, key: str) -> None:
        runtime_id = key.partition("://")[2] or key
        found = await self.runtime.list_containers(container_id=runtime_id)
        if not found or found[0].state != cri.CONTAINER_RUNNING:
            return  # gone or already stopped: the kubelet has (or will have) a new one
        annotations = dict(found[0].annotations)
        grace = grace_seconds(annotations)
        command = prestop_command(annotations)
        try:
            if command:
                await self.runtime.exec_sync(found[0].id, command, grace)
        except grpc.aio.AioRpcError as exc:
            log.warning("preStop hook failed", container=key, error=exc.details() or exc.code().name)
        log.info("Stopping container by container meta restarter", container=key, grace=grace)
        await self.runtime.stop_container(found[0].id, grace)
