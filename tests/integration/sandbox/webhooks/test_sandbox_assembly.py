"""The in-process Sandbox: start order, CRDs established, nodes Ready, clean teardown."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kruise.sandbox.cluster import CRD_PATH, Sandbox, apply_crds, load_crds
from kruise.sandbox.simulator.client import Client
from tests.kit.polling import until

WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.io"},
    "spec": {
        "group": "example.io",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def write_crd_dir(root: Path) -> Path:
    crd_dir = root / "crds"
    crd_dir.mkdir()
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ignored"}}
    (crd_dir / "example.io_widgets.yaml").write_text(yaml.safe_dump_all([WIDGET_CRD, other]))
    (crd_dir / "notes.txt").write_text("not yaml")
    return crd_dir


def test_load_crds_keeps_only_definitions(tmp_path):
    assert [c["metadata"]["name"] for c in load_crds(write_crd_dir(tmp_path))] == ["widgets.example.io"]


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"nodes": -1}, "nodes: must be >= 0"), ({"speed": 0}, "speed")]
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Sandbox(**kwargs)


async def test_sandbox_serves_crds_and_ready_nodes(tmp_path):
    kubeconfig = tmp_path / "out" / "kubeconfig"
    async with Sandbox(nodes=2, speed=20, kubeconfig=kubeconfig, crd_dir=write_crd_dir(tmp_path)) as sb:
        assert sb.kubeconfig == kubeconfig and kubeconfig.exists()
        assert sb.crds == ["widgets.example.io"]
        client = Client(sb.kubeconfig)
        try:
            crd = await client.get(f"{CRD_PATH}/widgets.example.io")
            assert any(
                c["type"] == "Established" and c["status"] == "True" for c in crd["status"]["conditions"]
            )
            widget = {"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w"}}
            await client.create("/apis/example.io/v1/namespaces/default/widgets", widget)
            nodes = (await client.list("/api/v1/nodes"))["items"]
        finally:
            await client.close()
        assert len(nodes) == 2
        for node in nodes:
            assert any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])
    assert sb.server is None and sb.simulator is None


async def test_reapplying_crds_replaces_them(tmp_path):
    crd_dir = write_crd_dir(tmp_path)
    async with Sandbox(nodes=0, crd_dir=crd_dir) as sb:
        assert await apply_crds(sb.kubeconfig, load_crds(crd_dir), timeout=10) == ["widgets.example.io"]


async def test_sandbox_schedules_onto_a_node_it_does_not_run(tmp_path):
    """The sandbox's scheduler is its cluster's only one, so a Node added by hand (upstream e2e's fake
    node: no kubelet) gets its pod bound, as kube-scheduler would; with no kubelet the pod stays Pending."""
    async with Sandbox(nodes=1, speed=20, crd_dir=write_crd_dir(tmp_path)) as sb:
        client = Client(sb.kubeconfig)
        try:
            resources = {"cpu": "4", "memory": "8Gi", "pods": "16"}
            labels = {"kubernetes.io/hostname": "fake-node-x"}
            node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "fake-node-x", "labels": labels}}
            await client.create("/api/v1/nodes", node)
            await client.patch(
                "/api/v1/nodes/fake-node-x/status",
                {"status": {"capacity": resources, "allocatable": resources}},
            )
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {
                    "nodeSelector": {"kubernetes.io/hostname": "fake-node-x"},
                    "containers": [{"name": "c", "image": "busybox"}],
                },
            }
            await client.create("/api/v1/namespaces/default/pods", pod)

            async def bound() -> dict | None:
                got = await client.get("/api/v1/namespaces/default/pods/p")
                return got if got["spec"].get("nodeName") else None

            got = await until(bound, timeout=10, message="pod bound to fake-node-x")
            assert got["spec"]["nodeName"] == "fake-node-x"
            assert (got.get("status") or {}).get("phase", "Pending") == "Pending"
        finally:
            await client.close()
