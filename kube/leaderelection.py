"""Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics.

Only one kruise-manager replica may run controllers. Candidates poll the Lease every
`retry_period` (jittered by 1.2); a candidate takes it when it is unheld, already ours, or has not
changed for `leaseDurationSeconds` as measured on OUR clock since we last saw it change (never by
comparing the renewTime inside it, so clock skew between nodes cannot steal a lease). The leader
renews every `retry_period`; if it cannot renew within `renew_deadline`, it stops leading and
`run` raises LeadershipLost — the process should exit so a fresh one becomes a clean standby. On a
clean shutdown the Lease is released (empty holder, 1 s duration) so the standby takes over at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import os
import random
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from kruise.kube import metrics
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock, rfc3339_micro
from kruise.kube.errors import ApiError, NotFound
from kruise.kube.resources import LEASES

log = structlog.get_logger("kruise.kube.leaderelection")

JITTER_FACTOR = 1.2


def default_identity() -> str:
    """`hostname_uuid`, as controller-runtime builds it: unique even for two processes on one host.

    The host name is the container's ``HOSTNAME`` (the pod's name, set by every container runtime)
    when present, else the machine's: the same value in a real pod, and the pod's name where pods
    run as plain processes sharing one machine's host name (the sandbox)."""
    return f"{os.environ.get('HOSTNAME') or socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaderElectionConfig:
    namespace: str = "kruise-system"
    name: str = "kruise-manager"
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("leaseDuration: must be greater than renewDeadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(
                f"renewDeadline: must be greater than retryPeriod*JitterFactor ({JITTER_FACTOR})"
            )
        if self.retry_period <= 0:
            raise ValueError("retryPeriod: must be greater than zero")
        if not self.identity:
            raise ValueError("identity: Required value: the leader election identity must not be empty")


class LeadershipLost(Exception):
    """The lease could not be renewed within renewDeadline: stop everything and exit."""


Callback = Callable[..., Awaitable[Any] | Any]


class LeaderElector:
    """Campaigns for the lease, runs `on_started_leading` while leading, renews until told to stop."""

    def __init__(
        self,
        client: Client,
        config: LeaderElectionConfig | None = None,
        *,
        on_started_leading: Callback | None = None,
        on_stopped_leading: Callback | None = None,
        on_new_leader: Callback | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self.config = config or LeaderElectionConfig()
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.clock = clock or RealClock()
        self._lease: dict[str, Any] | None = None
        self._observed_spec: dict[str, Any] | None = None
        self._observed_at = 0.0
        self._leading = False
        self._reported_leader = ""
        self._work: asyncio.Task[Any] | None = None
        self.started_leading = asyncio.Event()
        self._callbacks: set[asyncio.Future[Any]] = set()
        self._log = log.bind(
            lease=f"{self.config.namespace}/{self.config.name}", identity=self.config.identity
        )

    # ---- state -------------------------------------------------------------------------------

    @property
    def identity(self) -> str:
        return self.config.identity

    def is_leader(self) -> bool:
        return self._leading

    @property
    def observed_holder(self) -> str:
        return (self._observed_spec or {}).get("holderIdentity") or ""

    # ---- main loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Acquire, lead, renew. Raises LeadershipLost on a failed renew; cancel to step down cleanly."""
        try:
            await self._acquire()
            await self._start_leading()
            await self._renew_loop()
        except asyncio.CancelledError:
            if self._leading:
                await asyncio.shield(self._step_down(release=self.config.release_on_cancel))
            raise
        await self._step_down(release=False)
        raise LeadershipLost(f"leader election lost: lease {self.config.namespace}/{self.config.name}")

    async def _acquire(self) -> None:
        self._log.info("attempting to acquire leader lease")
        while True:
            if await self._try_acquire_or_renew():
                self._log.info("successfully acquired lease")
                return
            period = self.config.retry_period
            await self.clock.sleep(period + random.random() * JITTER_FACTOR * period)

    async def _renew_loop(self) -> None:
        while True:
            deadline = self.clock.now() + self.config.renew_deadline
            while True:
                remaining = deadline - self.clock.now()
                try:
                    async with asyncio.timeout(max(remaining, 0.001)):
                        ok = await self._try_acquire_or_renew()
                except TimeoutError:
                    ok = False
                if ok:
                    break
                if self.clock.now() >= deadline:
                    self._log.error("failed to renew lease: timed out waiting for the condition")
                    return
                await self.clock.sleep(min(self.config.retry_period, max(0.0, deadline - self.clock.now())))
            await self.clock.sleep(self.config.retry_period)

    async def _start_leading(self) -> None:
        self._leading = True
        metrics.IS_LEADER.labels(self.config.name).set(1)
        self.started_leading.set()
        if self.on_started_leading is not None:
            self._work = asyncio.ensure_future(_maybe_await(self.on_started_leading()))

    async def _step_down(self, *, release: bool) -> None:
        self._leading = False
        metrics.IS_LEADER.labels(self.config.name).set(0)
        self.started_leading.clear()
        if self._work is not None:
            self._work.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._work
            self._work = None
        if release:
            await self.release()
        if self.on_stopped_leading is not None:
            await _maybe_await(self.on_stopped_leading())

    # ---- the lease ---------------------------------------------------------------------------

    def _record(self, *, acquire_time: str, transitions: int, holder: str, duration: int) -> dict[str, Any]:
        return {
            "holderIdentity": holder,
            "leaseDurationSeconds": duration,
            "acquireTime": acquire_time,
            "renewTime": rfc3339_micro(self.clock.wall()),
            "leaseTransitions": transitions,
        }

    async def _try_acquire_or_renew(self) -> bool:
        now_text = rfc3339_micro(self.clock.wall())
        duration = max(1, math.ceil(self.config.lease_duration))
        cfg = self.config
        try:
            lease = await self.client.get(LEASES, cfg.name, cfg.namespace)
        except NotFound:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": self._record(
                    acquire_time=now_text, transitions=0, holder=cfg.identity, duration=duration
                ),
            }
            try:
                self._lease = await self.client.create(LEASES, body)
            except ApiError as exc:
                self._log.info("error initially creating leader election record", error=str(exc))
                return False
            self._observe(self._lease["spec"])
            return True
        except ApiError as exc:
            self._log.warning("error retrieving resource lock", error=str(exc))
            return False

        spec = lease.get("spec") or {}
        if spec != self._observed_spec:
            self._observe(spec)
        holder = spec.get("holderIdentity") or ""
        held_for = int(spec.get("leaseDurationSeconds") or 0)
        if holder and holder != cfg.identity and self._observed_at + held_for > self.clock.now():
            return False

        if holder == cfg.identity and self._leading:
            record = self._record(
                acquire_time=spec.get("acquireTime") or now_text,
                transitions=int(spec.get("leaseTransitions") or 0),
                holder=cfg.identity,
                duration=duration,
            )
        else:
            record = self._record(
                acquire_time=now_text,
                transitions=int(spec.get("leaseTransitions") or 0) + (0 if holder == cfg.identity else 1),
                holder=cfg.identity,
                duration=duration,
            )
        updated = {**lease, "spec": record}
        try:
            self._lease = await self.client.update(LEASES, updated)
        except ApiError as exc:
            self._log.info("failed to update lease", error=str(exc))
            return False
        self._observe(self._lease.get("spec") or record)
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        self._observed_spec = spec
        self._observed_at = self.clock.now()
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            if holder != self.config.identity:
                self._log.info("new leader elected", leader=holder)
            if self.on_new_leader is not None:
                result = self.on_new_leader(holder)
                if inspect.isawaitable(result):
                    task = asyncio.ensure_future(result)
                    self._callbacks.add(task)
                    task.add_done_callback(self._callbacks.discard)

    async def release(self) -> bool:
        """Give the lease up: empty holder and a 1 s duration, keeping leaseTransitions.

        Reads the Lease first: a renew cancelled mid-flight may have changed it after our last
        answer, and writing with a stale resourceVersion would just conflict.
        """
        cfg = self.config
        try:
            async with asyncio.timeout(cfg.renew_deadline):
                lease = await self.client.get(LEASES, cfg.name, cfg.namespace)
                spec = lease.get("spec") or {}
                if spec.get("holderIdentity") != cfg.identity:
                    return False
                now_text = rfc3339_micro(self.clock.wall())
                record = {
                    "holderIdentity": "",
                    "leaseDurationSeconds": 1,
                    "acquireTime": now_text,
                    "renewTime": now_text,
                    "leaseTransitions": int(spec.get("leaseTransitions") or 0),
                }
                self._lease = await self.client.update(LEASES, {**lease, "spec": record})
        except (ApiError, TimeoutError) as exc:
            self._log.error("failed to release lock", error=str(exc))
            return False
        self._log.info("released leader lease")
        return True


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
