"""kruise-daemon's PodProbeMarker prober: runs the probes of this node's NodePodProbe and reports them.

It watches only its own NodePodProbe (field selector `metadata.name=<node>`). Every probe of every
pod entry gets one worker task, keyed by (pod uid, probe name): it waits `initialDelaySeconds`, then
runs the probe every `periodSeconds` under `timeoutSeconds`, counting consecutive outcomes against
the thresholds (`outcomes.Threshold`). A spec change restarts the workers whose probe, container or pod
IP changed and stops those of entries that left the spec (their results go with them).

Workers never write: a state change is recorded and one writer task coalesces every pending change
into a single status update of the NodePodProbe (read fresh, compare-and-swap; a conflict is retried
with the next read). Results are written only when a state or its message changes, not every period.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import structlog

from kruise.api.objects import Obj, section, spec_of, status_of
from kruise.daemon.cri.client import RuntimeClient
from kruise.daemon.podprobe import checks
from kruise.daemon.podprobe.outcomes import (
    Threshold,
    Timing,
    build_status,
    next_state,
)
from kruise.kube.client import Client
from kruise.kube.clock import Clock, RealClock, rfc3339
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.informer import SharedInformer
from kruise.kube.resources import NODE_POD_PROBES
from kruise.kube.store import unwrap_tombstone

log = structlog.get_logger("kruise.daemon.podprobe")

Key = tuple[str, str]

WRITE_RETRY_SECONDS = 0.2


@dataclass
class _Worker:
    pod: dict[str, Any]
    probe: dict[str, Any]
    task: asyncio.Task[None]


def _identity(pod: Obj, probe: Obj) -> tuple[Any, ...]:
    return (
        pod.get("name"),
        pod.get("namespace"),
        pod.get("IP"),
        probe.get("containerName"),
        probe.get("probe"),
    )


class PodProber:
    def __init__(
        self, client: Client, runtime: RuntimeClient, node_name: str, *, clock: Clock | None = None
    ) -> None:
        self.client = client
        self.runtime = runtime
        self.node_name = node_name
        self.clock = clock or RealClock()
        self.node_probes = SharedInformer(
            client, NODE_POD_PROBES, None, field_selector=f"metadata.name={node_name}"
        )
        self.node_probes.add_event_handler(
            on_add=self.sync,
            on_update=lambda _old, new: self.sync(new),
            on_delete=lambda obj: self.sync({"metadata": unwrap_tombstone(obj).get("metadata")}),
        )
        self.results: dict[Key, dict[str, Any]] = {}
        self._workers: dict[Key, _Worker] = {}
        self._dirty = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self.node_probes.start()
        self.start_writer()

    def start_writer(self) -> None:
        """Start the status writer alone (`start` does it too); workers start with `sync`."""
        if self._writer is None:
            self._writer = asyncio.create_task(self._write_loop(), name="podprobe-writer")

    def has_synced(self) -> bool:
        return self.node_probes.has_synced()

    async def stop(self) -> None:
        tasks = [w.task for w in self._workers.values()]
        if self._writer is not None:
            tasks.append(self._writer)
        self._workers.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._writer = None
        await self.node_probes.stop()

    # ---- workers -----------------------------------------------------------------------------

    def sync(self, npp: Obj) -> None:
        """Make the running workers match the NodePodProbe's spec (an empty spec stops them all)."""
        wanted: dict[Key, tuple[dict[str, Any], dict[str, Any]]] = {}
        for pod in spec_of(npp).get("podProbes") or []:
            for probe in pod.get("probes") or []:
                wanted[(pod.get("uid", ""), probe.get("name", ""))] = (pod, probe)
        for key in list(self._workers):
            worker = self._workers[key]
            if key not in wanted or _identity(*wanted[key]) != _identity(worker.pod, worker.probe):
                worker.task.cancel()
                del self._workers[key]
                if key not in wanted:
                    self.results.pop(key, None)
        for key, (pod, probe) in wanted.items():
            if key not in self._workers:
                task = asyncio.create_task(
                    self._work(key, pod, probe), name=f"podprobe {key[1]} {pod.get('name')}"
                )
                self._workers[key] = _Worker(pod, probe, task)
        self._dirty.set()  # entries that left the spec leave the status too

    async def _work(self, key: Key, pod: dict[str, Any], probe: dict[str, Any]) -> None:
        timing = Timing.of(section(probe, "probe"))
        threshold = Threshold(timing.success_threshold, timing.failure_threshold)
        await self.clock.sleep(timing.initial_delay)
        while True:
            try:
                outcome = await checks.run_probe(self.runtime, pod, probe, timing.timeout)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a broken runtime connection must not end the worker
                log.warning("probe could not run", probe=key[1], pod=pod.get("name"), error=repr(exc))
                outcome = None
            if outcome is not None:
                state = threshold.observe(outcome[0])
                if state is not None:
                    self.record(key, state, outcome[1])
            await self.clock.sleep(timing.period)

    def record(self, key: Key, state: str, message: str) -> None:
        entry = next_state(self.results.get(key), state, message, rfc3339(self.clock.wall()))
        if entry is not None:
            self.results[key] = entry
            self._dirty.set()

    # ---- the one writer ----------------------------------------------------------------------

    async def _write_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self._write()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("NodePodProbe status not written; retrying", node=self.node_name, error=repr(exc))
                await self.clock.sleep(WRITE_RETRY_SECONDS)
                self._dirty.set()

    async def _write(self) -> None:
        while True:
            try:
                npp = await self.client.get(NODE_POD_PROBES, self.node_name)
            except NotFound:
                return
            status = build_status(npp.get("spec") or {}, npp.get("status") or {}, self.results)
            if status_of(npp) == status:
                return
            try:
                await self.client.update_status(NODE_POD_PROBES, {**npp, "status": status})
                return
            except Conflict:
                continue
            except NotFound:
                return
