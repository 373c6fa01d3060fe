"""Secret `stringData` through kubectl, as kube-apiserver 1.36 handles it: merged into `data`
(base64, overwriting a key in both) on create, apply and patch, and never stored or returned."""

from __future__ import annotations

import base64
import json


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


SECRET = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "creds", "namespace": "default"},
    "data": {"user": b64("admin"), "password": b64("old")},
    "stringData": {"password": "s3cret", "token": "abc"},
}


async def test_string_data_is_merged_into_data_on_create_apply_and_patch(kubectl):
    created = (await kubectl("create", "-f", "-", "-o", "json", stdin=json.dumps(SECRET))).json()
    assert "stringData" not in created
    assert created["data"] == {"user": b64("admin"), "password": b64("s3cret"), "token": b64("abc")}
    assert created["type"] == "Opaque"

    await kubectl(
        "patch", "secret", "creds", "--type", "merge", "-p", json.dumps({"stringData": {"user": "root"}})
    )
    stored = (await kubectl("get", "secret", "creds", "-o", "json")).json()
    assert "stringData" not in stored
    assert stored["data"]["user"] == b64("root")
    assert stored["data"]["token"] == b64("abc")

    applied = {**SECRET, "metadata": {"name": "applied", "namespace": "default"}}
    await kubectl("apply", "-f", "-", stdin=json.dumps(applied))
    stored = (await kubectl("get", "secret", "applied", "-o", "json")).json()
    assert "stringData" not in stored
    assert stored["data"]["password"] == b64("s3cret")


async def test_a_non_string_value_is_refused_by_decoding(kubectl):
    bad = {**SECRET, "stringData": {"port": 5432}}
    result = await kubectl("create", "-f", "-", stdin=json.dumps(bad), check=False)
    assert result.code != 0
    assert "cannot unmarshal number into Go struct field Secret.stringData of type string" in result.err
