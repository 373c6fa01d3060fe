"""Conformance: the apiserver calls a webhook served by a pod behind a Service, as in a cluster.

The webhook server is a real process (a process-image container) at its pod IP; the sandbox has
no address-map entry for its Service, so the call can only reach it through the EndpointSlice the
simulator's endpointslice controller writes for the ready pod (named targetPort resolved).
"""

from __future__ import annotations

import asyncio
import base64
import sys
from typing import Any

import pytest

from kruise.sandbox.apiserver.tls import generate
from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.simulator import ProcessImage
from kruise.sandbox.simulator.client import ApiError, Client, resource_path

NAMESPACE = "default"
WAIT = 30.0
SERVER = """
import json, os, ssl, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Hook(BaseHTTPRequestHandler):
    def reply(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(b"{}")

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["request"]
        data = (request.get("object") or {}).get("data") or {}
        response = {"uid": request["uid"], "allowed": "forbidden" not in data}
        if not response["allowed"]:
            response["status"] = {"code": 403, "message": "refused by " + os.environ["POD_NAME"]}
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
        self.reply(json.dumps(review).encode())

server = ThreadingHTTPServer((os.environ["POD_IP"], 9443), Hook)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1] + "/tls.crt", sys.argv[1] + "/tls.key")
server.socket = context.wrap_socket(server.socket, server_side=True)
print("serving on", os.environ["POD_IP"], flush=True)
server.serve_forever()
"""


def hook_objects(ca: bytes, certs: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """(api version, plural, object) of the Secret, Service, webhook Pod and webhook configuration."""
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "hook-certs"},
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": b64(certs.cert_pem + ca), "tls.key": b64(certs.key_pem)},
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "hook"},
        "spec": {
            "selector": {"app": "hook"},
            "ports": [{"name": "https", "port": 443, "targetPort": "webhook"}],
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "hook-0", "labels": {"app": "hook"}},
        "spec": {
            "containers": [
                {
                    "name": "server",
                    "image": "sandbox-test/hook:1.0",
                    "args": ["/certs"],
                    "env": [
                        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    ],
                    "ports": [{"name": "webhook", "containerPort": 9443}],
                    "readinessProbe": {
                        "httpGet": {"path": "/", "port": "webhook", "scheme": "HTTPS"},
                        "periodSeconds": 1,
                    },
                    "volumeMounts": [{"name": "certs", "mountPath": "/certs", "readOnly": True}],
                }
            ],
            "volumes": [{"name": "certs", "secret": {"secretName": "hook-certs"}}],
        },
    }
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "hook"},
        "webhooks": [
            {
                "name": "configmaps.hook.example.io",
                "clientConfig": {
                    "service": {"namespace": NAMESPACE, "name": "hook", "port": 443, "path": "/validate"},
                    "caBundle": b64(ca),
                },
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["configmaps"],
                    }
                ],
                "objectSelector": {"matchLabels": {"checked": "yes"}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
                "timeoutSeconds": 5,
            }
        ],
    }
    return [
        ("v1", "secrets", secret),
        ("v1", "services", service),
        ("v1", "pods", pod),
        ("admissionregistration.k8s.io/v1", "validatingwebhookconfigurations", config),
    ]


def configmap(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"checked": "yes"}},
        "data": data,
    }


async def create_configmap(client: Client, name: str, data: dict[str, str]) -> ApiError | None:
    try:
        await client.create(resource_path("v1", "configmaps", NAMESPACE), configmap(name, data))
    except ApiError as error:
        return error
    return None


async def until(check, what: str) -> Any:
    async with asyncio.timeout(WAIT):
        while True:
            value = await check()
            if value:
                return value
            await asyncio.sleep(0.1)
    raise AssertionError(what)


@pytest.fixture
async def sandbox(tmp_path):
    image = ProcessImage(
        "sandbox-test/hook:*", {"hook": [sys.executable, "-u", "-c", SERVER]}, default="hook"
    )
    async with Sandbox(nodes=1, speed=20, crd_dir=None, process_images=[image]) as sb:
        yield sb


async def test_webhook_pod_behind_service_is_called_through_its_endpoints(sandbox: Sandbox):
    certs = generate(hosts=(f"hook.{NAMESPACE}.svc",))
    client = Client(sandbox.kubeconfig)
    try:
        objects = {plural: (version, obj) for version, plural, obj in hook_objects(certs.ca_pem, certs)}

        async def create(plural: str) -> None:
            version, obj = objects[plural]
            namespaced = plural != "validatingwebhookconfigurations"
            await client.create(resource_path(version, plural, NAMESPACE if namespaced else None), obj)

        for plural in ("secrets", "services", "validatingwebhookconfigurations"):
            await create(plural)
        assert sandbox.service_addresses == {}

        # No pod behind the Service yet: the call fails the way kube-apiserver's does.
        early = await create_configmap(client, "early", {"ok": "1"})
        assert early is not None and early.status == 500
        assert 'no endpoints available for service "hook"' in early.message
        assert 'Post "https://hook.default.svc:443/validate?timeout=5s"' in early.message

        await create("pods")

        async def slice_ready() -> bool:
            listing = await client.list(resource_path("discovery.k8s.io/v1", "endpointslices", NAMESPACE))
            return any(e["conditions"]["ready"] for s in listing["items"] for e in s.get("endpoints") or [])

        await until(slice_ready, "the webhook pod never became a ready endpoint")
        listing = await client.list(resource_path("discovery.k8s.io/v1", "endpointslices", NAMESPACE))
        [hook_slice] = [
            s for s in listing["items"] if s["metadata"]["labels"]["kubernetes.io/service-name"] == "hook"
        ]
        pod = await client.get(resource_path("v1", "pods", NAMESPACE, "hook-0"))
        assert hook_slice["ports"] == [{"name": "https", "port": 9443, "protocol": "TCP"}]
        assert hook_slice["endpoints"][0]["addresses"] == [pod["status"]["podIP"]]
        assert hook_slice["metadata"]["ownerReferences"][0]["kind"] == "Service"
        endpoints = await client.get(resource_path("v1", "endpoints", NAMESPACE, "hook"))
        assert endpoints["subsets"][0]["addresses"][0]["ip"] == pod["status"]["podIP"]

        assert await create_configmap(client, "fine", {"ok": "1"}) is None
        refused = await create_configmap(client, "bad", {"forbidden": "1"})
        assert refused is not None and refused.status == 403
        assert (
            refused.message
            == 'admission webhook "configmaps.hook.example.io" denied the request: refused by hook-0'
        )

        # The pod goes away: its endpoint goes with it and the webhook is unreachable again.
        await client.delete(resource_path("v1", "pods", NAMESPACE, "hook-0"))

        async def refused_again() -> ApiError | None:
            error = await create_configmap(
                client, f"late-{asyncio.get_running_loop().time():.0f}", {"ok": "1"}
            )
            return error if error is not None and "no endpoints available" in error.message else None

        await until(refused_again, "a deleted webhook pod kept serving")
    finally:
        await client.close()
