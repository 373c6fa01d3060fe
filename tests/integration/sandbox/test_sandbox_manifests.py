"""`Sandbox(manifests=...)` (`kruise sandbox up --apply`): applied with kubectl after the cluster is up
and before any component starts, CRDs established before a later path uses their kind."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kruise.sandbox.cluster import Sandbox
from kruise.sandbox.simulator.client import Client

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
SETUP = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kruise-system"}},
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kruise-configuration", "namespace": "kruise-system"},
        "data": {"key": "value"},
    },
]
WIDGET = {"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}


class SeesAtStart:
    """A component that reads, when it starts, what kruise-py would read at its start."""

    name = "sees-at-start"

    def __init__(self) -> None:
        self.seen: dict[str, object] = {}

    async def start(self, sandbox: Sandbox) -> None:
        client = Client(sandbox.kubeconfig)
        try:
            config = await client.get("/api/v1/namespaces/kruise-system/configmaps/kruise-configuration")
            widget = await client.get("/apis/example.io/v1/namespaces/default/widgets/w")
        finally:
            await client.close()
        self.seen = {"data": config["data"], "widget": widget["metadata"]["name"]}

    async def stop(self) -> None:
        """Nothing runs."""


def write_manifests(root: Path) -> tuple[Path, Path]:
    setup = root / "setup"
    setup.mkdir()
    (setup / "00-config.yaml").write_text(yaml.safe_dump_all(SETUP))
    (setup / "10-widgets.yaml").write_text(yaml.safe_dump(WIDGET_CRD))
    widget = root / "widget.yaml"
    widget.write_text(yaml.safe_dump(WIDGET))
    return setup, widget


async def test_manifests_are_in_place_before_components_start(tmp_path):
    setup, widget = write_manifests(tmp_path)
    component = SeesAtStart()
    async with Sandbox(nodes=0, crd_dir=None, manifests=[setup, widget], components=[component]) as sb:
        assert component.seen == {"data": {"key": "value"}, "widget": "w"}
        assert sb.applied == [
            "namespace/kruise-system",
            "configmap/kruise-configuration",
            "customresourcedefinition.apiextensions.k8s.io/widgets.example.io",
            "widget.example.io/w",
        ]


async def test_a_manifest_kubectl_refuses_stops_the_start_naming_its_path(tmp_path):
    bad = tmp_path / "bad.yaml"
    gadget = {"apiVersion": "example.io/v1", "kind": "Gadget", "metadata": {"name": "g"}}
    bad.write_text(yaml.safe_dump(gadget))
    component = SeesAtStart()
    sandbox = Sandbox(nodes=0, crd_dir=None, manifests=[bad], components=[component])
    with pytest.raises(RuntimeError, match=rf"manifests: {bad}: kubectl apply .*Gadget"):
        await sandbox.start()
    assert component.seen == {} and sandbox.server is None


def test_a_missing_manifest_path_is_refused_before_anything_starts(tmp_path):
    with pytest.raises(ValueError, match=rf"manifests: {tmp_path / 'nope.yaml'}: no such file or directory"):
        Sandbox(nodes=0, manifests=[tmp_path / "nope.yaml"])
