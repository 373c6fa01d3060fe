"""`RecordingEventRecorder`: an `EventRecorder` stand-in that keeps events in a list.

The real recorder sends from a background task and correlates, aggregates and rate-limits; a
reconciler unit test only wants to know which events were emitted, in order. Arguments are
checked with the same rules as the real recorder, so a bad type or empty reason still fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kruise.kube.events import NORMAL, WARNING, object_reference


@dataclass(frozen=True)
class RecordedEvent:
    """One emitted event: about which object (its reference), of which type, reason and message."""

    involved: dict[str, Any]
    type: str
    reason: str
    message: str

    @property
    def key(self) -> str:
        """`namespace/name` (or `name`) of the object the event is about."""
        ns, name = self.involved.get("namespace"), self.involved.get("name", "")
        return f"{ns}/{name}" if ns else name


class RecordingEventRecorder:
    """Same calling surface as `kruise.kube.events.EventRecorder` (event, eventf, flush, stop)."""

    def __init__(self, component: str = "test-controller") -> None:
        self.component = component
        self.events: list[RecordedEvent] = []

    def event(self, obj: dict[str, Any], type: str, reason: str, message: str) -> None:
        if type not in (NORMAL, WARNING):
            raise ValueError(f'type: Unsupported value: "{type}": supported values: "Normal", "Warning"')
        if not reason:
            raise ValueError("reason: Required value")
        self.events.append(RecordedEvent(object_reference(obj), type, reason, message))

    def eventf(self, obj: dict[str, Any], type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, type, reason, fmt % args if args else fmt)

    async def flush(self) -> None:
        """Nothing is queued: events are recorded synchronously."""

    async def stop(self, timeout: float = 5.0) -> None:
        """Nothing runs in the background."""

    def reasons(self) -> list[str]:
        return [e.reason for e in self.events]
