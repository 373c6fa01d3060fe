"""The exec/attach stream plumbing: subprotocol choice across hops, option checks, error Status."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from kruise.sandbox import streaming
from kruise.sandbox.apiserver import podexec
from kruise.sandbox.apiserver.errors import StatusError
from kruise.sandbox.simulator import kubelet_exec
from kruise.sandbox.simulator.noderuntime import StreamOptions


def _request(query: str = "", **headers: str) -> web.Request:
    pairs = CIMultiDict()
    for key, value in headers.items():
        pairs.add(key.replace("_", "-"), value)
    return make_mocked_request("GET", f"/x?{query}", headers=pairs)


def test_offered_protocols_keep_the_clients_order_across_headers() -> None:
    request = make_mocked_request(
        "GET",
        "/x",
        headers=CIMultiDict(
            [
                ("Sec-WebSocket-Protocol", "v5.channel.k8s.io, v4.channel.k8s.io"),
                ("Sec-WebSocket-Protocol", "x"),
            ]
        ),
    )
    assert streaming.offered(request) == ["v5.channel.k8s.io", "v4.channel.k8s.io", "x"]
    assert streaming.choose(["base64.channel.k8s.io", streaming.V4]) == streaming.V4
    assert streaming.choose(["channel.k8s.io"]) is None


def test_v5_downstream_may_ride_on_a_v4_runtime_but_not_the_reverse() -> None:
    assert streaming.upstream_offer(streaming.V5) == [streaming.V5, streaming.V4]
    assert streaming.upstream_offer(streaming.V4) == [streaming.V4]
    assert streaming.compatible(streaming.V5, streaming.V4)
    assert streaming.compatible(streaming.V4, streaming.V4)
    assert not streaming.compatible(streaming.V4, streaming.V5)
    assert not streaming.compatible(streaming.V5, None)


def test_websocket_requests_are_recognised() -> None:
    assert streaming.is_websocket(_request(Upgrade="websocket", Connection="Upgrade"))
    assert not streaming.is_websocket(_request(Upgrade="SPDY/3.1", Connection="Upgrade"))
    assert not streaming.is_websocket(_request())


def test_failure_is_a_metav1_status() -> None:
    assert streaming.failure(400, "BadRequest", "no") == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "no",
        "reason": "BadRequest",
        "code": 400,
    }


def test_kubelet_stream_options_follow_remotecommand() -> None:
    options = kubelet_exec.stream_options(_request("stdin=true&stdout=1&stderr=true&tty=true"))
    assert options == StreamOptions(stdin=True, stdout=True, stderr=False, tty=True)
    with pytest.raises(web.HTTPBadRequest) as caught:
        kubelet_exec.stream_options(_request("tty=true"))
    assert caught.value.text == "you must specify at least 1 of stdin, stdout, stderr"


@pytest.mark.parametrize(
    ("verb", "query", "fields"),
    [
        ("exec", "stdout=true", ["command"]),
        ("exec", "command=ls", ["stdin"]),
        ("attach", "", ["stdin"]),
    ],
)
def test_apiserver_validates_exec_and_attach_options(verb: str, query: str, fields: list[str]) -> None:
    with pytest.raises(StatusError) as caught:
        podexec.validate(verb, _request(query), "web")
    status = caught.value.status()
    assert status["code"] == 422
    assert [c["field"] for c in status["details"]["causes"]] == fields
    podexec.validate("attach", _request("stdout=true"), "web")


def test_kubelet_url_carries_the_command_and_streams() -> None:
    pod = {"metadata": {"name": "web", "namespace": "ns"}}
    request = _request("command=sh&command=-c&command=echo%20hi&stdin=true&tty=1&container=c")
    url, params = podexec.kubelet_url("exec", request, pod, "c", 10250, "127.0.0.1")
    assert url == "http://127.0.0.1:10250/exec/ns/web/c"
    assert params == [
        ("command", "sh"),
        ("command", "-c"),
        ("command", "echo hi"),
        ("stdin", "true"),
        ("tty", "true"),
    ]
