"""Cache projections: an informer keeps only the fields its process reads, frozen, interned and shared.

A 10k-pod cache of full objects costs ~11 KB per pod in CPython dicts; kruise-manager runs against
100k+ pods under a 512 MiB limit. Like controller-runtime's cache transforms, a `Projection` names the
paths worth keeping (`metadata.labels`, `status.containerStatuses.imageID`, ...) and drops the rest on
arrival. What it keeps is also made cheaper:

- strings are interned (label keys and values, images, owner UIDs, timestamps repeat across pods);
- subtrees declared `shared` (pod-template parts such as `spec.containers`, owner references) are
  hash-consed at every level: identical content across replicas is one object, held weakly so it
  dies with its pods, and a per-pod difference deep inside (each pod's own service-account token
  mount) costs only the nodes on its way up, not the rest of the template;
- every kept container is frozen (`FrozenDict` / `FrozenList`), so sharing is safe and a reader that
  tries to change a cached object fails at the write instead of corrupting every other reader. Read
  freely, copy (`kruise.kube.store.mutable_copy`) before changing.

A dropped field must never be read silently. With guarding on (`KRUISE_CACHE_GUARD=1`, set by the
test suites), every projected node is of a class that knows its kept keys, and reading any other key
(`[]`, `.get`, `in`) raises `DroppedFieldRead` naming the path and is recorded in `VIOLATIONS`, so a
test fails whichever controller or handler swallowed the exception. Copies of guarded objects stay
guarded (but mutable), so copying before reading is no way around it.
"""

from __future__ import annotations

import dataclasses
import itertools
import keyword
import os
import sys
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

GUARD_ENV = "KRUISE_CACHE_GUARD"

VIOLATIONS: list[str] = []
"""Every guarded read of a dropped path since the last `VIOLATIONS.clear()` (guard mode only)."""

Tree = dict[str, "Tree | None"]
"""Kept paths as a tree: a key mapped to None keeps that whole subtree."""

_INTERN_MAX = 128  # longer strings (JSON blobs in annotations, sha256 image IDs) rarely repeat exactly
_PROBATION = 4096  # content seen once, awaiting a second sighting (weak references, oldest dropped first)
_RECENT_RECORDS = 4096  # records by content, most recently met last: equal per-pod parts are one record
_BY_TEXT = 1024  # shared subtrees by their JSON text, most recently met last (a fast path before hashing)
_TEXT_MAX = 512  # longer texts (a pod's containers, mostly its own for its token mount) are not kept
# Types orjson would write as some other type's text (a datetime as its string, a str subclass as a str)
# raise instead, so equal text means equal values. (NaN and UUID objects would still pass as null and a
# string; decoded JSON, what a projection is given, holds neither.)
_TEXT_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
)
_RECORD_SHAPES = 256  # record classes per projection; an object of any further shape stays a FrozenDict


class DroppedFieldRead(KeyError):
    """A reader asked a projected object for a field its cache does not keep."""


def guard_enabled() -> bool:
    return os.environ.get(GUARD_ENV, "") not in ("", "0", "false", "record")


def recording() -> bool:
    return os.environ.get(GUARD_ENV, "") == "record"


READS: set[str] = set()
"""Record mode (`KRUISE_CACHE_GUARD=record`): every path read from a cached object (field discovery)."""


READER_PACKAGES = ("kruise.manager.controllers.", "kruise.webhook.handlers.", "kruise.webhook.")


def _reader() -> str:
    """The controller or handler package whose code is reading (nearest such frame on the stack)."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        for prefix in READER_PACKAGES:
            if module.startswith(prefix):
                return prefix + module[len(prefix) :].split(".")[0]
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _recording_class(owner: str, where: str, cache: dict[tuple[str, str], type] = {}) -> type:  # noqa: B006
    cls = cache.get((owner, where))
    if cls is not None:
        return cls

    def note(key: object) -> None:
        READS.add(f"{owner} {where}.{key} {_reader()}" if where else f"{owner} {key} {_reader()}")

    def __getitem__(self: dict[str, Any], key: str) -> Any:
        note(key)
        return dict.__getitem__(self, key)

    def get(self: dict[str, Any], key: str, default: Any = None) -> Any:
        note(key)
        return dict.get(self, key, default)

    def __contains__(self: dict[str, Any], key: object) -> bool:
        note(key)
        return dict.__contains__(self, key)

    namespace = {"__slots__": (), "__getitem__": __getitem__, "get": get, "__contains__": __contains__}
    cls = cache[(owner, where)] = type("RecordingDict", (FrozenDict,), namespace)
    twin = type("RecordingDict", (dict,), dict(namespace))
    cls._mutable_twin = twin._mutable_twin = twin  # type: ignore[attr-defined]
    return cls


def record_reads(value: Any, owner: str, where: str = "") -> Any:
    """A frozen copy of `value` whose every dict notes the paths `owner` reads from it in READS."""
    if isinstance(value, dict):
        cls = _recording_class(owner, where)
        return cls((k, record_reads(v, owner, f"{where}.{k}" if where else k)) for k, v in value.items())
    if isinstance(value, list):
        return FrozenList(record_reads(v, owner, where) for v in value)
    return value


def _readonly(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError(
        f"cached {type(self).__name__} is shared and read-only: "
        "take kruise.kube.store.mutable_copy(obj) first"
    )


class FrozenDict(dict):  # type: ignore[type-arg]
    """A dict a cache shares between readers: every mutating method raises."""

    __slots__ = ()
    __setitem__ = __delitem__ = _readonly
    clear = pop = popitem = setdefault = update = __ior__ = _readonly  # type: ignore[assignment]

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A list a cache shares between readers: every mutating method raises."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _readonly
    append = extend = insert = pop = remove = clear = sort = reverse = _readonly  # type: ignore[assignment]

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (list(self),))


class Record(Mapping):  # type: ignore[type-arg]
    """A frozen mapping whose values sit in slots of a class made for its key set (its "shape").

    A small dict costs ~184 bytes however few keys it has (the dict plus its own key table); a record
    costs 32 + 8 per value, its keys living once in its class. Pods have many small objects of few
    shapes that are unique to the pod (conditions, container statuses and their states), so a
    projection stores those as records (`compact` paths). Readers get a read-only `Mapping` (`[]`,
    `get`, `in`, iteration, `items`, `==` with a dict, `dict(r)`, `{**r}`); orjson serializes it as
    the object it came from (a record class is a slots dataclass whose fields are the keys, in order);
    copies (`copy`, `deepcopy`, `mutable_copy`) are dicts. Not a `dict`: code that checks
    `isinstance(x, dict)` on these parts must check `Mapping`.
    """

    __slots__ = ()
    _fields_: tuple[str, ...] = ()
    _keyset: frozenset[str] = frozenset()
    _kept: frozenset[str] | None = None  # guard on: the keys the projection keeps here
    _where: str = ""

    def _absent(self, key: object) -> None:
        if self._kept is not None and key not in self._kept:
            raise _miss(self._where, key)

    def __getitem__(self, key: str) -> Any:
        if key in self._keyset:
            value = getattr(self, key)
            return value.unpack() if value.__class__ is _Packed else value
        self._absent(key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key in self._keyset:
            value = getattr(self, key)
            return value.unpack() if value.__class__ is _Packed else value
        self._absent(key)
        return default

    def __contains__(self, key: object) -> bool:
        if key in self._keyset:
            return True
        self._absent(key)
        return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields_)

    def __len__(self) -> int:
        return len(self._fields_)

    def __repr__(self) -> str:
        return repr(self.copy())

    def copy(self) -> dict[str, Any]:
        return {key: self[key] for key in self._fields_}

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.copy(),))

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):  # one shape: compare the slots (hash-consing compares many)
            return all(getattr(self, key) == getattr(other, key) for key in self._fields_)
        return Mapping.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __or__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return {**self, **other}

    def __ror__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return {**other, **self}

    __setitem__ = __delitem__ = __setattr__ = __delattr__ = _readonly
    clear = pop = popitem = setdefault = update = _readonly


def _record_key(key: str) -> bool:
    """Whether `key` can be a record field (an attribute named as the key, serialized by orjson)."""
    return (
        key.isidentifier()
        and not keyword.iskeyword(key)
        and not key.startswith("_")
        and not hasattr(Record, key)
    )


def _record_class(where: str, keys: tuple[str, ...], kept: frozenset[str] | None, weak: bool = False) -> type:
    """`weak`: a shared record, held weakly by the hash-consing tables (one more slot)."""
    cls: Any = dataclasses.make_dataclass(
        "SharedRecord" if weak else "CachedRecord",
        keys,
        bases=(Record,),
        init=False,
        repr=False,
        eq=False,
        slots=True,
        weakref_slot=weak,
    )
    cls.__module__ = __name__
    cls._fields_, cls._keyset, cls._kept, cls._where = keys, frozenset(keys), kept, where
    cls._setters = tuple(cls.__dict__[key].__set__ for key in keys)
    if kept is not None:
        twin = _guarded(dict, where, kept)
        cls._mutable_twin = twin._mutable_twin = twin  # type: ignore[attr-defined]
    return cls  # type: ignore[no-any-return]


_SCALARS = frozenset({bool, int, float, type(None)})
"""Exact scalar types, which a record's content key holds with their type, as True and 1 are equal as
keys but not as content; strings stand for themselves, anything else (containers, an IntEnum) by its
identity: the record keeping the key holds it, so the identity cannot pass to another object meanwhile."""


class _Layout:
    """What the packed lists of many objects have in common: each element's record class and every
    value that is not per object (a condition's type and status, a container status's name, image,
    resources), with the places of the per-object values. Shared by the lists that agree on all of it,
    held weakly, so it goes with the last of them."""

    __slots__ = ("__weakref__", "elements")

    def __init__(self, elements: tuple[Any, ...]) -> None:
        # Each element: (record class, fields); a field is (0, value), (1, index into the packed
        # tuple) or (2, a nested element: a dict holding a per-object value somewhere below).
        self.elements = elements


def _build(element: tuple[Any, ...], values: tuple[Any, ...]) -> Record:
    cls, fields = element
    return _new_record(
        cls,
        [x if kind == 0 else values[x] if kind == 1 else _build(x, values) for kind, x in fields],
    )


class _Packed(tuple):  # type: ignore[type-arg]
    """A list of records kept as one tuple: its layout first, then the values only this object has
    (for six pod conditions: six `lastTransitionTime`s, ~100 bytes instead of ~490 for the list and
    its six records). It sits in the slot of its parent record, whose reads (`[]`, `get`, `copy`,
    `items`, `==`) give the list back as fresh records of the same classes (so the cache guard still
    knows their kept keys); orjson cannot write it without `json_default` (no silent wrong JSON)."""

    __slots__ = ()

    def unpack(self) -> FrozenList:
        elements = self[0].elements
        return FrozenList([_build(element, self) for element in elements])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is _Packed and self[0] is other[0]:  # type: ignore[index]
            return tuple.__eq__(self, other)
        if other.__class__ is _Packed:
            other = other.unpack()  # type: ignore[attr-defined]
        return self.unpack() == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


def json_default(value: Any) -> Any:
    """orjson's `default` for cached objects: a packed list as its list (a cached pod's `status` holds
    its conditions and container statuses so)."""
    if value.__class__ is _Packed:
        return value.unpack()
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


_VARIES = object()  # a per-object value's place in a layout's content key


def _new_record(cls: Any, values: Iterable[Any]) -> Record:
    record = cls.__new__(cls)
    for store, value in zip(cls._setters, values, strict=True):
        store(record, value)
    return record  # type: ignore[no-any-return]


def _drop_oldest(window: dict[Any, Any]) -> None:
    """Drop the oldest quarter of a full window (a dict in insertion order, oldest first).

    One at a time, each drop (`next(iter(window))`) walked the slots its predecessors had emptied
    at the front of the dict's entry table, up to its next resize: a tenth of projecting a pod."""
    for key in list(itertools.islice(window, max(1, len(window) // 4))):
        del window[key]


class _SharedDict(FrozenDict):
    __slots__ = ("__weakref__",)


class _SharedList(FrozenList):
    __slots__ = ("__weakref__",)


def _miss(where: str, key: object) -> DroppedFieldRead:
    path = f"{where}.{key}" if where else str(key)
    VIOLATIONS.append(path)
    return DroppedFieldRead(f"{path}: not kept by this cache's projection (declare it to read it)")


def _guarded(base: type, where: str, kept: frozenset[str]) -> type:
    """A dict class whose reads of keys outside `kept` raise (and are recorded)."""

    def miss(key: object) -> DroppedFieldRead:
        return _miss(where, key)

    # A key present is fine even if undeclared: a reader's copy may have gained it by its own write.
    def __getitem__(self: dict[str, Any], key: str) -> Any:
        if key not in kept and not dict.__contains__(self, key):
            raise miss(key)
        return dict.__getitem__(self, key)

    def get(self: dict[str, Any], key: str, default: Any = None) -> Any:
        if key not in kept and not dict.__contains__(self, key):
            raise miss(key)
        return dict.get(self, key, default)

    def __contains__(self: dict[str, Any], key: object) -> bool:
        if key not in kept and not dict.__contains__(self, key):
            raise miss(key)
        return dict.__contains__(self, key)

    namespace = {"__slots__": (), "__getitem__": __getitem__, "get": get, "__contains__": __contains__}
    return type(f"Guarded{base.__name__}", (base,), namespace)


class ProjectedCopy(dict):  # type: ignore[type-arg]
    """A mutable copy of a projected object: marked, because it lacks what the cache dropped and so
    must never be PUT back whole (`is_projected`)."""

    __slots__ = ()


def thaw(value: Any) -> Any:
    """A private mutable deep copy; guarded nodes stay guarded (mutable twins of their class), frozen
    ones become `ProjectedCopy`, so the copy still says where it came from."""
    if isinstance(value, Record):
        twin = getattr(type(value), "_mutable_twin", ProjectedCopy)
        return twin([(k, thaw(v)) for k, v in value.items()])
    if isinstance(value, dict):
        twin = getattr(type(value), "_mutable_twin", None)
        if twin is None:
            twin = ProjectedCopy if isinstance(value, FrozenDict) else dict
        return twin([(k, thaw(v)) for k, v in dict.items(value)])
    if isinstance(value, list):
        return [thaw(v) for v in value]
    return value


def is_guarded(obj: Any) -> bool:
    return getattr(type(obj), "_mutable_twin", None) is not None


def _marked(obj: Any) -> bool:
    return isinstance(obj, (FrozenDict, ProjectedCopy, Record)) or is_guarded(obj)


def is_projected(obj: Any) -> bool:
    """True for a projecting cache's object or a copy of one (also a shallow `dict(obj)` or `{**obj}`:
    its metadata still is): it may lack fields the server has, so it must never be PUT back whole."""
    return _marked(obj) or (isinstance(obj, dict) and _marked(dict.get(obj, "metadata")))


def parse_paths(paths: Iterable[str]) -> Tree:
    """`a.b.c` strings -> a tree; a path that is a prefix of another keeps the whole subtree."""
    tree: Tree = {}
    for path in paths:
        parts = path.split(".")
        if not all(parts):
            raise ValueError(f"projection path {path!r}: empty segment")
        node = tree
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if part in node and node[part] is None:
                break  # already whole
            if last:
                node[part] = None
            else:
                child = node.setdefault(part, {})
                assert child is not None
                node = child
    return tree


def _within(path: str, root: str) -> bool:
    """`path` is `root` or below it."""
    return path == root or path.startswith(root + ".")


def _paths(tree: Tree, prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, child in tree.items():
        path = f"{prefix}.{key}" if prefix else key
        out.extend([path] if child is None else _paths(child, path))
    return out


class Projection:
    """Which paths of an object a cache keeps, and which kept subtrees are shared across objects.

    Paths go through lists transparently: `status.conditions.type` keeps the `type` of every
    condition. `shared` paths must be kept too; their whole content is hash-consed.
    """

    def __init__(
        self,
        keep: Iterable[str],
        shared: Iterable[str] = (),
        *,
        unique: Iterable[str] = (),
        compact: Iterable[str] = (),
        own_records: Iterable[str] = (),
        packed: Mapping[str, Iterable[str]] | None = None,
        owner: str = "",
        guard: bool | None = None,
    ) -> None:
        """`unique`: paths whose strings differ on every object (names, uids, IPs): not interned, as an
        interned string that never repeats only adds its entry in the interpreter's intern table.
        `compact`: kept paths whose objects, and every object below them, are stored as `Record`s
        (small per-object parts whose readers only read: their `isinstance(x, dict)` is False). A
        compact path at or below a shared one makes that subtree's dicts shared records: hash-consed
        like the rest, a third of a dict's size where content is the object's own (a container that
        mounts the pod's own token volume).
        `own_records`: kept paths whose own object, not what is below it, is a `Record` (an object's
        own dicts that every reader goes through, such as a pod's `metadata`, `spec` and `status`).
        `packed`: compact list paths, each with the paths (relative to an element) of its values that
        differ per object (timestamps, container IDs): the list is kept as one `_Packed` tuple of
        those values, everything else in a `_Layout` shared by the objects that agree on it. Its
        parent must be a record (own or compact); reading it gives the list of records back.
        `owner` names the reader in messages (`kruise-manager pods`)."""
        self.owner = owner
        self.unique = frozenset(unique)
        self._unique_parents = frozenset(path.rpartition(".")[0] for path in self.unique)
        self.keep = sorted(set(keep))
        self.tree = parse_paths(self.keep)
        self.shared = sorted(set(shared))
        for path in self.shared:
            if not self._kept(path):
                raise ValueError(f"projection shared path {path!r}: must be a kept path")
        self._shared_tree = parse_paths(self.shared)
        self.compact = sorted(set(compact))
        for path in self.compact:
            if not self._kept(path):
                raise ValueError(f"projection compact path {path!r}: must be a kept path")
            if any(_within(s, path) and s != path for s in self.shared):
                raise ValueError(f"projection compact path {path!r}: must not hold a shared path below it")
        self.own_records = frozenset(own_records)
        for path in sorted(self.own_records):
            if not self._kept(path):
                raise ValueError(f"projection own-records path {path!r}: must be a kept path")
            if any(_within(path, s) for s in self.shared):
                raise ValueError(f"projection own-records path {path!r}: must not be in a shared path")
        self.packed = {path: frozenset(vary) for path, vary in (packed or {}).items()}
        for path in sorted(self.packed):
            parent = path.rpartition(".")[0]
            if not self._kept(path) or path not in self.compact:
                raise ValueError(f"projection packed path {path!r}: must be a kept compact path")
            if parent not in self.own_records and not any(_within(parent, c) for c in self.compact):
                raise ValueError(f"projection packed path {path!r}: its parent must be a record")
            if any(_within(s, path) or _within(path, s) for s in self.shared):
                raise ValueError(f"projection packed path {path!r}: must not be in or hold a shared path")
        self._vary_trees = {path: parse_paths(vary) for path, vary in self.packed.items()}
        self._layouts: weakref.WeakValueDictionary[tuple[Any, ...], _Layout] = weakref.WeakValueDictionary()
        self._layout_probation: dict[tuple[Any, ...], bool] = {}  # content met once (ids: not held)
        self.guard = guard_enabled() if guard is None else guard
        self._classes: dict[tuple[str, bool], type] = {}
        self._records: dict[tuple[str, tuple[str, ...]], type] = {}
        self._shared_records: dict[tuple[str, tuple[str, ...]], type | None] = {}
        self._table: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self._probation: dict[int, weakref.ref[Any]] = {}
        self._recent: dict[tuple[Any, ...], Record] = {}
        self._by_text: dict[tuple[str, bytes], tuple[tuple[str, bytes], weakref.ref[Any], int, bool]] = {}
        self._compacting: dict[str, bool] = {}

    def keeps(self, path: str) -> bool:
        """True when the cache keeps `path`, whole or in part."""
        return self._kept(path)

    def _kept(self, path: str) -> bool:
        node: Tree | None = self.tree
        for part in path.split("."):
            if node is None:
                return True
            if part not in node:
                return False
            node = node[part]
        return True

    def union(self, other: Projection) -> Projection:
        """Keep what either keeps (two consumers of one shared informer)."""
        return Projection(
            [*self.keep, *other.keep],
            [*self.shared, *other.shared],
            unique=self.unique | other.unique,
            compact=[*self.compact, *other.compact],
            own_records=self.own_records | other.own_records,
            packed={
                path: self.packed.get(path, frozenset()) | other.packed.get(path, frozenset())
                for path in {*self.packed, *other.packed}
            },
            owner=self.owner,
            guard=self.guard,
        )

    def _identity(self) -> tuple[Any, ...]:
        packed = tuple(sorted((path, tuple(sorted(vary))) for path, vary in self.packed.items()))
        return (
            tuple(self.keep),
            tuple(self.shared),
            tuple(self.compact),
            tuple(sorted(self.own_records)),
            packed,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Projection) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return (
            f"Projection(keep={_paths(self.tree)!r}, shared={self.shared!r}, compact={self.compact!r}, "
            f"own_records={sorted(self.own_records)!r}, packed={sorted(self.packed)!r})"
        )

    # ---- applying ----------------------------------------------------------------------------

    def apply(self, obj: Mapping[str, Any]) -> FrozenDict:
        """The cached form of `obj`: kept paths only, frozen, interned, shared where declared."""
        if recording():
            return record_reads(obj, self.owner)  # type: ignore[no-any-return]
        return self._dict(obj, self.tree, self._shared_tree, "")

    def _class(self, where: str, tree: Tree, share_here: bool) -> type:
        base = _SharedDict if share_here else FrozenDict
        if not self.guard:
            return base
        cls = self._classes.get((where, share_here))
        if cls is None:
            cls = _guarded(base, where, frozenset(tree))
            twin = _guarded(dict, where, frozenset(tree))
            twin._mutable_twin = twin  # type: ignore[attr-defined]
            cls._mutable_twin = twin  # type: ignore[attr-defined]
            self._classes[(where, share_here)] = cls
        return cls

    def _dict(self, obj: Mapping[str, Any], tree: Tree, shared: Tree, where: str) -> Any:
        items = []
        for key, value in obj.items():
            if key not in tree:
                continue
            path = f"{where}.{key}" if where else key
            # In `shared`, None marks a shared root; a subtree means shared roots further down.
            below: Tree | None = shared.get(key, {}) if shared else {}
            if path in self.packed and value.__class__ is list and value:
                packed = self._pack(value, tree[key], path)
                if packed is not None:
                    items.append((sys.intern(key), packed))
                    continue
            items.append((sys.intern(key), self._value(value, tree[key], below, path)))
        own = where in self.own_records
        if own or self._compacts(where):
            record = self._record(where, items, frozenset(tree) if self.guard else None, own)
            if record is not None:
                return record
        items = [(k, v.unpack() if v.__class__ is _Packed else v) for k, v in items]
        return self._class(where, tree, False)(items)

    def _pack(self, value: list[Any], tree: Tree | None, where: str) -> _Packed | FrozenList | None:
        """A list of dicts at a packed path as a `_Packed` tuple; its records (a `FrozenList`) while
        its layout is not yet met twice; None when it cannot be one (an element not a dict, a key no
        record can have, too many shapes): then it is a list as usual."""
        values: list[Any] = [None]
        elements = []
        keys = []
        vary = self._vary_trees[where]
        for element in value:
            if element.__class__ is not dict:
                return None
            built = self._pack_dict(element, tree, vary, where, values)
            if built is None:
                return None
            elements.append(built[0])
            keys.append(built[1])
        content = tuple(keys)
        layout = self._layouts.get(content)
        if layout is None:
            # A layout costs ~1 KB (its elements, their fields, the content key): worth it only when
            # shared. Content met once waits in a bounded window (no layout kept); until its second
            # sighting the list is kept as records, as an unpacked list would be.
            if not self._layout_probation.pop(content, False):
                self._layout_probation[content] = True
                if len(self._layout_probation) > _PROBATION:
                    _drop_oldest(self._layout_probation)
                values[0] = _Layout(tuple(elements))
                return _Packed(values).unpack()
            layout = self._layouts[content] = _Layout(tuple(elements))
        values[0] = layout
        return _Packed(values)

    def _pack_dict(
        self, obj: dict[str, Any], tree: Tree | None, vary: Tree, where: str, values: list[Any]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
        """One dict of a packed list: (its layout element, its part of the layout's content key);
        its per-object values appended to `values`."""
        fields: list[tuple[int, Any]] = []
        content: list[Any] = []
        names = []
        for key, child in obj.items():
            if tree is not None and key not in tree:
                continue
            key = sys.intern(key)
            names.append(key)
            path = f"{where}.{key}"
            subtree = None if tree is None else tree[key]
            below = vary.get(key)
            if below is not None and child.__class__ is dict:  # per-object values further down
                nested = self._pack_dict(child, subtree, below, path, values)
                if nested is None:
                    return None
                fields.append((2, nested[0]))
                content.append(nested[1])
                continue
            node = self._value(child, subtree, {}, path)
            if key in vary:
                fields.append((1, len(values)))
                values.append(node)
                content.append(_VARIES)
            else:
                fields.append((0, node))
                kind = node.__class__
                content.append(node if kind is str else (kind, node) if kind in _SCALARS else id(node))
        cls = self._record_class_for(where, tuple(names), tree)
        if cls is None:
            return None
        return (cls, tuple(fields)), (cls, *content)

    def _record_class_for(self, where: str, keys: tuple[str, ...], tree: Tree | None) -> type | None:
        """The (unshared) record class of shape `keys` at `where`; None when it cannot be one."""
        cls = self._records.get((where, keys))
        if cls is None:
            if len(self._records) >= _RECORD_SHAPES or not all(map(_record_key, keys)):
                return None
            kept = frozenset(tree) if self.guard and tree is not None else None
            cls = self._records[(where, keys)] = _record_class(where, keys, kept)
        return cls

    def _compacts(self, where: str) -> bool:
        """Whether objects at `where` are stored as records (at or below a `compact` path)."""
        known = self._compacting.get(where)
        if known is None:
            known = self._compacting[where] = any(_within(where, path) for path in self.compact)
        return known

    def _record(
        self, where: str, items: list[tuple[str, Any]], kept: frozenset[str] | None, own: bool = False
    ) -> Record | None:
        """`items` as a record of their shape; None when the shape cannot be one (odd keys, many shapes).
        `own`: the object's own part (its metadata), equal to no other object's: not looked up."""
        keys = tuple([key for key, _ in items])
        cls = self._records.get((where, keys))
        if cls is None:
            if len(self._records) >= _RECORD_SHAPES or not all(map(_record_key, keys)):
                return None
            cls = self._records[(where, keys)] = _record_class(where, keys, kept)
        values = [value for _, value in items]
        if own:
            return _new_record(cls, values)
        # Each value as part of the content key (see _SCALARS), inline: a call per value was a
        # tenth of projecting a pod.
        content = (
            cls,
            *[
                v if v.__class__ is str else (v.__class__, v) if v.__class__ in _SCALARS else id(v)
                for v in values
            ],
        )
        known = self._recent.pop(content, None)
        record = known if known is not None else _new_record(cls, values)
        self._recent[content] = record  # (back) at the young end: what keeps recurring stays
        if known is None and len(self._recent) > _RECENT_RECORDS:
            _drop_oldest(self._recent)
        return record

    def _shared_record_class(
        self, where: str, items: list[tuple[str, Any]], tree: Tree | None
    ) -> type | None:
        """The shared record class for `items`' shape at `where`; None when it cannot be one."""
        keys = tuple([key for key, _ in items])
        known = self._shared_records.get((where, keys), False)
        if known is not False:
            return known  # type: ignore[return-value]
        if len(self._shared_records) >= _RECORD_SHAPES:
            return None  # a dict, as any further shape: the table of shapes stays bounded
        cls = None
        if keys and all(map(_record_key, keys)):  # ({} stays a dict: one object for every pod anyway)
            kept = frozenset(tree) if self.guard and tree is not None else None
            cls = _record_class(where, keys, kept, weak=True)
        self._shared_records[(where, keys)] = cls
        return cls

    def _value(self, value: Any, tree: Tree | None, shared: Tree | None, where: str) -> Any:
        if isinstance(value, str):
            return self._string(value, where)
        share_here = shared is None
        below: Tree = shared or {}
        if share_here and isinstance(value, (dict, list)):
            return self._canon(value, tree, where, {})[0]
        if isinstance(value, dict):
            if tree is None:
                return self._whole(value, where)
            return self._dict(value, tree, below, where)
        if isinstance(value, list):
            return FrozenList([self._value(v, tree, below, where) for v in value])
        return value

    def _string(self, value: str, where: str) -> str:
        if len(value) > _INTERN_MAX or where in self.unique:
            return value
        return sys.intern(value)

    def _whole(self, value: Any, where: str) -> Any:
        """A whole kept subtree: frozen and interned all the way down (no guard: every key is kept)."""
        if isinstance(value, dict):
            # Strings and scalars inline (most values of a condition or a container status are):
            # a call each was a third of projecting one.
            items = []
            for k, v in value.items():
                cls = v.__class__
                if cls is str:
                    if len(v) <= _INTERN_MAX and not (
                        where in self._unique_parents and f"{where}.{k}" in self.unique
                    ):
                        v = sys.intern(v)
                elif cls not in _SCALARS:
                    v = self._whole(v, f"{where}.{k}")
                items.append((sys.intern(k), v))
            if self._compacts(where):
                record = self._record(where, items, None)
                if record is not None:
                    return record
            return FrozenDict(items)
        if isinstance(value, list):
            return FrozenList([self._whole(v, where) for v in value])
        if isinstance(value, str):
            return self._string(value, where)
        return value

    def _canon(self, value: Any, tree: Tree | None, where: str, memo: dict[int, Any]) -> tuple[Any, int]:
        """A shared subtree, hash-consed at every level: (its cached form, a hash of its content).

        Every dict and list in it is one object per distinct content, not only the whole: replicas'
        containers differ by the `kube-api-access-<random>` mount the ServiceAccount admission gives
        each pod, and that one difference must not cost each pod its own env, probes, resources,
        ports and mounts. Children are made canonical first, so a parent's equality check meets
        identical children and stops at `is`. `memo` shares repeats within one object (the token
        mount in each of a pod's containers) without a table entry for each pod."""
        if isinstance(value, (dict, list)) and value:
            return self._canon_by_text(value, tree, where, memo)
        return self._canon_walk(value, tree, where, memo)

    def _canon_by_text(
        self, value: Any, tree: Tree | None, where: str, memo: dict[int, Any]
    ) -> tuple[Any, int]:
        """`_canon` for a container, first looked up by its JSON text: a replica's env, probes,
        resources, tolerations and owner references are met once per pod, and serializing them in C
        and finding the text already seen is cheaper than walking and hashing them node by node (the
        walk was most of a list's sync time). Equal text at the same path projects to equal content,
        so the node found is the one the walk would return; unequal text still meets its equal
        content by the walk's hash."""
        try:
            text = orjson.dumps(value, option=_TEXT_OPTIONS)
        except TypeError:  # not plain JSON (a tuple, an int key, a datetime): only the walk tells it apart
            return self._canon_walk(value, tree, where, memo)
        if len(text) > _TEXT_MAX:  # kept texts are memory too; the walk looks its parts up by text
            return self._canon_walk(value, tree, where, memo)
        seen = self._by_text.pop((where, text), None)
        if seen is not None:
            key, ref, content, promoted = seen
            node = ref()
            if node is not None:
                # Met again in another object: shared now, so the walk finds it once its text is gone
                # from the window. A repeat within this object (the token mount in each of a pod's
                # containers: `memo`) is no reason for a table entry per pod.
                if not promoted and memo.get(content) is not node:
                    self._table[content] = node
                    promoted = True
                self._by_text[key] = (key, ref, content, promoted)
                return node, content
        node, content = self._canon_walk(value, tree, where, memo)
        # orjson's answer keeps its 4 KiB buffer: a copy of the exact size is what stays in the window,
        # reused as the key when the entry moves (a new key would be this lookup's large one).
        key = (where, memoryview(text).tobytes())
        self._by_text[key] = (key, weakref.ref(node), content, False)
        if len(self._by_text) > _BY_TEXT:
            _drop_oldest(self._by_text)
        return node, content

    def _canon_walk(self, value: Any, tree: Tree | None, where: str, memo: dict[int, Any]) -> tuple[Any, int]:
        """`_canon` node by node: each child made canonical, then this node by its content hash."""
        if isinstance(value, dict):
            items: list[tuple[str, Any]] = []
            parts: list[Any] = []
            for key, child in value.items():
                if tree is not None and key not in tree:
                    continue
                key = sys.intern(key)
                kind = child.__class__
                if kind is str:  # strings and scalars inline, as `_canon` would (most leaves are)
                    node = self._string(child, f"{where}.{key}")
                    content = hash(node)
                elif kind in _SCALARS:
                    node, content = child, hash((kind, child))
                else:
                    node, content = self._canon(
                        child, None if tree is None else tree[key], f"{where}.{key}", memo
                    )
                items.append((key, node))
                parts += (key, content)
            record_cls = self._shared_record_class(where, items, tree) if self._compacts(where) else None
            if record_cls is not None:
                cls = record_cls
                built: Any = _new_record(cls, [node for _, node in items])
            else:
                cls = _SharedDict if tree is None else self._class(where, tree, True)
                built = cls(items)
        elif isinstance(value, list):
            pairs = [self._canon(v, tree, where, memo) for v in value]
            cls = _SharedList
            built = _SharedList([node for node, _ in pairs])
            parts = [content for _, content in pairs]
        elif isinstance(value, str):
            value = self._string(value, where)
            return value, hash(value)
        else:
            return value, hash((value.__class__, value))
        content = hash((cls, *parts))
        return self._canonical(built, content, memo), content

    def _canonical(self, node: Any, content: int, memo: dict[int, Any]) -> Any:
        """The one object alive with `node`'s content, `node` itself if it is the first.

        Content seen once is only on probation (a bounded window of weak references, no table
        entry): most per-pod nodes (a container holding the pod's own token mount, the list of
        them) never repeat, and a table entry for each would cost more than sharing saves. The
        second sighting within the window makes the first object the shared one."""
        for known in (self._table.get(content), memo.get(content)):
            if known is not None and type(known) is type(node) and known == node:
                return known
        ref = self._probation.pop(content, None)
        first = ref() if ref is not None else None
        if first is not None and type(first) is type(node) and first == node:
            self._table[content] = first
            return first
        memo[content] = node
        self._probation[content] = weakref.ref(node)
        if len(self._probation) > _PROBATION:
            _drop_oldest(self._probation)
        return node

    @property
    def shared_objects(self) -> int:
        """Shared subtrees met more than once and alive now (for tests): one met again whole counts
        once, not each part of it, as its parts were never looked at again."""
        return len(self._table)
