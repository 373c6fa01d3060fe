"""How long the kubelet lets a container handle SIGTERM before SIGKILL, by why it is stopped.

The kubelet's own kills (``killContainer``) pass a grace period to CRI StopContainer:

- a container it restarts (failed liveness or startup probe, changed image, resize with
  ``RestartContainer``): the pod's ``deletionGracePeriodSeconds`` if set, else - for a probe
  kill - the probe's own ``terminationGracePeriodSeconds`` if set, else the pod's
  ``terminationGracePeriodSeconds`` (30 if unset); never under 2 seconds, the kubelet's minimal
  shutdown window;
- a pod being deleted: the pod worker's effective grace period, which overrides the above
  (no 2 s floor): ``deletionGracePeriodSeconds``, else the spec's, at least 1 second;
- a pod gone from the API (force deleted) or in a terminal phase: the spec's
  ``terminationGracePeriodSeconds`` (a force deletion's grace 0 falls back to it), at least 1.

All values are simulated seconds; the caller scales them by the node's speed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_TERMINATION_GRACE = 30
MINIMUM_KILL_GRACE = 2  # kubelet minimumGracePeriodInSeconds
MINIMUM_POD_GRACE = 1  # the pod worker never passes less

LIVENESS = "liveness"
STARTUP = "startup"


def _spec_grace(pod: Mapping[str, Any]) -> int:
    grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return DEFAULT_TERMINATION_GRACE if grace is None else int(grace)


def container_kill_grace(pod: Mapping[str, Any], container: Mapping[str, Any], probe: str = "") -> int:
    """Grace for a container the kubelet kills to restart it (``probe``: ``liveness`` or
    ``startup`` when a probe failed, else empty)."""
    deletion = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
    own = (container.get(f"{probe}Probe") or {}).get("terminationGracePeriodSeconds") if probe else None
    if deletion is not None:
        grace = int(deletion)
    elif probe in (LIVENESS, STARTUP) and own is not None:
        grace = int(own)
    else:
        grace = _spec_grace(pod)
    return max(grace, MINIMUM_KILL_GRACE)


def spec_termination_grace(pod: Mapping[str, Any]) -> int:
    """Grace for the containers of a pod gone from the API (force deleted) - the pod worker
    falls back to the spec's when the deletion's is 0."""
    return max(_spec_grace(pod), MINIMUM_POD_GRACE)


def pod_termination_grace(pod: Mapping[str, Any]) -> int:
    """Grace for the containers of a pod being deleted (or stopped for good)."""
    deletion = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
    grace = int(deletion) if deletion else _spec_grace(pod)
    return max(grace, MINIMUM_POD_GRACE)
