"""The informer cache: objects by key, plus indexes for the lookups controllers make.

Cached objects are SHARED and READ-ONLY: every controller and handler sees the same dict. Mutating
one corrupts everyone's view and the next diff. To change an object, take `mutable_copy(obj)`,
edit the copy and write it to the apiserver; the cache will follow through the watch.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import orjson

from kruise.api.controllerref import controller_of
from kruise.api.objects import MutableObj, meta_of, owner_refs_of, spec_of
from kruise.kube.projection import FrozenDict, ProjectedCopy, is_guarded, json_default, thaw
from kruise.kube.resources import object_key

IndexFunc = Callable[[MutableObj], Iterable[str]]

NAMESPACE_INDEX = "namespace"
OWNER_UID_INDEX = "ownerRefUID"
NODE_NAME_INDEX = "spec.nodeName"


def index_by_namespace(obj: MutableObj) -> list[str]:
    namespace = meta_of(obj).get("namespace")
    return [namespace] if namespace else []


def index_by_owner_uid(obj: MutableObj) -> list[str]:
    return [ref["uid"] for ref in owner_refs_of(obj) if ref.get("uid")]


def index_by_node_name(obj: MutableObj) -> list[str]:
    node = spec_of(obj).get("nodeName")
    return [node] if node else []


def index_by_controller_uid(obj: MutableObj) -> list[str]:
    """Only the owner marked `controller: true` (kruise's `.metadata.controller` index)."""
    ref = controller_of(obj)
    return [ref["uid"]] if ref is not None and ref.get("uid") else []


STANDARD_INDEXERS: dict[str, IndexFunc] = {
    NAMESPACE_INDEX: index_by_namespace,
    OWNER_UID_INDEX: index_by_owner_uid,
    NODE_NAME_INDEX: index_by_node_name,
}


STORE_FIELDS: tuple[str, ...] = (
    "apiVersion",
    "kind",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.ownerReferences.uid",
    "spec.nodeName",
)
"""What the informer and the standard indexes read of every object: the floor of any projection."""

POD_UNIQUE: tuple[str, ...] = (
    "metadata.name",
    "metadata.resourceVersion",
    "metadata.uid",
    "status.containerStatuses.containerID",
    "status.initContainerStatuses.containerID",
    "status.podIP",
)
"""Pod strings no other pod has: a projection does not intern them."""

CONTAINER_STATUS_VARIES: tuple[str, ...] = (
    "containerID",
    "imageID",
    "lastState.terminated.containerID",
    "lastState.terminated.finishedAt",
    "lastState.terminated.startedAt",
    "state.running.startedAt",
    "state.terminated.containerID",
    "state.terminated.finishedAt",
    "state.terminated.startedAt",
    "volumeMounts",
)
"""What differs per pod in a container's status: the rest (name, image, ready, restart count, resources,
the state's kind and reason) is the same for a template's running replicas; the image ID is the same
too unless the tag moved between two nodes' pulls; the mounts (kubelets 1.30+) name the pod's own
token volume."""


def mutable_copy(obj: MutableObj) -> MutableObj:
    """A private deep copy of a cached object, via orjson (several times faster than copy.deepcopy).

    A guarded projection (tests) copies into guarded dicts: reading a dropped field from the copy
    still fails."""
    if is_guarded(obj):
        return thaw(obj)  # type: ignore[no-any-return]
    copied = orjson.loads(orjson.dumps(obj, default=json_default))
    if isinstance(obj, FrozenDict) and isinstance(copied.get("metadata"), dict):
        # Marked as a projection's copy: `Client.update` refuses to PUT it (it lacks dropped fields).
        copied["metadata"] = ProjectedCopy(copied["metadata"])
        return ProjectedCopy(copied)
    return copied  # type: ignore[no-any-return]


@dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """A delete the informer inferred on relist: `obj` is the last state it saw, possibly stale."""

    key: str
    obj: MutableObj


def unwrap_tombstone(obj: MutableObj | DeletedFinalStateUnknown) -> MutableObj:
    """The object a delete handler should use, whether it got the final state or a tombstone."""
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


def _add_key(index: dict[str, list[str]], value: str, key: str) -> None:
    keys = index.get(value)
    if keys is None:
        index[value] = [key]
        return
    at = bisect_left(keys, key)
    if at == len(keys) or keys[at] != key:
        keys.insert(at, key)


def _discard_key(index: dict[str, list[str]], value: str, key: str) -> None:
    keys = index.get(value)
    if keys is None:
        return
    at = bisect_left(keys, key)
    if at < len(keys) and keys[at] == key:
        del keys[at]
        if not keys:
            del index[value]


class Store:
    """Objects by `namespace/name` key with named secondary indexes (value -> sorted list of keys).

    An index holds a sorted list per value, not a set: 8 bytes a key against a set's ~40 (its table
    is kept under 60% full and grows fourfold), for every pod in each of three indexes; lookups
    return keys sorted anyway. An insert or removal moves the list's tail (memmove), and an update
    that keeps an object's index values (almost every update) does not touch the index."""

    def __init__(self, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, MutableObj] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._indices: dict[str, dict[str, list[str]]] = {name: {} for name in self._indexers}

    # ---- indexers ----------------------------------------------------------------------------

    def add_indexers(self, indexers: dict[str, IndexFunc]) -> None:
        """Register more indexes; existing objects are indexed at once."""
        for name, fn in indexers.items():
            if name in self._indexers:
                if self._indexers[name] is fn:
                    continue
                raise ValueError(f"indexer {name!r}: already registered with a different function")
            self._indexers[name] = fn
            index: dict[str, list[str]] = {}
            for key, obj in self._items.items():
                for value in fn(obj):
                    _add_key(index, value, key)
            self._indices[name] = index

    @property
    def indexer_names(self) -> list[str]:
        return list(self._indexers)

    def _unindex(self, key: str, obj: MutableObj) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                _discard_key(index, value, key)

    def _index(self, key: str, obj: MutableObj) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                _add_key(index, value, key)

    def _reindex(self, key: str, old: MutableObj, new: MutableObj) -> None:
        for name, fn in self._indexers.items():
            before, after = fn(old), fn(new)
            if before == after:
                continue
            index = self._indices[name]
            for value in before:
                _discard_key(index, value, key)
            for value in after:
                _add_key(index, value, key)

    # ---- writes (informer only) --------------------------------------------------------------

    def upsert(self, obj: MutableObj) -> MutableObj | None:
        """Insert or replace; return the previous object under the same key."""
        key = object_key(obj)
        old = self._items.get(key)
        self._items[key] = obj
        if old is None:
            self._index(key, obj)
        else:
            self._reindex(key, old, obj)
        return old

    def remove(self, key: str) -> MutableObj | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    # ---- reads -------------------------------------------------------------------------------

    def get(self, key: str) -> MutableObj | None:
        return self._items.get(key)

    def get_by_name(self, namespace: str | None, name: str) -> MutableObj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def snapshot(self) -> dict[str, MutableObj]:
        """A shallow copy of the key -> object map (the objects themselves stay shared)."""
        return dict(self._items)

    def keys(self) -> list[str]:
        return list(self._items)

    def list(self) -> list[MutableObj]:
        return list(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[MutableObj]:
        return iter(list(self._items.values()))

    def index_keys(self, index: str, value: str) -> list[str]:
        if index not in self._indices:
            raise KeyError(f"index {index!r} does not exist (have: {', '.join(self._indexers) or 'none'})")
        return list(self._indices[index].get(value, ()))

    def by_index(self, index: str, value: str) -> list[MutableObj]:
        return [self._items[k] for k in self.index_keys(index, value)]

    def index_values(self, index: str) -> list[str]:
        return list(self._indices.get(index, {}))


@dataclass
class RelistDiff:
    """What changed between the cache and a fresh list: the events a relist must deliver."""

    added: list[MutableObj]
    updated: list[tuple[MutableObj, MutableObj]]
    deleted: list[DeletedFinalStateUnknown]


def diff_relist(cached: dict[str, MutableObj], fresh: Iterable[MutableObj]) -> RelistDiff:
    """Compare by key, uid and resourceVersion; unchanged objects produce no event (nothing phantom).

    Deliver `deleted` before `added`: a recreated object appears in both.

    Objects missing from the fresh list were deleted while we were not watching; their final
    state is unknown, so they are reported as tombstones carrying the last state we saw.
    """
    added: list[MutableObj] = []
    updated: list[tuple[MutableObj, MutableObj]] = []
    deleted: list[DeletedFinalStateUnknown] = []
    seen: set[str] = set()
    for obj in fresh:
        key = object_key(obj)
        seen.add(key)
        old = cached.get(key)
        if old is None:
            added.append(obj)
            continue
        old_meta, new_meta = old.get("metadata") or {}, obj.get("metadata") or {}
        if old_meta.get("uid") != new_meta.get("uid"):
            # Deleted and recreated under the same name while we were away: the old incarnation
            # goes as a tombstone, the new one arrives as an add.
            deleted.append(DeletedFinalStateUnknown(key, old))
            added.append(obj)
            continue
        if old_meta.get("resourceVersion") != new_meta.get("resourceVersion"):
            updated.append((old, obj))
    deleted.extend(DeletedFinalStateUnknown(key, obj) for key, obj in cached.items() if key not in seen)
    return RelistDiff(added, updated, deleted)
