"""The HTTP surface: probes, metrics, and clean 400s for anything that is not an AdmissionReview."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webhook_testkit import post, review

from kruise.webhook.admission import AdmissionRequest, Decision, deny
from kruise.webhook.app import caller_deadline, create_app

PATH = "/validate-apps-kruise-io-cloneset"
JSON = {"content-type": "application/json"}


async def test_healthz_and_metrics(client):
    assert (await client.get("/healthz")).status_code == 200
    ns = {"metadata": {"name": "x"}}
    body = review("DELETE", group="", version="v1", kind="Namespace", resource="namespaces", old=ns)
    await post(client, "/validate-namespace", body)
    text = (await client.get("/metrics")).text
    hook = 'webhook="/validate-namespace"'
    assert 'controller_runtime_webhook_requests_total{code="200",' + hook + "} 1.0" in text
    assert "controller_runtime_webhook_latency_seconds_count{" + hook + "} 1.0" in text
    assert 'kruise_webhook_admission_decisions_total{allowed="true",' + hook + "} 1.0" in text


async def test_readyz_follows_the_readiness_callback():
    state = {"ready": False}
    app = create_app({}, ready=lambda: state["ready"])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        assert (await c.get("/readyz")).status_code == 503
        state["ready"] = True
        assert (await c.get("/readyz")).status_code == 200


@pytest.mark.parametrize(
    ("body", "headers", "fragment"),
    [
        (b"", {"content-type": "application/json"}, "request body is empty"),
        (b"{not json", {"content-type": "application/json"}, "not JSON"),
        (b"{}", {"content-type": "text/plain"}, "expected application/json"),
        (b"[]", {"content-type": "application/json"}, "invalid AdmissionReview"),
        (b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}', JSON, "request"),
        (b'{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{}}', JSON, "apiVersion"),
    ],
)
async def test_malformed_reviews_get_a_clean_400(client, body, headers, fragment):
    resp = await client.post(PATH, content=body, headers=headers)
    assert resp.status_code == 400
    assert resp.json()["code"] == 400
    assert fragment in resp.json()["message"]


async def test_handler_exception_is_a_denied_review_not_a_500():
    async def broken(req: AdmissionRequest) -> Decision:
        raise RuntimeError("boom")

    app = create_app({"/x": broken})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj={"metadata": {}})
        resp = await c.post("/x", json=body)
    assert resp.status_code == 200
    assert resp.json()["response"]["allowed"] is False
    assert resp.json()["response"]["status"]["code"] == 500
    assert "boom" in resp.json()["response"]["status"]["message"]


async def test_handler_stuck_past_the_callers_timeout_is_cancelled_and_answers():
    """A handler waiting on a cache that never syncs is cancelled at the ``?timeout=`` the caller sent,
    as upstream's request context is, and the request is answered instead of held."""
    never_synced = asyncio.Event()
    outcome: list[str] = []

    async def stuck(req: AdmissionRequest) -> Decision:
        try:
            await never_synced.wait()
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        return Decision(allowed=True)

    app = create_app({"/mutate-pod": stuck})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj={"metadata": {}})
        resp = await c.post("/mutate-pod?timeout=1s", json=body)
    answer = resp.json()["response"]
    assert resp.status_code == 200 and answer["allowed"] is False and outcome == ["cancelled"]
    assert answer["status"] == {
        "code": 500,
        "message": "webhook /mutate-pod did not answer within the caller's timeout: "
        "context deadline exceeded",
        "reason": "InternalError",
    }


async def test_a_handlers_own_timeout_is_a_handler_failure_not_the_deadline():
    async def times_out(req: AdmissionRequest) -> Decision:
        raise TimeoutError("dependency timed out")

    app = create_app({"/x": times_out})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj={"metadata": {}})
        resp = await c.post("/x?timeout=30s", json=body)
    assert (
        resp.json()["response"]["status"]["message"] == "internal error in webhook /x: dependency timed out"
    )


@pytest.mark.parametrize(
    ("query", "seconds"),
    [("10s", 10.0), ("1.5s", 1.5), ("30s", 30.0), (None, None), ("", None), ("10", None), ("1m0s", None)],
)
def test_caller_deadline_reads_the_apiservers_form_only(query, seconds):
    assert caller_deadline(query) == seconds


async def test_deny_carries_reason():
    assert deny(422, "bad").reason == "Invalid"


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
_request_fields = st.fixed_dictionaries(
    {},
    optional={
        "uid": st.one_of(st.text(max_size=5), st.integers()),
        "kind": _json_values,
        "resource": _json_values,
        "operation": st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT", "PATCH", ""]),
        "object": _json_values,
        "oldObject": _json_values,
        "dryRun": _json_values,
        "subResource": _json_values,
    },
)
_reviews = st.one_of(
    _json_values,
    st.fixed_dictionaries(
        {"apiVersion": st.sampled_from(["admission.k8s.io/v1", "admission.k8s.io/v1beta1", "v1"]),
         "kind": st.sampled_from(["AdmissionReview", "Pod"]), "request": _request_fields}
    ),
)  # fmt: skip
_paths = st.sampled_from(
    [
        PATH,
        "/mutate-apps-kruise-io-cloneset",
        "/mutate-pod",
        "/validate-namespace",
        "/validate-apps-replicaset",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=_reviews, path=_paths)
async def test_fuzz_never_500(client, body, path):
    resp = await client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})
    assert resp.status_code in (200, 400)
    if resp.status_code == 200:
        answer = resp.json()["response"]
        assert isinstance(answer["allowed"], bool)
        assert answer.get("status", {}).get("code") != 500, answer


async def test_admission_paths_answer_other_methods_and_prefixes_as_fastapi_does():
    """Admission POSTs skip FastAPI's router; what they skip it for must not change other answers."""

    async def allowing(req: AdmissionRequest) -> Decision:
        return Decision(allowed=True, message=req.uid)

    body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj={"metadata": {}})
    app = create_app({"/x": allowing})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        assert (await c.get("/x")).status_code == 405
        assert (await c.post("/y", json=body)).status_code == 404
        resp = await c.post("/x?timeout=oops&timeout=10s", json=body)
        assert resp.headers["content-type"] == "application/json"
        assert resp.json()["response"]["status"]["message"] == body["request"]["uid"]
    prefixed = httpx.ASGITransport(app=app, root_path="/hooks")
    async with httpx.AsyncClient(transport=prefixed, base_url="http://t") as c:
        assert (await c.post("/hooks/x", json=body)).json()["response"]["allowed"] is True


async def test_an_answer_that_cannot_be_built_is_a_plain_500_and_raised():
    """As starlette's ServerErrorMiddleware: the client gets a 500, the server logs the exception."""

    async def unencodable(req: AdmissionRequest) -> Decision:
        return Decision(allowed=True, warnings=(object(),))  # type: ignore[arg-type]

    app = create_app({"/x": unencodable})
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        body = review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj={"metadata": {}})
        resp = await c.post("/x", json=body)
    assert resp.status_code == 500 and resp.text == "Internal Server Error"


class Caches:
    """A `CacheGate` the test drives: named caches not current until `catch_up()`."""

    def __init__(self, *stale: str) -> None:
        self.stale = list(stale)
        self._current = asyncio.Event()
        self.waiting = asyncio.Event()

    def not_current(self) -> list[str]:
        return list(self.stale)

    async def wait_current(self) -> None:
        self.waiting.set()
        await self._current.wait()

    def catch_up(self) -> None:
        self.stale = []
        self._current.set()


def pod_review() -> dict:
    return review("CREATE", group="", version="v1", kind="Pod", resource="pods", obj={"metadata": {}})


async def test_admission_waits_for_caches_that_are_not_current():
    """A handler never reads a cache that lost its watch: the request waits for the re-list."""
    caches = Caches("sidecarsets.v1alpha1.apps.kruise.io")
    seen: list[list[str]] = []

    async def handler(req: AdmissionRequest) -> Decision:
        seen.append(caches.not_current())
        return Decision(allowed=True)

    app = create_app({"/mutate-pod": handler}, caches=caches)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        answer = asyncio.create_task(c.post("/mutate-pod?timeout=10s", json=pod_review()))
        await caches.waiting.wait()
        assert seen == []
        caches.catch_up()
        resp = await answer
    assert resp.json()["response"]["allowed"] is True
    assert seen == [[]]


async def test_caches_not_current_by_the_deadline_refuse_instead_of_admitting():
    """Past the caller's deadline the answer is an error naming the caches (failurePolicy Fail then
    refuses the object), never the handler's answer from a cache with a gap."""
    caches = Caches("sidecarsets.v1alpha1.apps.kruise.io", "pods.v1")
    called: list[str] = []

    async def handler(req: AdmissionRequest) -> Decision:
        called.append(req.uid)
        return Decision(allowed=True)

    app = create_app({"/mutate-pod": handler}, caches=caches)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        resp = await c.post("/mutate-pod?timeout=0.2s", json=pod_review())
    answer = resp.json()["response"]
    assert resp.status_code == 200 and answer["allowed"] is False and called == []
    assert answer["status"] == {
        "code": 500,
        "message": "webhook /mutate-pod: informer caches are re-listing "
        "(sidecarsets.v1alpha1.apps.kruise.io, pods.v1); not answering from them",
        "reason": "InternalError",
    }
