"""Reading `kruise.io/sidecarset-inplace-update-state` the way upstream decodes it, to tell whether the
kubelet has restarted the sidecars a SidecarSet last updated in place.

Two callers ask: the SidecarSet controller (one SidecarSet's sidecars) and the PodUnavailableBudget
(every SidecarSet in `kruise.io/sidecarset-injected-list`, every container marked `IS_INJECTED=true`);
both mean upstream's `IsSidecarContainerUpdateCompleted`. Upstream decodes the annotation into
`map[string]*InPlaceUpdateState` with Go's `encoding/json`, and any decoding error makes the pod count
as *not* updated, so this decoder keeps Go's rules where they change the answer: `null` is an empty
value, object keys match field names case-insensitively (the last one written wins), and a value of
the wrong JSON type anywhere in the state is an error. A SidecarSet entry that is `null` makes
upstream dereference a nil pointer (the request fails); here it is simply "not updated".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kruise.api.keys import ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE
from kruise.api.objects import annotations_of, container_statuses_of, containers_of
from kruise.api.timestamps import go_parse_rfc3339


class _Undecodable(ValueError):
    """The annotation is not what Go's json.Unmarshal would accept into the upstream types."""


def _no_constants(name: str) -> Any:
    raise _Undecodable(f"{name} is not JSON")


class _Obj(tuple):
    """A JSON object kept as its ordered (key, value) pairs, so duplicate and case-variant keys
    resolve as Go resolves them (a tuple, so it is never mistaken for a JSON array)."""


def _object(value: Any) -> _Obj:
    """Pairs of a JSON object; `null` decodes to nothing (Go leaves the map or struct empty)."""
    if value is None:
        return _Obj()
    if not isinstance(value, _Obj):
        raise _Undecodable("expected an object")
    return value


def _fold(key: str) -> str:
    """Go's case folding for ASCII field names (`ſ` folds to s and the Kelvin sign to k, as in Go)."""
    return key.replace("\u017f", "s").replace("\u212a", "k").lower()


def _values(pairs: _Obj, name: str) -> list[Any]:
    """Every value Go would decode into struct field `name`, in order: keys equal to it ignoring case."""
    return [value for key, value in pairs if _fold(key) == name.lower()]


def _expect(value: Any, kind: type) -> None:
    """A Go scalar or slice field: null leaves it as it was, another JSON type is an error."""
    if value is not None and not isinstance(value, kind):
        raise _Undecodable(f"expected {kind.__name__}")


def _strings(value: Any) -> None:
    _expect(value, list)
    for item in value or []:
        _expect(item, str)


def _time(value: Any) -> None:
    """metav1.Time: null, or a string Go's `time.Parse(time.RFC3339, …)` accepts ("" is an error)."""
    _expect(value, str)
    if value is not None and go_parse_rfc3339(value) is None:
        raise _Undecodable("time is not RFC 3339")


def _check_fields(pairs: _Obj) -> None:
    """Type-check the InPlaceUpdateState fields the decision does not read (an error there still
    fails upstream's decode)."""
    checks = {
        "revision": lambda v: _expect(v, str),
        "updateTimestamp": _time,
        "updateEnvFromMetadata": lambda v: _expect(v, bool),
        "updateResources": lambda v: _expect(v, bool),
        "updateImages": lambda v: _expect(v, bool),
        "nextContainerImages": lambda v: [_expect(item, str) for _, item in _object(v)],
        "nextContainerRefMetadata": lambda v: [_object(item) for _, item in _object(v)],
        "nextContainerResources": lambda v: [_object(item) for _, item in _object(v)],
        "preCheckBeforeNext": lambda v: [_strings(r) for r in _values(_object(v), "containersRequiredReady")],
        "containerBatchesRecord": _check_batches,
    }
    for name, check in checks.items():
        for value in _values(pairs, name):
            check(value)


def _check_batches(value: Any) -> None:
    _expect(value, list)
    for batch in value or []:
        fields = _object(batch)
        for stamp in _values(fields, "timestamp"):
            _time(stamp)
        for containers in _values(fields, "containers"):
            _strings(containers)


def _check_state(pairs: _Obj) -> dict[str, str]:
    """Decode one InPlaceUpdateState as Go would; returns its lastContainerStatuses as name -> imageID.
    Repeated `lastContainerStatuses` keys merge into one map (a `null` empties it); within one status,
    a `null` imageID keeps the value an earlier key gave."""
    _check_fields(pairs)
    statuses: dict[str, str] = {}
    for value in _values(pairs, "lastContainerStatuses"):
        if value is None:
            statuses = {}
        for name, status in _object(value):
            image_id = ""
            for candidate in _values(_object(status), "imageID"):
                _expect(candidate, str)
                image_id = image_id if candidate is None else candidate
            statuses[name] = image_id
    return statuses


def last_image_ids(raw: str, sidecarsets: Iterable[str]) -> dict[str, str] | None:
    """The imageIDs the containers had before the last in-place write of any of `sidecarsets` (later
    names in sorted order win for a container two of them recorded); None when upstream could not
    decode `raw`."""
    try:
        entries = _object(json.loads(raw, object_pairs_hook=_Obj, parse_constant=_no_constants))
        states: dict[str, dict[str, str] | None] = {}
        for name, state in entries:
            states[name] = None if state is None else _check_state(_object(state))
    except (ValueError, RecursionError):
        return None
    before: dict[str, str] = {}
    for name in sorted(set(sidecarsets)):
        if name not in states:
            continue
        statuses = states[name]
        if statuses is None:
            return None
        before.update(statuses)
    return before


def sidecar_update_completed(
    pod: Mapping[str, Any], sidecarsets: Iterable[str], containers: Sequence[str]
) -> bool:
    """Upstream `IsSidecarContainerUpdateCompleted`: no container of `containers` still reports the
    imageID recorded before the in-place write while its status image differs from the spec one (a
    re-tag to the same imageID counts as done). No annotation: never updated in place, so done."""
    raw = annotations_of(pod).get(ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE)
    if raw is None:
        return True
    before = last_image_ids(raw, sidecarsets)
    if before is None:
        return False
    wanted = set(containers)
    specs = {c.get("name"): c.get("image") or "" for c in containers_of(pod)}
    for status in container_statuses_of(pod):
        name = status.get("name")
        if name not in wanted or name not in before:
            continue
        if before[name] == (status.get("imageID") or "") and specs.get(name, "") != (
            status.get("image") or ""
        ):
            return False
    return True
