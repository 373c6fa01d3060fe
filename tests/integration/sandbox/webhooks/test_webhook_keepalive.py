"""The emulator's webhook client and a server that closes an idle keep-alive connection just as the next
review goes out on it (uvicorn's 5 s keep-alive racing the client's): the review is replayed once on a
fresh connection, as Go's http.Transport replays it, instead of failing the admission."""

from __future__ import annotations

import uuid

import httpx
import pytest

from kruise.sandbox.apiserver.webhookcall import CallFailed, WebhookCaller
from tests.kit.webhook_server import WebhookServer

SERVICE = ("kruise-system", "hooks", 443)


def review() -> dict:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": str(uuid.uuid4()), "kind": {"kind": "ConfigMap"}},
    }


@pytest.fixture
async def caller(server: WebhookServer):
    caller = WebhookCaller({SERVICE: f"127.0.0.1:{server.port}"})
    yield caller
    await caller.aclose()


@pytest.fixture
def client_config(server: WebhookServer, certificates) -> dict:
    server.routes["/allow"] = lambda request: {"allowed": True}
    namespace, name, port = SERVICE
    service = {"namespace": namespace, "name": name, "port": port, "path": "/allow"}
    return {"service": service, "caBundle": certificates.ca_bundle}


async def test_the_server_reproduces_the_race_for_a_plain_client(server: WebhookServer, certificates):
    """The control: a keep-alive client without replay fails the second call with the words seen in CI."""
    server.routes["/allow"] = lambda request: {"allowed": True}
    server.answers_per_connection = 1
    verify = httpx.create_ssl_context(verify=False)
    async with httpx.AsyncClient(verify=verify) as plain:
        assert (await plain.post(server.url("/allow"), json=review())).status_code == 200
        with pytest.raises(httpx.RemoteProtocolError, match="Server disconnected without sending a response"):
            await plain.post(server.url("/allow"), json=review())


async def test_a_review_sent_on_a_connection_closed_under_it_is_replayed_on_a_fresh_one(
    server: WebhookServer, caller: WebhookCaller, client_config: dict
):
    server.answers_per_connection = 1
    for _ in range(4):
        await caller.post(client_config, review(), timeout=10)
    # calls 1 and 3 dial; calls 2 and 4 reuse the kept connection, lose it and go again on a new one
    assert (server.connections, server.dropped, caller.replays) == (4, 2, 2)
    assert len(server.received["/allow"]) == 4


async def test_a_fresh_connection_closed_without_an_answer_is_not_replayed(
    server: WebhookServer, caller: WebhookCaller, client_config: dict
):
    server.answers_per_connection = 0
    with pytest.raises(CallFailed, match=r'Post "https://hooks\.kruise-system\.svc:443/allow\?timeout=10s": '
                       "Server disconnected without sending a response"):  # fmt: skip
        await caller.post(client_config, review(), timeout=10)
    assert (server.connections, server.dropped, caller.replays) == (1, 1, 0)


async def test_the_replay_is_made_once(server: WebhookServer, caller: WebhookCaller, client_config: dict):
    await caller.post(client_config, review(), timeout=10)
    server.answers_per_connection = 0  # from now on every connection is closed under its first request
    with pytest.raises(CallFailed, match="Server disconnected without sending a response"):
        await caller.post(client_config, review(), timeout=10)
    assert (server.connections, server.dropped, caller.replays) == (2, 2, 1)
