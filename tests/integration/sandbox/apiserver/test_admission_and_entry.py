"""Admission points of the write pipeline, multi-version CRDs, watch-list, and the `python -m` entry."""

from __future__ import annotations

import asyncio
import ssl
import sys

import httpx
import pytest
import yaml

from kruise.sandbox.apiserver.admission import AdmissionAttributes, AdmissionDenied
from kruise.sandbox.apiserver.threaded import serve_in_thread


class RecordingPlugin:
    """Labels every created ConfigMap, refuses ones named `deny-me`, records every call."""

    def __init__(self):
        self.calls: list[tuple[str, str, str, str, bool]] = []

    async def mutate(self, attrs: AdmissionAttributes) -> list[str]:
        self.calls.append(("mutate", attrs.operation, attrs.resource, attrs.subresource, attrs.dry_run))
        if attrs.operation == "CREATE" and attrs.resource == "configmaps":
            attrs.object["metadata"].setdefault("labels", {})["mutated"] = "yes"
        return ["mutated it"]

    async def validate(self, attrs: AdmissionAttributes) -> list[str]:
        self.calls.append(("validate", attrs.operation, attrs.resource, attrs.subresource, attrs.dry_run))
        if attrs.name == "deny-me":
            raise AdmissionDenied(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "code": 403,
                    "reason": "Forbidden",
                    "message": 'admission webhook "x" denied the request: no',
                }
            )
        return []


def http(server) -> httpx.AsyncClient:
    ctx = ssl.create_default_context(cadata=server.ca_pem.decode())
    return httpx.AsyncClient(
        base_url=server.url, verify=ctx, headers={"Authorization": f"Bearer {server.token}"}
    )


async def test_admission_points_order_warnings_and_denial():
    plugin = RecordingPlugin()
    with serve_in_thread(admission=plugin) as server:
        async with http(server) as c:
            base = "/api/v1/namespaces/default"
            r = await c.post(f"{base}/configmaps", json={"metadata": {"name": "a"}})
            assert r.status_code == 201 and r.json()["metadata"]["labels"] == {"mutated": "yes"}
            assert "mutated it" in r.headers["Warning"]
            r = await c.post(f"{base}/configmaps", json={"metadata": {"name": "deny-me"}})
            assert (
                r.status_code == 403 and r.json()["message"] == 'admission webhook "x" denied the request: no'
            )
            r = await c.patch(
                f"{base}/configmaps/a?dryRun=All",
                json={"data": {"k": "v"}},
                headers={"Content-Type": "application/merge-patch+json"},
            )
            assert r.status_code == 200 and r.json()["data"] == {"k": "v"}
            assert "data" not in (await c.get(f"{base}/configmaps/a")).json()
            await c.post(
                f"{base}/pods",
                json={"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
            )
            await c.put(
                f"{base}/pods/p/status", json={"metadata": {"name": "p"}, "status": {"phase": "Running"}}
            )
            await c.post(f"{base}/pods/p/eviction", json={"metadata": {"name": "p"}})
            await c.delete(f"{base}/configmaps/a")
    ops = [(kind, op, res, sub, dry) for kind, op, res, sub, dry in plugin.calls]
    assert ops[:2] == [
        ("mutate", "CREATE", "configmaps", "", False),
        ("validate", "CREATE", "configmaps", "", False),
    ]
    assert ("validate", "UPDATE", "configmaps", "", True) in ops
    assert ("mutate", "UPDATE", "pods", "status", False) in ops
    assert ("validate", "CREATE", "pods", "eviction", False) in ops
    assert ops[-1] == ("validate", "DELETE", "configmaps", "", False)


async def test_multi_version_crd_and_watch_list(emulator):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.ex.io"},
        "spec": {
            "group": "ex.io",
            "scope": "Cluster",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": False,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                },
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                },
            ],
        },
    }
    async with http(emulator.server) as c:
        assert (
            await c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
        ).status_code == 201
        async with asyncio.timeout(30):
            while True:
                got = (
                    await c.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.ex.io")
                ).json()
                if any(x["type"] == "Established" for x in got["status"]["conditions"]):
                    break
                await asyncio.sleep(0.01)
        r = await c.post(
            "/apis/ex.io/v1beta1/things",
            json={"apiVersion": "ex.io/v1beta1", "kind": "Thing", "metadata": {"name": "t"}, "x": 1},
        )
        assert r.status_code == 201 and r.json()["apiVersion"] == "ex.io/v1beta1"
        assert (await c.get("/apis/ex.io/v1/things/t")).json()["apiVersion"] == "ex.io/v1"
        lines = []
        async with c.stream(
            "GET",
            "/apis/ex.io/v1/things?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
            "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
        ) as stream:
            async for line in stream.aiter_lines():
                lines.append(yaml.safe_load(line))
        assert lines[0]["type"] == "ADDED" and lines[0]["object"]["metadata"]["name"] == "t"
        assert lines[1]["type"] == "BOOKMARK"
        assert lines[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        assert (
            await c.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.ex.io")
        ).is_success
        async with asyncio.timeout(30):
            while True:  # the CRD cleanup finalizer runs asynchronously, like the real controller
                if (await c.get("/apis/ex.io/v1/things")).status_code == 404:
                    break
                await asyncio.sleep(0.01)
    assert list(emulator.server.store.list(("ex.io", "things"))) == []


async def test_module_entry_prints_ready_and_serves(tmp_path):
    kubeconfig = tmp_path / "kc"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "kruise.sandbox.apiserver",
        "--port",
        "0",
        "--kubeconfig",
        str(kubeconfig),
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert line.startswith("ready: kube-apiserver emulator at https://127.0.0.1:")
        config = yaml.safe_load(kubeconfig.read_text())
        assert config["clusters"][0]["cluster"]["certificate-authority-data"]
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 30) == 0


@pytest.mark.parametrize("watch_flag", ["true", "True", "1"])
async def test_watch_flag_parses_like_go(emulator, watch_flag):
    async with http(emulator.server) as c:
        r = await c.get(f"/api/v1/namespaces?watch={watch_flag}&timeoutSeconds=0.2")
    assert r.status_code == 200 and '"type":"ADDED"' in r.text


async def test_services_get_cluster_ips_and_headless_stays(emulator):
    async with http(emulator.server) as c:
        base = "/api/v1/namespaces/default/services"
        a = (await c.post(base, json={"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}})).json()
        b = (await c.post(base, json={"metadata": {"name": "b"}, "spec": {"clusterIP": "None"}})).json()
    assert a["spec"]["clusterIP"].startswith("10.96.") and a["spec"]["clusterIPs"] == [a["spec"]["clusterIP"]]
    assert a["spec"]["ports"][0] == {"port": 80, "protocol": "TCP", "targetPort": 80}
    assert b["spec"]["clusterIP"] == "None"


async def test_self_subject_access_review_allows_the_admin_token(emulator):
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "create", "resource": "pods"}},
    }
    async with http(emulator.server) as c:
        r = await c.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=review)
    assert r.status_code == 201 and r.json()["status"]["allowed"] is True
