"""ControllerRevision ``data`` as kube-apiserver keeps it: raw bytes, immutable byte for byte.

``apps/v1`` ControllerRevision.data is a ``runtime.RawExtension``: the apiserver stores exactly
the bytes a create or update sent, and ``ValidateControllerRevisionUpdate`` compares the new bytes
with the stored ones. A patch never hands the old bytes through untouched: JSON and merge
patches re-encode the object (Go compacts and HTML-escapes raw JSON it marshals), strategic
merge and apply patches round-trip it through a map (keys sorted). So a revision created with
any ``data`` that is not Go's canonical encoding can never be patched again, not even its
labels or the garbage collector's ownerReferences: 422 ``data: Invalid value: ...: field is
immutable``. The emulator keeps the bytes per stored revision to behave the same.
"""

from __future__ import annotations

import json
import weakref
from typing import Any

from kruise.sandbox.apiserver import errors

RESOURCE = ("apps", "controllerrevisions")
_SORTING_PATCHES = ("application/strategic-merge-patch+json", "application/apply-patch+yaml")
_DECODER = json.JSONDecoder()
_WS = " \t\r\n"

# store -> (namespace, name, uid) -> the data bytes kube-apiserver would hold.
_RAW: weakref.WeakKeyDictionary[Any, dict[tuple[str, str, str], bytes]] = weakref.WeakKeyDictionary()


def _html_escape(text: str) -> str:
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def go_marshal(value: Any) -> bytes:
    """``json.Marshal`` of a decoded map: sorted keys, compact, HTML-escaped, UTF-8 kept."""
    return _html_escape(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)).encode()


def go_compact(raw: bytes) -> bytes:
    """What ``json.Marshal`` makes of raw JSON it embeds: same key order, no whitespace, HTML-escaped."""
    value = json.loads(raw, object_pairs_hook=dict)
    return _html_escape(json.dumps(value, separators=(",", ":"), ensure_ascii=False)).encode()


def _skip_ws(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WS:
        index += 1
    return index


def top_level_span(raw: bytes, field: str) -> bytes | None:
    """The exact bytes of ``field``'s value in a JSON object document, or None."""
    try:
        text = raw.decode()
        index = _skip_ws(text, 0)
        if text[index] != "{":
            return None
        found = None
        index = _skip_ws(text, index + 1)
        while index < len(text) and text[index] != "}":
            key, index = _DECODER.scan_once(text, index)
            index = _skip_ws(text, index)
            index = _skip_ws(text, index + 1)  # the ':'
            _, end = _DECODER.scan_once(text, index)
            if key == field:
                found = text[index:end].encode()
            index = _skip_ws(text, end)
            if index < len(text) and text[index] == ",":
                index = _skip_ws(text, index + 1)
        return found
    except (UnicodeDecodeError, StopIteration, IndexError, ValueError):
        return None


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "", meta.get("uid") or "")


def _stored_raw(store: Any, old: dict[str, Any]) -> bytes:
    held = _RAW.get(store, {}).get(_key(old))
    return held if held is not None else go_marshal(old.get("data"))


def _incoming_raw(
    method: str, ctype: str, body: bytes | None, obj: dict[str, Any], old_raw: bytes | None
) -> bytes:
    data = obj.get("data")
    if method == "PATCH":
        if ctype in _SORTING_PATCHES or old_raw is None:
            return go_marshal(data)
        if json.loads(old_raw) == data:
            return go_compact(old_raw)
        return go_marshal(data)
    if body and "json" in ctype:
        span = top_level_span(body, "data")
        if span is not None and json.loads(span) == data:
            return span
    return go_marshal(data)


def _unknown(raw: bytes) -> str:
    """``%#v`` of the ``runtime.Unknown`` the internal ControllerRevision holds."""
    octets = ", ".join(f"0x{b:x}" for b in raw)
    return (
        'runtime.Unknown{TypeMeta:runtime.TypeMeta{APIVersion:"", Kind:""}, '
        f'Raw:[]uint8{{{octets}}}, ContentEncoding:"", ContentType:"application/json"}}'
    )


def check(handler: Any, obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, str]]:
    """Validation causes for a ControllerRevision write; remembers the bytes a valid write stores."""
    if handler.rt.key != RESOURCE:
        return []
    request = handler.request
    old_raw = _stored_raw(handler.store, old) if old is not None else None
    new_raw = _incoming_raw(
        request.method, request.content_type, getattr(handler, "raw_body", None), obj, old_raw
    )
    if old_raw is not None and new_raw != old_raw:
        return [
            errors.field_error(
                "FieldValueInvalid",
                "data",
                detail=f"{_unknown(new_raw)}: field is immutable",
                show_value=False,
            )
        ]
    if not handler.dry_run:
        _RAW.setdefault(handler.store, {})[_key(obj)] = new_raw
    return []
