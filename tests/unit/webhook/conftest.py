"""Helpers for driving the webhook ASGI app in-process (httpx ASGITransport, no sockets)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import jsonpatch
import orjson
import pytest

from kruise.webhook.app import create_app
from kruise.webhook.routes import build_routes


class FakeContents:
    """Namespace contents as the informer caches would report them."""

    def __init__(self) -> None:
        self.pods: dict[str, int] = {}
        self.pvcs: dict[str, int] = {}

    def active_pods(self, namespace: str) -> int:
        return self.pods.get(namespace, 0)

    def bound_pvcs(self, namespace: str) -> int:
        return self.pvcs.get(namespace, 0)


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


@pytest.fixture
def contents() -> FakeContents:
    return FakeContents()


@pytest.fixture
async def client(contents: FakeContents) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(build_routes(contents))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://webhook.test") as c:
        yield c


async def post(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = await client.post(path, json=body)
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["kind"] == "AdmissionReview"
    assert out["response"]["uid"] == body["request"]["uid"]
    return out["response"]
