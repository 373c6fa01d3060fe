"""Which pod changes wake a SidecarSet (upstream's `enqueueRequestForPod.updatePod`), and when.

A SidecarSet pass only decides differently when a pod it covers starts terminating, turns ready or
unready, has its sidecars catch up with (or fall behind) their spec images, or — with an
`updateStrategy.selector` — changes labels. Waking it on every other pod write (kubelet status
heartbeats, condition patches, our own upgradable-condition write) is not just wasted work: a pass a
PodUnavailableBudget refuses counts as a failure in the workqueue's per-key backoff, so a burst of
such writes while the budget is spent pushes the next retry minutes out, and once the budget frees up
nothing wakes the SidecarSet again. Upstream wakes it on exactly these changes, the consistency one
after 5 s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.api.objects import labels_of, meta_of, section
from kruise.control.common import podstatus
from kruise.control.sidecarset import update

Obj = Mapping[str, Any]

CONSISTENCY_DELAY = 5.0
"""Seconds after a sidecar-consistency change before the SidecarSet is woken (upstream's)."""


def wake_delay(old: Obj, new: Obj, sidecarset: Obj) -> float | None:
    """Seconds until `sidecarset` should be reconciled because its pod went from `old` to `new`
    (0: now), or None when the change cannot matter to it. A `NotUpdate` SidecarSet is not woken by
    pod updates at all, as upstream."""
    if meta_of(old).get("resourceVersion") == meta_of(new).get("resourceVersion"):
        return None
    if section(sidecarset, "spec", "updateStrategy").get("type") == "NotUpdate":
        return None
    if meta_of(old).get("deletionTimestamp"):
        return None
    if meta_of(new).get("deletionTimestamp"):
        return 0.0
    if podstatus.is_ready(old) != podstatus.is_ready(new):
        return 0.0
    if update.sidecars_consistent(old, sidecarset) != update.sidecars_consistent(new, sidecarset):
        return CONSISTENCY_DELAY
    selector = section(sidecarset, "spec", "updateStrategy").get("selector")
    if selector and labels_of(old) != labels_of(new):
        return 0.0
    return None
