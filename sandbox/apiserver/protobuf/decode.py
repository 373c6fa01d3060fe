"""Turn a Kubernetes protobuf body into the JSON object kube-apiserver would have decoded.

client-go's typed clients send built-in objects as protobuf (``kubectl create configmap``,
``create secret``, ``create deployment``, ``create job --from``...). A body is the magic
``k8s\\x00`` followed by a ``runtime.Unknown`` message: ``typeMeta`` (apiVersion, kind) and
``raw``, the object's own message. The object is decoded field by field with ``tables.py``
and rendered the way Go's ``encoding/json`` renders the decoded struct: non-pointer fields
with ``omitempty`` are left out when zero (the Go marshaller always writes them, so a zero on
the wire means "unset"), pointer fields keep explicit zeros (``replicas: 0``), a zero
``metav1.Time`` is ``null``, ``[]byte`` is base64. Unknown field numbers are skipped, as
proto decoding does.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import orjson

from kruise.sandbox.apiserver.protobuf import tables
from kruise.sandbox.apiserver.protobuf.meta import META

MESSAGES = {**tables.MESSAGES, **META}
KINDS = tables.KINDS

MAGIC = b"k8s\x00"
MEDIA_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """The body is not a protobuf object this server can decode."""


def is_protobuf(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip() == MEDIA_TYPE


# ------------------------------------------------------------------ wire format
def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) in wire order; length-delimited values are bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, pos = _varint(buf, pos)
        elif wt == 2:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise ProtobufError("truncated length-delimited field")
            val, pos = buf[pos : pos + size], pos + size
        elif wt == 1:
            val, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wt == 5:
            val, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise ProtobufError(f"unsupported wire type {wt}")
        out.append((num, wt, val))
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


# ------------------------------------------------------------------ special messages
def _time(buf: bytes) -> str | None:
    f = {n: v for n, _, v in _fields(buf)}
    seconds, nanos = _signed(f.get(1, 0)), f.get(2, 0)
    if not seconds and not nanos:
        return None
    t = datetime.fromtimestamp(seconds, UTC)
    if nanos:  # metav1.MicroTime
        return t.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _duration(buf: bytes) -> str:
    ns = _signed({n: v for n, _, v in _fields(buf)}.get(1, 0))
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    h, rem = divmod(ns, 3_600_000_000_000)
    m, rem = divmod(rem, 60_000_000_000)
    s = f"{rem / 1e9:.9f}".rstrip("0").rstrip(".")
    out = (f"{h}h" if h else "") + (f"{m}m" if h or m else "") + f"{s}s"
    return sign + out


def _int_or_string(buf: bytes) -> int | str:
    f = {n: v for n, _, v in _fields(buf)}
    if f.get(1, 0) == 1:
        return f.get(3, b"").decode()
    return _signed(f.get(2, 0))


def _raw_json(buf: bytes) -> Any:
    raw = {n: v for n, _, v in _fields(buf)}.get(1, b"")
    if not raw:
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ProtobufError(f"embedded object is not JSON: {exc}") from None


SPECIAL = {
    "meta.Time": _time,
    "meta.Duration": _duration,
    "meta.IntOrString": _int_or_string,
    "meta.Quantity": lambda b: {n: v for n, _, v in _fields(b)}.get(1, b"").decode(),
    "meta.RawExtension": _raw_json,
    "meta.FieldsV1": _raw_json,
}


# ------------------------------------------------------------------ messages
def _scalar(kind: str, wt: int, val: Any, ref: str | None) -> Any:
    if kind == "s":
        return val.decode() if isinstance(val, bytes) else str(val)
    if kind == "i":
        return _signed(val) if wt == 0 else int.from_bytes(val, "little")
    if kind == "b":
        return bool(val)
    if kind == "y":
        return base64.b64encode(val).decode()
    if kind == "m":
        return message(ref, val)
    raise ProtobufError(f"unexpected kind {kind}")


def _packed(kind: str, wt: int, val: Any) -> list[Any]:
    """Repeated varints may arrive packed in one length-delimited field."""
    if kind in ("i", "b") and wt == 2:
        out, pos = [], 0
        while pos < len(val):
            v, pos = _varint(val, pos)
            out.append(_signed(v) if kind == "i" else bool(v))
        return out
    return [_scalar(kind, wt, val, None)]


def _map_entry(spec: str, buf: bytes) -> tuple[str, Any]:
    key_kind, val_kind = spec.split(":", 1)
    key: Any = ""
    value: Any = None
    for n, wt, v in _fields(buf):
        if n == 1:
            key = _scalar(key_kind, wt, v, None)
        elif n == 2:
            value = _scalar("m", wt, v, val_kind) if "." in val_kind else _scalar(val_kind, wt, v, None)
    if value is None and "." not in val_kind:
        value = {"s": "", "y": "", "i": 0, "b": False}[val_kind]
    return str(key), value


_ZERO = ("", 0, False, None)


def message(ref: str | None, buf: bytes) -> Any:
    """Decode one message of type ``ref`` into its JSON form."""
    if ref in SPECIAL:
        return SPECIAL[ref](buf)
    table = MESSAGES.get(ref or "")
    if table is None:
        raise ProtobufError(f"no schema for {ref}")
    out: dict[str, Any] = {}
    for num, wt, val in _fields(buf):
        row = table.get(num)
        if row is None:
            continue
        name, kind, sub, flags = row
        if kind == "M":
            k, v = _map_entry(sub, val)
            out.setdefault(name, {})[k] = v
        elif "r" in flags:
            out.setdefault(name, []).extend([message(sub, val)] if kind == "m" else _packed(kind, wt, val))
        elif not name:  # an embedded struct with ``json:",inline"``
            out.update(message(sub, val))
        else:
            out[name] = _scalar(kind, wt, val, sub)
    for name, kind, _sub, flags in table.values():
        if not name or name not in out or "p" in flags:
            continue
        value = out[name]
        if "o" in flags and kind != "m" and value in _ZERO:
            del out[name]  # Go's omitempty on a zero non-pointer scalar
    return out


# metav1.AddToGroupVersion registers the option kinds in every group version, so a typed client
# sends e.g. a `v1` or `apps/v1` DeleteOptions body (helm deletes its release Secret that way).
_OPTIONS_IN_EVERY_GROUP_VERSION = {"DeleteOptions": "meta.DeleteOptions"}


def decode_object(body: bytes) -> dict[str, Any]:
    """Decode a ``k8s\\x00``-prefixed body into a JSON object with apiVersion and kind."""
    if not body.startswith(MAGIC):
        raise ProtobufError("provided data does not have the Kubernetes protobuf prefix")
    api_version = kind = ""
    raw = b""
    for num, _wt, val in _fields(body[len(MAGIC) :]):
        if num == 1:  # typeMeta
            for n, _, v in _fields(val):
                if n == 1:
                    api_version = v.decode()
                elif n == 2:
                    kind = v.decode()
        elif num == 2:
            raw = val
        elif num == 3 and val:
            raise ProtobufError(f"unsupported content encoding {val.decode()!r}")
    group_version = api_version if "/" in api_version else f"/{api_version}"
    ref = KINDS.get(f"{group_version}/{kind}")
    if ref is None and kind in _OPTIONS_IN_EVERY_GROUP_VERSION:
        ref = _OPTIONS_IN_EVERY_GROUP_VERSION[kind]
    if ref is None:
        raise ProtobufError(f"no protobuf schema for {api_version}, Kind={kind}")
    obj = message(ref, raw)
    return {"kind": kind, "apiVersion": api_version, **obj}
