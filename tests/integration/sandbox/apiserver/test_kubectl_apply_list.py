"""``kubectl apply -f`` of a ``kind: List`` (apiVersion v1), as real kube-apiserver takes it: kubectl
validates a List client-side against ``/openapi/v2`` (its v3 verifier never credits a List with
server-side validation), then sends every item on its own."""

from __future__ import annotations

import copy
import json

LIST = {
    "apiVersion": "v1",
    "kind": "List",
    "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "first"}, "data": {"k": "1"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "second"}, "data": {"k": "2"}},
    ],
}


async def configmaps(kubectl) -> dict[str, dict]:
    items = (await kubectl("get", "configmaps", "-n", "default", "-o", "json")).json()["items"]
    return {c["metadata"]["name"]: c.get("data") for c in items}


async def test_apply_of_a_v1_list_creates_then_patches_every_item(kubectl):
    created = await kubectl("apply", "-f", "-", stdin=json.dumps(LIST))
    assert "configmap/first created" in created.out and "configmap/second created" in created.out
    assert {"first": {"k": "1"}, "second": {"k": "2"}}.items() <= (await configmaps(kubectl)).items()

    changed = copy.deepcopy(LIST)
    changed["items"][1]["data"] = {"k": "3"}
    patched = await kubectl("apply", "-f", "-", stdin=json.dumps(changed))
    assert "configmap/first unchanged" in patched.out and "configmap/second configured" in patched.out
    assert (await configmaps(kubectl))["second"] == {"k": "3"}


async def test_openapi_v2_answers_json_too(kubectl):
    doc = (await kubectl("get", "--raw", "/openapi/v2")).json()
    assert doc["swagger"] == "2.0" and doc["info"]["title"] == "Kubernetes"
