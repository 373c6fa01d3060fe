"""When a real kubelet's pod worker may sync a pod again: its pod lifecycle event generator (PLEG).

A kubelet learns what its runtime did by relisting it (every second); a pod worker starts its next
sync only with a runtime snapshot taken after its previous sync ended (`podCache.GetNewerThan`), and
the status a sync writes is the one that snapshot shows. So whatever a sync changed (a container it
started, one whose postStart hook it waited out, one it killed) reaches the pod's status one relist
later, and a spec change that arrives right after a sync waits for the next relist too. Upstream's
e2e timings count on those waits: "nginx stopped more than 10 s after the new redis started" holds
on kind because between the end of redis's 10 s postStart hook and the kill of nginx there are two
relists (one to report redis ready, one to act on the controller's next batch).

Relists fall on a fixed grid of ``period`` seconds (monotonic time); a sync that ended at ``t`` lets
the next one start at the first grid point after ``t``."""

from __future__ import annotations

import math

RELIST_PERIOD = 1.0  # the kubelet's genericPlegRelistPeriod, seconds


class RelistGate:
    """Per pod: when its last sync ended, and how long the next must wait for a relist."""

    def __init__(self, period: float = RELIST_PERIOD) -> None:
        if period <= 0:
            raise ValueError(f"period: must be > 0, got {period}")
        self.period = period
        self._ended: dict[str, float] = {}

    def wait(self, key: str, now: float) -> float:
        """Seconds until the first relist after the pod's last sync ended (0: sync now)."""
        ended = self._ended.get(key)
        if ended is None:
            return 0.0
        relist = (math.floor(ended / self.period) + 1) * self.period
        return max(relist - now, 0.0)

    def synced(self, key: str, now: float) -> None:
        self._ended[key] = now

    def forget(self, key: str) -> None:
        self._ended.pop(key, None)
