"""WebhookAdmission against a real HTTPS webhook: bodies, patches, errors worded as kube-apiserver."""

from __future__ import annotations

import asyncio
import json

import pytest

from kruise.sandbox.apiserver.admission import AdmissionAttributes, AdmissionDenied
from tests.kit import webhook_server
from tests.kit.pods import pod
from tests.kit.webhook_server import Reply, patch_response

ADM = ("admissionregistration.k8s.io", "v1")


def web_pod(name="web", labels=None, namespace="default"):
    """A stored nginx pod, as an admission request carries it."""
    return pod(
        name,
        namespace=namespace,
        labels=labels or {},
        containers=[{"name": "main", "image": "nginx"}],
        typed=True,
    )


def pod_attrs(
    op="CREATE", obj=None, old=None, namespace="default", sub="", dry_run=False
) -> AdmissionAttributes:
    return AdmissionAttributes(
        operation=op,
        group="",
        version="v1",
        resource="pods",
        subresource=sub,
        kind={"group": "", "version": "v1", "kind": "Pod"},
        namespace=namespace,
        name="web",
        object=obj,
        old_object=old,
        dry_run=dry_run,
    )


def hook(name, client_config, resources=("pods",), ops=("CREATE",), **extra):
    return {
        "name": name,
        "clientConfig": client_config,
        "rules": [
            {"operations": list(ops), "apiGroups": [""], "apiVersions": ["v1"], "resources": list(resources)}
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        **extra,
    }


def url_config(server, certificates, path):
    return {"url": server.url(path), "caBundle": certificates.ca_bundle}


def service_config(certificates, path, name="hooks"):
    return {
        "service": {"namespace": "system", "name": name, "path": path},
        "caBundle": certificates.ca_bundle,
    }


def register(store, plural, name, *hooks):
    store.add(*ADM, plural, {"metadata": {"name": name}, "webhooks": list(hooks)})


async def test_mutating_patch_is_applied_and_review_is_complete(store, server, certificates, admission):
    server.routes["/mutate"] = lambda req: patch_response(
        [{"op": "add", "path": "/metadata/labels/injected", "value": "yes"}], warnings=["careful"]
    )
    register(
        store,
        "mutatingwebhookconfigurations",
        "m",
        hook("m.kruise.io", url_config(server, certificates, "/mutate")),
    )
    attrs = pod_attrs(obj=web_pod())
    warnings = await admission.mutate(attrs)
    assert attrs.object["metadata"]["labels"] == {"injected": "yes"}
    assert warnings == ["careful"]
    (review,) = server.received["/mutate"]
    request = review["request"]
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "Pod"} == request["requestKind"]
    assert (
        request["resource"]
        == {"group": "", "version": "v1", "resource": "pods"}
        == request["requestResource"]
    )
    assert request["operation"] == "CREATE" and request["namespace"] == "default" and request["name"] == "web"
    assert request["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    assert request["dryRun"] is False and request["oldObject"] is None
    assert request["userInfo"]["username"] == "system:admin"
    assert "subResource" not in request and len(request["uid"]) == 36


async def test_service_reference_is_verified_against_service_dns_name(store, server, certificates, admission):
    server.routes["/svc"] = lambda req: {"allowed": True}
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook("v.kruise.io", service_config(certificates, "/svc")),
    )
    assert await admission.validate(pod_attrs(obj=web_pod())) == []
    assert len(server.received["/svc"]) == 1


async def test_service_without_address_fails_closed(store, certificates, admission):
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook("v.kruise.io", service_config(certificates, "/", "nope")),
    )
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod()))
    status = caught.value.status
    assert status["code"] == 500 and status["reason"] == "InternalError"
    assert status["message"].startswith(
        'Internal error occurred: failed calling webhook "v.kruise.io": failed to call webhook: '
        'Post "https://nope.system.svc:443/?timeout=10s"'
    )


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_untrusted_certificate_obeys_failure_policy(store, server, admission, policy):
    from tests.kit.webhook_server import make_certificates

    other_ca = make_certificates(["elsewhere"])
    server.routes["/v"] = lambda req: {"allowed": False}
    config = {"url": server.url("/v"), "caBundle": other_ca.ca_bundle}
    register(store, "validatingwebhookconfigurations", "v", hook("v.kruise.io", config, failurePolicy=policy))
    if policy == "Ignore":
        assert await admission.validate(pod_attrs(obj=web_pod())) == []
        return
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod()))
    assert "CERTIFICATE_VERIFY_FAILED" in caught.value.status["message"]
    assert caught.value.status["message"].startswith(
        'Internal error occurred: failed calling webhook "v.kruise.io"'
    )


@pytest.mark.parametrize(
    ("status", "code", "reason", "message"),
    [
        (None, 400, None, 'admission webhook "d.kruise.io" denied the request without explanation'),
        ({"message": "no way"}, 400, None, 'admission webhook "d.kruise.io" denied the request: no way'),
        (
            {"code": 403, "reason": "Forbidden"},
            403,
            "Forbidden",
            'admission webhook "d.kruise.io" denied the request: Forbidden',
        ),
        ({"code": 200, "message": "m"}, 400, None, 'admission webhook "d.kruise.io" denied the request: m'),
    ],
)
async def test_denial_is_worded_as_apiserver(
    store, server, certificates, admission, status, code, reason, message
):
    server.routes["/d"] = lambda req: {"allowed": False, **({"status": status} if status else {})}
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook("d.kruise.io", url_config(server, certificates, "/d")),
    )
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod()))
    body = caught.value.status
    assert (body["kind"], body["status"], body["code"], body["message"]) == (
        "Status",
        "Failure",
        code,
        message,
    )
    assert body.get("reason") == reason


async def test_eviction_subresource_is_refused_with_real_message(store, server, certificates, admission):
    server.routes["/pub"] = lambda req: {
        "allowed": False,
        "status": {"code": 429, "message": "pub unavailable"},
    }
    register(
        store,
        "validatingwebhookconfigurations",
        "pub",
        hook("pub.kruise.io", url_config(server, certificates, "/pub"), resources=["pods/eviction"]),
    )
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "web", "namespace": "default"},
    }
    plain = pod_attrs(obj=web_pod())
    assert await admission.validate(plain) == []
    attrs = pod_attrs(obj=eviction, sub="eviction")
    attrs.kind = {"group": "policy", "version": "v1", "kind": "Eviction"}
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(attrs)
    assert caught.value.status["code"] == 429
    assert (
        caught.value.status["message"]
        == 'admission webhook "pub.kruise.io" denied the request: pub unavailable'
    )
    (review,) = server.received["/pub"]
    assert review["request"]["subResource"] == "eviction" and review["request"]["kind"]["kind"] == "Eviction"


async def test_timeout_is_a_call_failure(store, server, certificates, admission):
    never = asyncio.Event()
    server.routes["/slow"] = lambda req: Reply(delay=never)
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook("slow.kruise.io", url_config(server, certificates, "/slow"), timeoutSeconds=1),
    )
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod()))
    assert caught.value.status["message"] == (
        'Internal error occurred: failed calling webhook "slow.kruise.io": failed to call webhook: '
        f'Post "{server.url("/slow")}?timeout=1s": context deadline exceeded'
    )


def review_reply(body: dict) -> Reply:
    return Reply(body=json.dumps(body).encode())


@pytest.mark.parametrize(
    ("answer", "fragment"),
    [
        (lambda req: Reply(status=500, body=b"boom"), 'an error on the server ("boom")'),
        (
            lambda req: review_reply({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}),
            "received invalid webhook response: webhook response was absent",
        ),
        (
            lambda req: review_reply(
                {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {"uid": "x"}}
            ),
            'expected response.uid="',
        ),
        (
            lambda req: review_reply({"apiVersion": "v1", "kind": "Status", "response": {"uid": req["uid"]}}),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /v1, Kind=Status",
        ),
        (
            lambda req: patch_response([{"op": "add", "path": "/x", "value": 1}]),
            "received invalid webhook response: validating webhook may not return response.patch",
        ),
    ],
)
async def test_broken_answers_fail_closed(store, server, certificates, admission, answer, fragment):
    server.routes["/bad"] = answer
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook("bad.kruise.io", url_config(server, certificates, "/bad")),
    )
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod()))
    assert caught.value.status["message"].startswith(
        'Internal error occurred: failed calling webhook "bad.kruise.io": '
    )
    assert fragment in caught.value.status["message"]
    assert caught.value.status["code"] == 500


async def test_broken_answer_is_ignored_under_ignore(store, server, certificates, admission):
    server.routes["/bad"] = lambda req: patch_response([{"op": "add", "path": "/x", "value": 1}])
    config = url_config(server, certificates, "/bad")
    register(
        store, "validatingwebhookconfigurations", "v", hook("bad.kruise.io", config, failurePolicy="Ignore")
    )
    assert await admission.validate(pod_attrs(obj=web_pod())) == []


@pytest.mark.parametrize(
    ("answer", "policy", "fragment"),
    [
        # not understood: a call failure, so failurePolicy decides
        (
            lambda req: {"allowed": True, "patch": "W10="},
            "Fail",
            'failed calling webhook "m": received invalid webhook response: '
            "webhook returned response.patch but not response.patchType",
        ),
        (
            lambda req: {**patch_response([]), "patchType": "MergePatch"},
            "Fail",
            'failed calling webhook "m": unsupported patch type "MergePatch"',
        ),
        (lambda req: {**patch_response([]), "patchType": "MergePatch"}, "Ignore", None),
        # understood but inapplicable: always an internal error, whatever the policy
        (
            lambda req: patch_response([{"op": "replace", "path": "/spec/missing", "value": 1}]),
            "Ignore",
            "Internal error occurred: ",
        ),
    ],
)
async def test_mutating_patch_problems(store, server, certificates, admission, answer, policy, fragment):
    server.routes["/m"] = answer
    register(
        store,
        "mutatingwebhookconfigurations",
        "m",
        hook("m", url_config(server, certificates, "/m"), failurePolicy=policy),
    )
    attrs = pod_attrs(obj=web_pod())
    if fragment is None:
        await admission.mutate(attrs)
        assert attrs.object == web_pod()
        return
    with pytest.raises(AdmissionDenied) as caught:
        await admission.mutate(attrs)
    assert caught.value.status["code"] == 500 and fragment in caught.value.status["message"]


async def test_patch_on_delete_is_refused(store, server, certificates, admission):
    server.routes["/m"] = lambda req: patch_response([{"op": "add", "path": "/x", "value": 1}])
    register(
        store,
        "mutatingwebhookconfigurations",
        "m",
        hook("m", url_config(server, certificates, "/m"), ops=["DELETE"]),
    )
    with pytest.raises(AdmissionDenied) as caught:
        await admission.mutate(pod_attrs(op="DELETE", old=web_pod()))
    assert caught.value.status["message"] == (
        'Internal error occurred: admission webhook "m" attempted to modify the object, '
        "which is not supported for this operation"
    )


async def test_mutating_order_and_reinvocation(store, server, certificates, admission):
    calls: list[str] = []

    def first(req):
        calls.append("a-first")
        return {"allowed": True}

    def second(req):
        calls.append("b-second")
        if "late" in req["object"]["metadata"]["labels"]:
            return {"allowed": True}
        return patch_response([{"op": "add", "path": "/metadata/labels/late", "value": "1"}])

    server.routes["/first"] = first
    server.routes["/second"] = second
    # registered out of order: configurations run sorted by name
    register(
        store,
        "mutatingwebhookconfigurations",
        "b",
        hook("second", url_config(server, certificates, "/second")),
    )
    register(
        store,
        "mutatingwebhookconfigurations",
        "a",
        hook("first", url_config(server, certificates, "/first"), reinvocationPolicy="IfNeeded"),
    )
    attrs = pod_attrs(obj=web_pod())
    await admission.mutate(attrs)
    assert calls == ["a-first", "b-second", "a-first"]
    assert server.received["/first"][1]["request"]["object"]["metadata"]["labels"] == {"late": "1"}


async def test_no_reinvocation_without_change(store, server, certificates, admission):
    server.routes["/same"] = lambda req: {"allowed": True}
    register(
        store,
        "mutatingwebhookconfigurations",
        "a",
        hook("one", url_config(server, certificates, "/same"), reinvocationPolicy="IfNeeded"),
        hook("two", url_config(server, certificates, "/same")),
    )
    await admission.mutate(pod_attrs(obj=web_pod()))
    assert len(server.received["/same"]) == 2


async def test_namespace_selector(store, server, certificates, admission):
    server.routes["/ns"] = lambda req: {"allowed": False}
    selector = {"matchLabels": {"env": "prod"}}
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook("ns.kruise.io", url_config(server, certificates, "/ns"), namespaceSelector=selector),
    )
    assert await admission.validate(pod_attrs(obj=web_pod())) == []
    with pytest.raises(AdmissionDenied):
        await admission.validate(pod_attrs(obj=web_pod(namespace="team"), namespace="team"))
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod(namespace="ghost"), namespace="ghost"))
    assert (
        caught.value.status["code"] == 404
        and caught.value.status["message"] == 'namespaces "ghost" not found'
    )


async def test_object_selector_matches_old_or_new(store, server, certificates, admission):
    server.routes["/obj"] = lambda req: {"allowed": True}
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook(
            "obj.kruise.io",
            url_config(server, certificates, "/obj"),
            ops=["*"],
            objectSelector={"matchLabels": {"protect": "true"}},
        ),
    )
    await admission.validate(pod_attrs(obj=web_pod()))
    assert "/obj" not in server.received
    await admission.validate(pod_attrs(op="UPDATE", obj=web_pod(), old=web_pod(labels={"protect": "true"})))
    await admission.validate(pod_attrs(op="DELETE", old=web_pod(labels={"protect": "true"})))
    assert [r["request"]["operation"] for r in server.received["/obj"]] == ["UPDATE", "DELETE"]
    assert server.received["/obj"][1]["request"]["options"]["kind"] == "DeleteOptions"


async def test_dry_run_and_side_effects(store, server, certificates, admission):
    server.routes["/dry"] = lambda req: {"allowed": True}
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        hook("clean", url_config(server, certificates, "/dry"), sideEffects="NoneOnDryRun"),
    )
    await admission.validate(pod_attrs(obj=web_pod(), dry_run=True))
    assert server.received["/dry"][0]["request"]["dryRun"] is True
    register(
        store,
        "validatingwebhookconfigurations",
        "w",
        hook("dirty", url_config(server, certificates, "/dry"), sideEffects="Some"),
    )
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod(), dry_run=True))
    assert caught.value.status["code"] == 400
    assert caught.value.status["message"] == 'admission webhook "dirty" does not support dry run'


async def test_webhook_configurations_are_exempt(store, server, certificates, admission):
    server.routes["/all"] = lambda req: {"allowed": False}
    everything = hook("all", url_config(server, certificates, "/all"))
    everything["rules"] = [
        {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}
    ]
    register(store, "validatingwebhookconfigurations", "v", everything)
    attrs = AdmissionAttributes(
        operation="DELETE",
        group="admissionregistration.k8s.io",
        version="v1",
        resource="validatingwebhookconfigurations",
        subresource="",
        kind={
            "group": "admissionregistration.k8s.io",
            "version": "v1",
            "kind": "ValidatingWebhookConfiguration",
        },
        namespace="",
        name="v",
        object=None,
        old_object={"metadata": {"name": "v"}},
    )
    assert await admission.validate(attrs) == []


async def test_dry_run_without_side_effects_field_is_a_call_failure(store, server, certificates, admission):
    server.routes["/dry"] = lambda req: {"allowed": True}
    spec = hook("nil", url_config(server, certificates, "/dry"))
    del spec["sideEffects"]
    register(store, "validatingwebhookconfigurations", "v", spec)
    with pytest.raises(AdmissionDenied) as caught:
        await admission.validate(pod_attrs(obj=web_pod(), dry_run=True))
    assert caught.value.status["message"] == (
        'Internal error occurred: failed calling webhook "nil": Webhook SideEffects is nil'
    )


class StalledPeer:
    """Raw listeners standing in for a stalled webhook: ``frozen`` accepts TCP and never speaks (a
    SIGSTOPped process whose kernel still accepts), ``dripping`` answers over TLS one byte at a time,
    each byte inside httpx's per-read timeout, so only a deadline on the whole call ends it."""

    def __init__(self, certificates, gap: float) -> None:
        self.certificates, self.gap = certificates, gap
        self.release = asyncio.Event()
        self.servers: list[asyncio.Server] = []

    async def frozen(self) -> int:
        async def hold(reader, writer):
            await self.release.wait()
            writer.close()

        return await self._listen(hold, ssl=None)

    async def dripping(self) -> int:
        async def drip(reader, writer):
            await reader.readuntil(b"\r\n\r\n")
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            writer.write(head)
            while not self.release.is_set():
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(self.gap)  # the peer's pace, not a wait for a condition
            writer.close()

        return await self._listen(drip, ssl=webhook_server.server_context(self.certificates))

    async def _listen(self, handle, ssl) -> int:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=ssl)
        self.servers.append(server)
        return server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        self.release.set()
        for server in self.servers:
            server.close()


@pytest.fixture
async def stalled(certificates):
    peer = StalledPeer(certificates, gap=0.3)
    yield peer
    await peer.close()


def stalled_hook(name, certificates, port, **extra):
    config = {"url": f"https://127.0.0.1:{port}/mutate-pod", "caBundle": certificates.ca_bundle}
    return hook(name, config, timeoutSeconds=1, **extra)


def timeout_status(name, port):
    message = (
        f'failed calling webhook "{name}": failed to call webhook: '
        f'Post "https://127.0.0.1:{port}/mutate-pod?timeout=1s": context deadline exceeded'
    )
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f"Internal error occurred: {message}",
        "reason": "InternalError",
        "details": {"causes": [{"message": message}]},
        "code": 500,
    }


@pytest.mark.parametrize("stall", ["frozen", "dripping"])
async def test_stalled_mutating_webhook_under_fail_is_apiservers_timeout_error(
    store, certificates, admission, stalled, stall
):
    port = await getattr(stalled, stall)()
    register(store, "mutatingwebhookconfigurations", "m", stalled_hook("mpod.kb.io", certificates, port))
    with pytest.raises(AdmissionDenied) as caught:
        await admission.mutate(pod_attrs(obj=web_pod()))
    assert caught.value.status == timeout_status("mpod.kb.io", port)


@pytest.mark.parametrize("stall", ["frozen", "dripping"])
async def test_stalled_webhooks_under_ignore_admit_unchanged_without_warnings(
    store, certificates, admission, stalled, stall
):
    """kube-apiserver fails open silently for the client: no Warning header; only its log, the
    webhook_fail_open_count metric and a failed-open audit annotation record it."""
    port = await getattr(stalled, stall)()
    register(
        store,
        "mutatingwebhookconfigurations",
        "m",
        stalled_hook("mpod.kb.io", certificates, port, failurePolicy="Ignore"),
    )
    register(
        store,
        "validatingwebhookconfigurations",
        "v",
        stalled_hook("vpod.kb.io", certificates, port, failurePolicy="Ignore"),
    )
    attrs = pod_attrs(obj=web_pod())
    assert await admission.mutate(attrs) == []
    assert attrs.object == web_pod()
    assert await admission.validate(attrs) == []
