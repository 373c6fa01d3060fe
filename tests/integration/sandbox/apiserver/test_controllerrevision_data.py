"""ControllerRevision ``data`` keeps the bytes it was created with, and they are immutable.

kube-apiserver 1.36 stores ``data`` raw and compares bytes on every update; patches re-encode it
the Go way (compact, HTML-escaped; sorted keys for strategic merge). So non-canonical ``data``
makes every later patch fail "field is immutable", while Go-canonical ``data`` patches fine.
Also the kruise-py client and CloneSet revision writer end to end against the emulator.
"""

from __future__ import annotations

import ssl

import httpx
import pytest

from kruise.control.common.revision import new_cloneset_revision, revision_for_write
from kruise.kube.client import Client, PatchType
from kruise.kube.errors import Invalid
from kruise.kube.resources import CONTROLLER_REVISIONS

PATH = "/apis/apps/v1/namespaces/default/controllerrevisions"
SMP = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"


@pytest.fixture
async def http(emulator):
    ctx = ssl.create_default_context(cadata=emulator.server.ca_pem.decode())
    async with httpx.AsyncClient(
        base_url=emulator.url, verify=ctx, headers={"Authorization": f"Bearer {emulator.server.token}"}
    ) as client:
        yield client


def _revision_json(name: str, data: str) -> str:
    return (
        '{"apiVersion": "apps/v1", "kind": "ControllerRevision", '
        f'"metadata": {{"name": "{name}"}}, "data": {data}, "revision": 1}}'
    )


async def _create(http, name: str, data: str) -> None:
    answer = await http.post(
        PATH, content=_revision_json(name, data), headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 201, answer.text


async def _label(http, name: str, ctype: str) -> httpx.Response:
    return await http.patch(
        f"{PATH}/{name}", content='{"metadata":{"labels":{"x":"y"}}}', headers={"Content-Type": ctype}
    )


@pytest.mark.parametrize("ctype", [SMP, MERGE, "application/json-patch+json"])
async def test_canonical_data_can_be_patched(http, ctype) -> None:
    await _create(http, "canon", '{"a":1,"b":{"c":"x \\u0026 y"}}')
    body = '[{"op":"add","path":"/metadata/labels","value":{"x":"y"}}]' if "json-patch" in ctype else None
    if body:
        answer = await http.patch(f"{PATH}/canon", content=body, headers={"Content-Type": ctype})
    else:
        answer = await _label(http, "canon", ctype)
    assert answer.status_code == 200, answer.text
    assert answer.json()["metadata"]["labels"] == {"x": "y"}


@pytest.mark.parametrize(
    ("data", "ctype"),
    [
        ('{"b": 1, "a": 2}', MERGE),  # whitespace: compacted by any patch
        ('{"b":1,"a":2}', SMP),  # key order: sorted by a strategic merge patch
        ('{"a":"x & y"}', MERGE),  # HTML characters: escaped by Go's encoder
    ],
)
async def test_non_canonical_data_makes_any_later_patch_fail(http, data, ctype) -> None:
    await _create(http, "raw", data)
    answer = await _label(http, "raw", ctype)
    assert answer.status_code == 422, answer.text
    status = answer.json()
    assert status["reason"] == "Invalid"
    assert status["details"]["causes"][0]["field"] == "data"
    assert status["message"].startswith('ControllerRevision.apps "raw" is invalid: data: Invalid value: ')
    assert status["message"].endswith(": field is immutable")


async def test_unsorted_compact_data_survives_merge_but_not_strategic_patch(http) -> None:
    await _create(http, "order", '{"b":1,"a":2}')
    assert (await _label(http, "order", MERGE)).status_code == 200
    assert (await _label(http, "order", SMP)).status_code == 422


async def test_update_must_send_the_same_data_bytes(http) -> None:
    await _create(http, "put", '{"a":1,"b":2}')
    stored = (await http.get(f"{PATH}/put")).json()
    same = _revision_json("put", '{"a":1,"b":2}').replace(
        '"name": "put"', f'"name": "put", "resourceVersion": "{stored["metadata"]["resourceVersion"]}"'
    )
    answer = await http.put(f"{PATH}/put", content=same, headers={"Content-Type": "application/json"})
    assert answer.status_code == 200, answer.text
    reordered = same.replace('{"a":1,"b":2}', '{"b":2,"a":1}')
    answer = await http.put(f"{PATH}/put", content=reordered, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422 and "field is immutable" in answer.text
    changed = same.replace('{"a":1,"b":2}', '{"a":1,"b":3}')
    answer = await http.put(f"{PATH}/put", content=changed, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422 and "field is immutable" in answer.text


async def test_kruise_revision_writer_output_is_patchable(emulator) -> None:
    cloneset = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "default", "uid": "u-1"},
        "spec": {
            "template": {
                "metadata": {"labels": {"zz": "1", "app": "x"}},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx", "command": ["sh", "-c", "a && b > c"]}]
                },
            }
        },
    }
    revision = new_cloneset_revision(cloneset, 1, 0)
    revision["metadata"].pop("ownerReferences")
    async with await Client.from_kubeconfig(emulator.kubeconfig) as client:
        created = await client.create(CONTROLLER_REVISIONS, revision_for_write(revision))
        name = created["metadata"]["name"]
        for patch_type in (PatchType.MERGE, PatchType.STRATEGIC):
            patched = await client.patch(
                CONTROLLER_REVISIONS,
                name,
                {"metadata": {"labels": {"p": patch_type.name}}},
                "default",
                patch_type=patch_type,
            )
            assert patched["data"] == revision["data"]
        # The same revision written as a plain dict keeps the user's key order: a strategic patch fails.
        other = {**revision, "metadata": {**revision["metadata"], "name": "plain"}}
        await client.create(CONTROLLER_REVISIONS, other)
        with pytest.raises(Invalid):
            await client.patch(
                CONTROLLER_REVISIONS,
                "plain",
                {"metadata": {"labels": {"p": "q"}}},
                "default",
                patch_type=PatchType.STRATEGIC,
            )
