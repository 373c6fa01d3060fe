"""`FakeInformer`: the read side of `SharedInformer`, filled from plain dicts.

It keeps objects in the real `kruise.kube.store.Store` with the same standard indexes (namespace,
owner uid, node name), so `by_index` answers exactly as production does. Cached objects are shared
and read-only in production; the fake remembers what each object looked like when it was added, so
a test can catch a reconciler that edits the cache in place (`assert_unmodified`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from kruise.kube.resources import object_key
from kruise.kube.store import STANDARD_INDEXERS, IndexFunc, Store, mutable_copy

Obj = dict[str, Any]


class FakeInformer:
    """A synced cache with `get`, `list` and `by_index`, and no list/watch behind it."""

    def __init__(self, objects: Iterable[Obj] = (), *, indexers: dict[str, IndexFunc] | None = None) -> None:
        self.store = Store(STANDARD_INDEXERS if indexers is None else indexers)
        self._pristine: dict[str, bytes] = {}
        self.add(*objects)

    # ---- what the test does ------------------------------------------------------------------

    def add(self, *objects: Obj) -> None:
        """Insert or replace objects (each copied, so later edits to the test's dicts do not leak in)."""
        for obj in objects:
            if not (obj.get("metadata") or {}).get("name"):
                raise ValueError("metadata.name: Required value: a cached object needs a name")
            own = mutable_copy(obj)
            self.store.upsert(own)
            self._pristine[object_key(own)] = orjson.dumps(own, option=orjson.OPT_SORT_KEYS)

    def remove(self, key: str) -> None:
        """Drop the object under `namespace/name` (or `name`); a missing key is an error in the test."""
        if self.store.remove(key) is None:
            raise KeyError(
                f"{key!r} is not in this informer (have: {', '.join(self.store.keys()) or 'none'})"
            )
        self._pristine.pop(key, None)

    def modified_keys(self) -> list[str]:
        """Keys of cached objects changed in place since they were added."""
        return sorted(
            key
            for key, obj in self.store.snapshot().items()
            if orjson.dumps(obj, option=orjson.OPT_SORT_KEYS) != self._pristine.get(key)
        )

    def assert_unmodified(self) -> None:
        modified = self.modified_keys()
        assert not modified, f"cached objects were mutated in place (copy them first): {modified}"

    # ---- what a reconciler reads (same names as SharedInformer) ------------------------------

    def get(self, key: str) -> Obj | None:
        return self.store.get(key)

    def list(self) -> list[Obj]:
        return self.store.list()

    def by_index(self, index: str, value: str) -> list[Obj]:
        return self.store.by_index(index, value)

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        self.store.add_indexers(indexers)

    def has_synced(self) -> bool:
        return True
