"""kruise-webhook's caches of the custom workload kinds in kruise-configuration's WorkloadSpread
whitelist (`WorkloadSpread_Watch_Custom_Workload_WhiteList`), kept in step with the whitelist.

Upstream's webhook reads the whitelist on every admission through controller-runtime's cache-backed
client, which starts an informer for a kind on its first read: a kind whitelisted after start, or
whose CRD is installed later, is followed without a restart. Here the kinds whitelisted when the
process starts get caches that readiness waits for; afterwards a change of the ConfigMap or of any
CRD wakes `run`, which resolves each whitelisted kind not followed yet and starts a cache for it.
Such a late cache is outside the process-wide readiness gate, so it is attached with its informer as
`Freshness` and only the pods whose owner chain or target reaches it wait for its first list.
A kind no CRD serves yet is tried again on the next ConfigMap or CRD change. A kind dropped from the
whitelist keeps its cache until restart; the whitelist read per pod decides whether it is used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import structlog

from kruise.control.common.customworkloads import GroupVersionKind
from kruise.control.workloadspread.whitelist import WhitelistError, parse_whitelist
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.kinds import resource_for_kind
from kruise.kube.resources import ResourceRef
from kruise.webhook.caches import StoreSpreads

log = structlog.get_logger("kruise.webhook.customworkloads")

RETRY_INITIAL = 1.0
RETRY_CAP = 30.0
"""Seconds between attempts after a failure that no event will correct (the CRD list failing)."""


class CustomWorkloadFollower:
    """Attaches a cache to `spreads` for every kind of the WorkloadSpread whitelist it can resolve."""

    def __init__(
        self,
        client: Client,
        spreads: StoreSpreads,
        configuration: Callable[[], Mapping[str, str]],
        served: Callable[[ResourceRef], Awaitable[bool]],
    ) -> None:
        """`configuration`: kruise-configuration's `data` from the process's cache of it; `served`:
        whether a resource is installed (only NotFound says no)."""
        self.client = client
        self.spreads = spreads
        self.configuration = configuration
        self.served = served
        self.informers: list[SharedInformer] = []
        """The caches started after the process became ready (`follow_late`)."""
        self._unserved: set[GroupVersionKind] = set()
        self._wake = asyncio.Event()

    def poke(self, *_: Any) -> None:
        """An event handler: the ConfigMap or a CRD changed, look again."""
        self._wake.set()

    async def follow(
        self, data: Mapping[str, str] | None, cache_for: Callable[[GroupVersionKind, ResourceRef], None]
    ) -> None:
        """Call `cache_for` for each kind of the whitelist in `data` that is not followed and is served;
        a bad whitelist or a kind no resource serves is logged (once until it changes) and skipped."""
        try:
            whitelist = parse_whitelist(data)
        except WhitelistError as exc:
            log.warning("WorkloadSpread custom workloads are not followed", error=str(exc))
            return
        for gvk in whitelist.kinds_to_follow():
            if self.spreads.follows(gvk.group, gvk.kind):
                continue
            ref = await resource_for_kind(self.client, gvk.group, gvk.version, gvk.kind)
            if ref is None or not await self.served(ref):
                if gvk not in self._unserved:
                    self._unserved.add(gvk)
                    kind = f"{gvk.kind}.{gvk.group}"
                    log.warning("WorkloadSpread custom workload kind is not served", kind=kind)
                continue
            self._unserved.discard(gvk)
            cache_for(gvk, ref)

    def _start_late(self, gvk: GroupVersionKind, ref: ResourceRef) -> None:
        informer = SharedInformer(self.client, ref)
        informer.start()
        self.informers.append(informer)
        self.spreads.attach_workload(gvk.group, gvk.kind, informer.store, informer)
        kind = f"{gvk.kind}.{gvk.group}"
        log.info("following a WorkloadSpread custom workload kind", kind=kind, resource=str(ref))

    async def follow_late(self) -> None:
        """One pass over the whitelist as cached now, starting a cache per newly resolvable kind."""
        await self.follow(self.configuration(), self._start_late)

    async def run(self) -> None:
        """Follow the whitelist on every poke until cancelled; a failed pass is retried with backoff."""
        delay = RETRY_INITIAL
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self.follow_late()
            except Exception as exc:  # the loop must outlive a failing apiserver call; say what failed
                log.warning("following custom workloads failed", error=str(exc), retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_CAP)
                self._wake.set()
            else:
                delay = RETRY_INITIAL

    async def stop(self) -> None:
        await asyncio.gather(*(informer.stop() for informer in self.informers))
