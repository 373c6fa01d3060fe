"""`FakeNamespaceContents`: what the webhook's namespace-deletion check reads from the informer caches.

Deleting a namespace is refused while it still holds active pods or bound PVCs (with the deletion
protection gate); a test sets the counts it needs in `pods` / `pvcs` by namespace, and every other
webhook test passes an empty one.
"""

from __future__ import annotations


class FakeNamespaceContents:
    def __init__(self) -> None:
        self.pods: dict[str, int] = {}
        self.pvcs: dict[str, int] = {}

    def active_pods(self, namespace: str) -> int:
        return self.pods.get(namespace, 0)

    def bound_pvcs(self, namespace: str) -> int:
        return self.pvcs.get(namespace, 0)
