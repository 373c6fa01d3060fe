"""The status write of a custom resource, written once for every controller (issue 29).

One semantics: the controller computes the whole new status; nothing is sent when the cached status
already equals it; otherwise one JSON merge patch on the `status` subresource carries the new status,
with every field the cached status has and the new one dropped sent as null (a merge patch would keep
it otherwise, while upstream's `Status().Update` replaces the whole status). An object deleted
meanwhile is not an error: there is no status left to write.

`partial=True` is the one exception, for a kind whose status other writes of the same controller share
(Advanced DaemonSet: the counters pass and the revision pass that bumps `collisionCount`, upstream's
field-by-field `storeDaemonSetStatus`): `status` then names only the fields this write owns, equality is
judged on those, and no other field is cleared — re-sending the rest from a stale cache would revert a
write the cache does not show yet.

The conflict rule: the controller is the only writer of its kind's status and the workqueue never runs
two reconciles of one key at once, so by default the patch carries no resourceVersion and cannot
conflict (a PUT mostly conflicted with our own previous write not yet in the cache). A kind whose status
someone else writes too (WorkloadSpread's, also written by the pod webhook) passes `conditional=True`:
the patch carries the cached resourceVersion and a Conflict is raised, so the reconcile is retried and
computes the status again from a cache that shows the other write. A kind whose upstream re-checks the
fresh object instead passes `still_wanted` (which implies `conditional`): on Conflict the object is read
afresh and the same status is written onto it only while `still_wanted(fresh)` holds, up to
`MAX_CONFLICT_RETRIES` times.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kruise.api.objects import meta_of, status_of
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Conflict, NotFound
from kruise.kube.resources import ResourceRef

MAX_CONFLICT_RETRIES = 5


class Written(enum.Enum):
    """What `StatusWriter.write` did."""

    WRITTEN = "written"
    UNCHANGED = "unchanged"
    """The cached status already was the new one (or, with `still_wanted`, the fresh object refused it)."""
    GONE = "gone"
    """The object no longer exists."""


@dataclass(frozen=True)
class StatusWrite:
    """The outcome of `StatusWriter.write`; `obj` is the server's answer when one was written (its
    resourceVersion is what a controller's resourceVersion expectations wait for)."""

    outcome: Written
    obj: dict[str, Any] | None = None

    @property
    def gone(self) -> bool:
        return self.outcome is Written.GONE


def status_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch body turning status `old` into `new`: dropped fields become null, at every
    level of nested objects too (a merge patch merges maps such as PersistentPodState's `podStates`
    key by key, so a dropped entry would otherwise survive)."""
    return {"status": _replacing(old, new)}


def _replacing(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {key: None for key in old if key not in new}
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            body[key] = _replacing(before, value)
        else:
            body[key] = value
    return body


class StatusWriter:
    """Writes the status of objects of one resource (`ResourceRef`), cluster-scoped or namespaced."""

    def __init__(self, client: Client, resource: ResourceRef) -> None:
        self.client = client
        self.resource = resource

    async def write(
        self,
        obj: Mapping[str, Any],
        status: Mapping[str, Any],
        *,
        still_wanted: Callable[[Mapping[str, Any]], bool] | None = None,
        conditional: bool = False,
        partial: bool = False,
    ) -> StatusWrite:
        """Make `obj`'s status `status` (see the module docstring for the rules)."""
        current: Mapping[str, Any] = obj
        for attempt in range(MAX_CONFLICT_RETRIES):
            old = status_of(current)
            if partial:
                old = {key: old.get(key) for key in status}
            if old == status:
                return StatusWrite(Written.UNCHANGED)
            patch = status_patch(old, status)
            meta = meta_of(current)
            if conditional or still_wanted is not None:
                patch["metadata"] = {"resourceVersion": meta.get("resourceVersion")}
            try:
                answer = await self.client.patch(
                    self.resource,
                    meta["name"],
                    patch,
                    meta.get("namespace"),
                    patch_type=PatchType.MERGE,
                    subresource="status",
                )
                return StatusWrite(Written.WRITTEN, answer)
            except NotFound:
                return StatusWrite(Written.GONE)
            except Conflict:
                if still_wanted is None or attempt == MAX_CONFLICT_RETRIES - 1:
                    raise
            try:
                current = await self.client.get(self.resource, meta["name"], meta.get("namespace"))
            except NotFound:
                return StatusWrite(Written.GONE)
            if not still_wanted(current):
                return StatusWrite(Written.UNCHANGED)
        raise AssertionError("unreachable: the last attempt returns or raises")
