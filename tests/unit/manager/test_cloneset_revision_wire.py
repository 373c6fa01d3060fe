"""CloneSet ControllerRevisions must reach the apiserver with ``data`` in Go's canonical bytes.

kube-apiserver stores ``data`` as sent and compares it byte-wise on later writes, after a patch
has re-encoded it the Go way; anything but compact, HTML-escaped, key-sorted JSON breaks the
next label patch or garbage-collector patch of the revision ("field is immutable").
"""

from __future__ import annotations

import orjson
import pytest
import yaml
from aiohttp import web

from kruise.control.common.revision import go_json, new_cloneset_revision
from kruise.kube.client import Client
from kruise.kube.expectations import ResourceVersionExpectations
from kruise.manager.writers.revisions import RevisionWriter


@pytest.fixture
async def wire(tmp_path):
    bodies: list[bytes] = []

    async def handle(request: web.Request) -> web.Response:
        raw = await request.read()
        bodies.append(raw)
        obj = orjson.loads(raw)
        obj["metadata"]["resourceVersion"] = "1"
        return web.Response(status=201, body=orjson.dumps(obj), content_type="application/json")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    client = await Client.from_kubeconfig(kubeconfig, request_timeout=5)
    yield client, bodies
    await client.close()
    await runner.cleanup()


def _cloneset() -> dict:
    container = {
        "name": "main",
        "image": "nginx:1.25",
        "command": ["sh", "-c", "echo héllo > /tmp/x && sleep 3600"],
        "env": [{"value": "<b>", "name": "Z"}],
    }
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "cs", "namespace": "ns", "uid": "u-1"},
        "spec": {
            "replicas": 1,
            "template": {
                "metadata": {"labels": {"zz": "1", "app": "x"}},
                "spec": {"terminationGracePeriodSeconds": 5, "containers": [container]},
            },
        },
    }


async def test_created_revision_carries_canonical_data_bytes(wire) -> None:
    client, bodies = wire
    revision = new_cloneset_revision(_cloneset(), 1, 0)
    writer = RevisionWriter(client, ResourceVersionExpectations())
    created = await writer.store(revision)
    assert created is not None and created["data"] == revision["data"]
    [sent] = bodies
    assert b'"data":' + go_json(revision["data"]) in sent
    # HTML-sensitive characters escaped and non-ASCII kept as UTF-8, as encoding/json does.
    assert b"\\u003e /tmp/x \\u0026\\u0026" in sent and "héllo".encode() in sent
