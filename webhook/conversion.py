"""`/convert`: answers kube-apiserver's ConversionReview for the multi-version Kruise CRDs.

A review carries objects of one kind in any served version and a desiredAPIVersion; every object
is converted with kruise.api.conversion. One object that cannot be converted fails the whole
review (result Failure, message naming the object and the field), as kube-apiserver then fails
the request rather than return a partial list. A body that is not a ConversionReview gets a 400.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request, Response

from kruise.api.conversion import ConversionError, convert

REVIEW_VERSIONS = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")


def _json(status: int, body: object) -> Response:
    return Response(content=orjson.dumps(body), status_code=status, media_type="application/json")


def _bad_request(message: str) -> Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 400, "reason": "BadRequest"}
    return _json(400, {**body, "message": message})


def _describe(index: int, obj: object) -> str:
    if not isinstance(obj, dict):
        return f"objects[{index}]"
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = "/".join(str(p) for p in (meta.get("namespace"), meta.get("name")) if p)
    return f"objects[{index}] ({obj.get('kind')} {name or '<unnamed>'})"


def convert_objects(desired: str, objects: list[Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The converted objects, or ([], message) for the first one that cannot be converted."""
    converted: list[dict[str, Any]] = []
    for index, obj in enumerate(objects):
        try:
            converted.append(convert(obj, desired))
        except ConversionError as exc:
            return [], f"{_describe(index, obj)}: {exc}"
    return converted, None


def _request_error(raw: object) -> str | None:
    if not isinstance(raw, dict):
        return "invalid ConversionReview: body must be an object"
    if raw.get("kind") != "ConversionReview" or raw.get("apiVersion") not in REVIEW_VERSIONS:
        versions = ", ".join(REVIEW_VERSIONS)
        return f"invalid ConversionReview: apiVersion/kind must be one of {versions} ConversionReview"
    request = raw.get("request")
    if not isinstance(request, dict):
        return "invalid ConversionReview: request is required"
    if not isinstance(request.get("uid"), str) or not request["uid"]:
        return "invalid ConversionReview: request.uid is required"
    if not isinstance(request.get("desiredAPIVersion"), str) or not request["desiredAPIVersion"]:
        return "invalid ConversionReview: request.desiredAPIVersion is required"
    if not isinstance(request.get("objects", []), list):
        return "invalid ConversionReview: request.objects must be a list"
    return None


def review_response(raw: dict[str, Any]) -> dict[str, Any]:
    """The ConversionReview answering the (already checked) review `raw`."""
    request = raw["request"]
    converted, failure = convert_objects(request["desiredAPIVersion"], request.get("objects") or [])
    response: dict[str, Any] = {"uid": request["uid"]}
    if failure is None:
        response["convertedObjects"] = converted
        response["result"] = {"status": "Success"}
    else:
        response["result"] = {"status": "Failure", "message": failure}
    return {"apiVersion": raw["apiVersion"], "kind": "ConversionReview", "response": response}


async def serve_conversion(request: Request, max_body_bytes: int) -> Response:
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    if content_type != "application/json":
        return _bad_request(f"contentType={content_type or '<none>'}, expected application/json")
    body = await request.body()
    if not body:
        return _bad_request("request body is empty")
    if len(body) > max_body_bytes:
        return _bad_request(f"request body is larger than {max_body_bytes} bytes")
    try:
        raw = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return _bad_request(f"request body is not JSON: {exc}")
    error = _request_error(raw)
    if error is not None:
        return _bad_request(error)
    return _json(200, review_response(raw))
