"""`write_log`: every non-GET request the controllers' shared client sends, for write-counting tests
(issue 18) of any workload kind.

A request is recorded as (method, resource, name): resource is the plural with its subresource
(`pods`, `pods/status`, `statefulsets/status`, `events`), name the object the path names (None for a
create, whose name the path does not carry).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pytest

Write = tuple[str, str, str | None]


def classify(path: str) -> tuple[str, str | None]:
    """(resource[/subresource], name) of an API path, without group, version or namespace."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    parts = parts[2:] if parts[:1] == ["api"] else parts[3:] if parts[:1] == ["apis"] else parts
    if parts[:1] == ["namespaces"] and len(parts) > 2:
        parts = parts[2:]
    return "/".join(parts[:1] + parts[2:3]), parts[1] if len(parts) > 1 else None


class WriteLog:
    def __init__(self) -> None:
        self.writes: list[Write] = []

    def record(self, method: str, path: str) -> None:
        if method != "GET":
            self.writes.append((method, *classify(path)))

    def pod_writes(self) -> Counter[tuple[str, str]]:
        """(method, resource) of every pod write, counted."""
        return Counter((m, r) for m, r, _ in self.writes if r in ("pods", "pods/status"))

    def counts(self, resource: str = "pods") -> Counter[tuple[str, str]]:
        """(method, resource[/subresource]) of every write to `resource` or one of its subresources."""
        return Counter((m, r) for m, r, _ in self.writes if r.split("/", 1)[0] == resource)

    def pod_sequences(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Per existing pod, its writes after the create, in the order they were sent."""
        sequences: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for method, resource, name in self.writes:
            if resource in ("pods", "pods/status") and name is not None:
                sequences[name].append((method, resource))
        return {name: tuple(seq) for name, seq in sequences.items()}

    def count(self, method: str, resource: str) -> int:
        return sum(1 for m, r, _ in self.writes if (m, r) == (method, resource))

    def clear(self) -> None:
        self.writes.clear()


@pytest.fixture
def write_log(kruise_cluster, monkeypatch) -> WriteLog:
    log = WriteLog()
    client = kruise_cluster.client
    send = client._send

    async def recording(method: str, path: str, **kwargs: Any):  # type: ignore[no-untyped-def]
        log.record(method, path)
        return await send(method, path, **kwargs)

    monkeypatch.setattr(client, "_send", recording)
    return log
