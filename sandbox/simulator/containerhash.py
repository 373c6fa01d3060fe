"""The kubelet's container hash, written on every container as ``io.kubernetes.container.hash``.

A real kubelet labels each container it creates with the hash of the spec it created it from; node
agents (kruise-daemon's runtime-containers-meta report) read it back to tell which spec a running container
was started from. The value is kubelet 1.31+'s ``kubecontainer.HashContainer`` to the bit: ``name`` and
``image`` as Go's ``json.Marshal`` of a map, rendered by ``hashutil.DeepHashObject`` (spew's ``%#v`` of the
byte slice) and hashed with FNV-1a 32; the annotation holds it in lowercase hex.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

HASH_ANNOTATION = "io.kubernetes.container.hash"

_FNV32_OFFSET = 0x811C9DC5
_FNV32_PRIME = 0x01000193


def _go_json(value: Mapping[str, str]) -> bytes:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


def container_hash(container: Mapping[str, Any]) -> int:
    picked = {"name": str(container.get("name") or ""), "image": str(container.get("image") or "")}
    printed = b"([]uint8)[" + " ".join(str(b) for b in _go_json(picked)).encode() + b"]"
    value = _FNV32_OFFSET
    for byte in printed:
        value = ((value ^ byte) * _FNV32_PRIME) & 0xFFFFFFFF
    return value


def hash_annotation(container: Mapping[str, Any]) -> dict[str, str]:
    return {HASH_ANNOTATION: format(container_hash(container), "x")}
