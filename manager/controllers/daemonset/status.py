"""Write an Advanced DaemonSet's status: the counters, the hash, ``observedGeneration`` — paced.

A pass ends with one status write, and short passes (one per created pod, one per pod turning
ready) would write status at the rate pods change. This module holds what pacing needs across
passes: when this controller last wrote each DaemonSet's status, and what it wrote, so a write the
cache has not shown yet is neither repeated nor mistaken for a change still to be paced. The
counters themselves come from ``kruise.control.daemonset.manage.compute_status``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from kruise.api.objects import Obj, meta_of
from kruise.control.common.nodeeligibility import NodeFit
from kruise.control.daemonset.manage import availability_wait, compute_status, group_by_node
from kruise.control.daemonset.rollingupdate import RollingUpdateSettings
from kruise.kube.clock import Clock
from kruise.kube.informer import SharedInformer
from kruise.manager.writers.ownership import claimed_view, selector_of
from kruise.manager.writers.status import StatusWriter

STATUS_PACE_SECONDS = 1.0
"""A status write that only moves the counters waits until this long after the previous one (the pass
asks to be run again then): once passes are short, every pod turning ready would otherwise bring its
own status write. A write that changes observedGeneration or the hash, or that shows every scheduled
pod updated and available, is never held back (issue 18: status written at least every few
seconds, at most once per pass)."""


class StatusUpdater:
    def __init__(
        self,
        status_writer: StatusWriter,
        pods: SharedInformer,
        wall: Callable[[], datetime],
        *,
        clock: Clock,
        pace_seconds: float = 0.0,
    ) -> None:
        self.status_writer = status_writer
        self.pods = pods
        self.wall = wall
        self.clock = clock
        self.pace_seconds = pace_seconds
        self._written: dict[str, float] = {}  # daemonset key -> clock time of its last status write
        self._sent: dict[str, tuple[int | None, dict[str, Any]]] = {}
        """daemonset key -> (resourceVersion the server answered, status) of this controller's last write"""

    def forget(self, key: str) -> None:
        """The DaemonSet is gone: nothing of its writes is paced any more."""
        self._written.pop(key, None)
        self._sent.pop(key, None)

    async def update(
        self,
        ds: Obj,
        nodes: Sequence[Obj],
        fit_of: Callable[[Obj], NodeFit],
        update_hash: str,
        *,
        observed: bool,
        delays: list[float],
    ) -> None:
        """updateDaemonSetStatus + storeDaemonSetStatus: one merge patch when anything changed."""
        settings = RollingUpdateSettings.from_daemonset(ds)
        now = self.wall()
        owned = claimed_view(ds, self.pods, selector_of(ds))
        counters = compute_status(
            nodes,
            fit_of,
            group_by_node(owned),
            update_hash,
            settings.template_generation,
            settings.min_ready_seconds,
            now,
        )
        old = ds.get("status") or {}
        generation = ds["metadata"].get("generation")
        unchanged = (
            all(int(old.get(k) or 0) == v for k, v in counters.items())
            and int(old.get("observedGeneration") or 0) >= int(generation or 0)
            and old.get("daemonSetHash") == update_hash
        )
        if (wait := availability_wait(owned, settings.min_ready_seconds, counters, now)) is not None:
            delays.append(wait)
        if unchanged:
            return
        status: dict[str, Any] = {**counters, "daemonSetHash": update_hash}
        if observed and generation is not None:
            status["observedGeneration"] = generation
        meta = ds["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        if self._already_sent(key, ds, status):
            return
        wait = self._pace(key, old, status, counters)
        if wait > 0:
            delays.append(wait)
            return
        self._written[key] = self.clock.now()
        write = await self.status_writer.write(ds, status, partial=True)
        if write.obj is not None:
            self._sent[key] = (_rv_int(write.obj), status)

    def _already_sent(self, key: str, ds: Obj, status: Mapping[str, Any]) -> bool:
        """True when ``status`` is what this controller last wrote and the cache does not show that
        write yet: nothing to write, and nothing to wait for (the write's own watch event brings the
        next pass). Judged against the stale cached status instead, the same counters looked like a
        change to pace, and the pass parked the DaemonSet for a second it did not need — earlier
        than, and so in place of, a failed pod's backoff moment."""
        sent = self._sent.get(key)
        if sent is None:
            return False
        sent_rv, sent_status = sent
        cached_rv = _rv_int(ds)
        if sent_rv is None or cached_rv is None or cached_rv >= sent_rv:
            return False
        return dict(status) == sent_status

    def _pace(
        self, key: str, old: Mapping[str, Any], status: Mapping[str, Any], counters: Mapping[str, int]
    ) -> float:
        """Seconds this status write waits (``STATUS_PACE_SECONDS``); 0 to write now."""
        if self.pace_seconds <= 0 or key not in self._written:
            return 0.0
        if status.get("observedGeneration", old.get("observedGeneration")) != old.get("observedGeneration"):
            return 0.0
        if status.get("daemonSetHash") != old.get("daemonSetHash"):
            return 0.0
        desired = counters["desiredNumberScheduled"]
        if counters["updatedNumberScheduled"] == desired and counters["numberAvailable"] == desired:
            return 0.0
        since = self.clock.now() - self._written[key]
        return max(0.0, self.pace_seconds - since)


def _rv_int(obj: Obj | None) -> int | None:
    """An object's resourceVersion as a number (the emulator's and etcd's are); None when it has
    none or it does not parse, and then nothing is judged by it."""
    raw = meta_of(obj or {}).get("resourceVersion")
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None
