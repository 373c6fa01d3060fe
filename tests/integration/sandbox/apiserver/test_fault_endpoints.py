"""`/debug/faults/*` (apiserver.faultroutes): the fault hooks a test in another process reaches over HTTP,
served only when the emulator is started with them and only to the admin token."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from kruise.sandbox.apiserver import ApiServer
from kruise.sandbox.apiserver.threaded import serve_in_thread

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
def faulty() -> Iterator[ApiServer]:
    with serve_in_thread(crd_establish_delay=0.01, fault_endpoints=True) as server:
        yield server


def http(server: ApiServer, token: str | None = None) -> httpx.AsyncClient:
    context = ssl.create_default_context(cadata=(server.ca_pem or b"").decode())
    return httpx.AsyncClient(
        base_url=server.url, verify=context, headers={"Authorization": f"Bearer {token or server.token}"}
    )


async def create(client: httpx.AsyncClient, name: str) -> str:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    response = await client.post(CONFIGMAPS, json=body)
    assert response.status_code == 201, response.text
    return response.json()["metadata"]["resourceVersion"]


async def watch_lines(client: httpx.AsyncClient, rv: str) -> AsyncIterator[dict]:
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "30"}
    async with client.stream("GET", CONFIGMAPS, params=params) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.strip():
                yield json.loads(line)


async def resume_status(client: httpx.AsyncClient, rv: str) -> int:
    """The code of a watch resumed from `rv`: as kube-apiserver, a too-old version is a 200 stream whose
    one event is an ERROR Status (410 Expired)."""
    response = await client.get(
        CONFIGMAPS, params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
    )
    first = json.loads(response.text.splitlines()[0])
    return first["object"]["code"] if first["type"] == "ERROR" else response.status_code


async def test_drop_with_compact_ends_every_watch_and_a_resume_gets_410(faulty: ApiServer):
    async with http(faulty) as client:
        rv = await create(client, "before")
        seen: list[str] = []
        delivered = asyncio.Event()

        async def consume() -> None:
            async for event in watch_lines(client, rv):
                seen.append(event["object"]["metadata"]["name"])
                delivered.set()

        watching = asyncio.create_task(consume())
        await create(client, "during")  # replayed from history if the watch registers after it
        await asyncio.wait_for(delivered.wait(), 10)  # the watch is open once it delivered an event
        assert seen == ["during"]
        answer = await client.post("/debug/faults/drop-watches", params={"compact": "true"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["watchesDropped"] == 1
        assert int(answer.json()["compactedResourceVersion"]) >= int(rv)
        await asyncio.wait_for(watching, 10)  # the stream ended: the watch was dropped
        assert await resume_status(client, rv) == 410


async def test_drop_without_compact_lets_a_resume_replay(faulty: ApiServer):
    async with http(faulty) as client:
        rv = await create(client, "a")
        await create(client, "b")
        answer = await client.post("/debug/faults/drop-watches")
        assert answer.json() == {"watchesDropped": 0, "compactedResourceVersion": None}
        events = watch_lines(client, rv)
        first = await anext(events)
        await events.aclose()
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "b")


async def test_compact_and_fail_next(faulty: ApiServer):
    async with http(faulty) as client:
        rv = await create(client, "a")
        await create(client, "b")
        assert (await client.post("/debug/faults/compact-watch-history")).status_code == 200
        assert await resume_status(client, rv) == 410
        answer = await client.post("/debug/faults/fail-next", params={"count": "2", "status": "429"})
        assert answer.json() == {"failing": 2}
        codes = [(await client.get(CONFIGMAPS)).status_code for _ in range(3)]
        assert codes == [429, 429, 200]


@pytest.mark.parametrize(
    ("path", "params", "message"),
    [
        ("fail-next", {"count": "x"}, "count: must be an integer"),
        ("fail-next", {"count": "0"}, "count: must be >= 1"),
        ("fail-next", {"status": "404"}, "status: must be one of [429, 500, 503]"),
        ("drop-watches", {"compact": "yes"}, "compact: must be true or false"),
        ("restart", {}, "no fault named 'restart'"),
    ],
)
async def test_bad_requests_name_the_field(faulty: ApiServer, path: str, params: dict, message: str):
    async with http(faulty) as client:
        answer = await client.post(f"/debug/faults/{path}", params=params)
        assert answer.status_code in (400, 404) and message in answer.json()["message"], answer.text


async def test_only_post_and_only_the_admin(faulty: ApiServer):
    async with http(faulty) as client:
        assert (await client.get("/debug/faults/drop-watches")).status_code == 405
        token = await client.post(
            "/api/v1/namespaces/default/serviceaccounts/default/token",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        )
        assert token.status_code == 201, token.text
    async with http(faulty, token.json()["status"]["token"]) as account:
        assert (await account.get(CONFIGMAPS)).status_code == 200
        assert (await account.post("/debug/faults/drop-watches")).status_code == 403


async def test_off_unless_asked(emulator):
    async with http(emulator.server) as client:
        assert (await client.post("/debug/faults/drop-watches")).status_code == 404
