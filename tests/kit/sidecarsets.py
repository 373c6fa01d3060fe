"""`FakeSidecarSetSource`: the webhook's read-only SidecarSet caches, filled by the test.

The pod webhook reads SidecarSets, their revisions, namespace labels and the kruise
configuration through `SidecarSetSource`; the webhook tests drive the ASGI app against this
in-memory stand-in and put into it what the apiserver would have stored.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


class FakeSidecarSetSource:
    """`items` by SidecarSet name, `namespaces` by name (their labels), `config`, `history`."""

    def __init__(self) -> None:
        self.items: dict[str, Obj] = {}
        self.namespaces: dict[str, dict[str, str]] = {"default": {}}
        self.config: dict[str, str] = {}
        self.history: list[Obj] = []
        self.namespace = "kruise-system"

    def revisions(self) -> list[Obj]:
        return self.history

    def list(self) -> list[Obj]:
        return list(self.items.values())

    def get(self, name: str) -> Obj | None:
        return self.items.get(name)

    def namespace_labels(self, name: str) -> dict[str, str] | None:
        return self.namespaces.get(name)

    def configuration(self) -> dict[str, str]:
        return self.config
