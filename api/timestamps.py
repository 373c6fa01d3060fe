"""metav1.Time and metav1.MicroTime on the wire.

Every layer writes timestamps into objects and reads them back; keeping the format in `api`
lets the pure `control` layer and the I/O layers agree on it without importing each other.
"""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339_micro(dt: datetime) -> str:
    """Kubernetes MicroTime: `2026-11-22T23:00:00.000000Z`, always UTC."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339(dt: datetime) -> str:
    """Kubernetes Time: `2026-11-22T23:00:00Z`, always UTC, second precision."""
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(value: str) -> datetime:
    """Parse Time or MicroTime as written by the apiserver (trailing `Z`, optional fraction)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
