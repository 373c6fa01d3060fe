"""Helpers for driving the webhook ASGI app in-process: review builders, patch application, posting
(the namespace-contents fake lives in tests.kit.namespace_contents)."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import httpx
import jsonpatch
import orjson


def review(
    operation: str,
    *,
    group: str,
    version: str,
    kind: str,
    resource: str,
    obj: dict[str, Any] | None = None,
    old: dict[str, Any] | None = None,
    dry_run: bool = False,
    api_version: str = "admission.k8s.io/v1",
) -> dict[str, Any]:
    meta = (obj or old or {}).get("metadata", {})
    return {
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": {"group": group, "version": version, "kind": kind},
            "resource": {"group": group, "version": version, "resource": resource},
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "operation": operation,
            "userInfo": {"username": "tester"},
            "object": obj,
            "oldObject": old,
            "dryRun": dry_run,
        },
    }


def apply_patch(original: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    if "patch" not in response:
        return original
    assert response["patchType"] == "JSONPatch"
    ops = orjson.loads(base64.b64decode(response["patch"]))
    return jsonpatch.apply_patch(original, ops)


async def post(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = await client.post(path, json=body)
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["kind"] == "AdmissionReview"
    assert out["response"]["uid"] == body["request"]["uid"]
    return out["response"]
