"""The ``/openapi/v2`` document, which kubectl fetches where OpenAPI v3 cannot answer.

kubectl's query-param verifier never credits a ``v1`` ``List`` with server-side field validation (a List
is no resource), so ``kubectl apply/create -f`` of a List validates client-side against OpenAPI v2 before
it splits the List into its items; a server without ``/openapi/v2`` fails that with "the server could not
find the requested resource". client-go asks for the gnostic protobuf encoding (``openapi_v2.Document``).

The emulator's document has no definitions: kubectl's v2 validation skips a kind it cannot look up (as
it does for any kind a server does not describe), so the List's items get only the checks the emulator
makes of any single object sent with a ``fieldValidation`` directive (a real server's definitions would
also let kubectl refuse unknown fields of built-in kinds client-side). kubectl prefers v3 for everything
else (patch strategies, ``explain``), so nothing else reads this document.
"""

from __future__ import annotations

from typing import Any

# what client-go asks for; '@' cannot stand in a media type Go's mime package parses, so the answer
# is labelled with the dotted form (kube-openapi answers both spellings so)
ACCEPTED = (
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
)
PROTOBUF = ACCEPTED[1]
TITLE = "Kubernetes"

# openapi.v2.Document field numbers (gnostic OpenAPIv2.proto)
_SWAGGER, _INFO, _PATHS, _DEFINITIONS = 1, 2, 8, 9
# openapi.v2.Info
_TITLE, _VERSION = 1, 2


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2): strings and embedded messages."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def document(git_version: str) -> dict[str, Any]:
    """The JSON form (``Accept: application/json``)."""
    return {
        "swagger": "2.0",
        "info": {"title": TITLE, "version": git_version},
        "paths": {},
        "definitions": {},
    }


def document_protobuf(git_version: str) -> bytes:
    """The same document as client-go's ``OpenAPISchema()`` decodes it."""
    info = _field(_TITLE, TITLE.encode()) + _field(_VERSION, git_version.encode())
    return _field(_SWAGGER, b"2.0") + _field(_INFO, info) + _field(_PATHS, b"") + _field(_DEFINITIONS, b"")


def wants_protobuf(accept: str) -> bool:
    compact = accept.replace(" ", "")
    return any(kind in compact for kind in ACCEPTED)
