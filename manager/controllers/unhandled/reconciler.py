"""One Warning event per object and generation: enough to be seen, never a stream of repeats."""

from __future__ import annotations

from collections.abc import Mapping

from kruise.kube.controller import Result
from kruise.kube.events import EventRecorder
from kruise.kube.informer import SharedInformer

REASON = "NoController"


class UnhandledReconciler:
    def __init__(
        self,
        recorder: EventRecorder,
        informers: Mapping[str, SharedInformer],
        reasons: Mapping[str, str],
    ) -> None:
        self.recorder = recorder
        self.informers = informers
        self.reasons = reasons
        self.warned: dict[str, tuple[str, int]] = {}
        """key -> (uid, generation) already warned about."""

    async def reconcile(self, key: str) -> Result | None:
        kind, _, object_key = key.partition(":")
        obj = self.informers[kind].get(object_key)
        if obj is None:
            self.warned.pop(key, None)
            return None
        meta = obj.get("metadata") or {}
        seen = (meta.get("uid", ""), int(meta.get("generation") or 0))
        if self.warned.get(key) == seen:
            return None
        self.warned[key] = seen
        self.recorder.event(
            dict(obj),
            "Warning",
            REASON,
            f"nothing reconciles this {kind}: {self.reasons[kind]}; the object is stored but has no effect",
        )
        return None
