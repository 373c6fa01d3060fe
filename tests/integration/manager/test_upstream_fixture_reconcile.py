"""kruise-manager takes over an Advanced DaemonSet that upstream OpenKruise 1.9 stored (at v1beta1, with
upstream's defaults, annotations and status; tests/fixtures/upstream-1.9/daemonset.json): it reconciles
it on API set 1.9 without an error and keeps every field of the stored spec and metadata.
"""

from __future__ import annotations

import contextlib
import copy
import json

import pytest

from kruise.kube.errors import AlreadyExists
from kruise.kube.resources import ADVANCED_DAEMONSETS, NAMESPACES, PODS
from kruise.manager.controllers import daemonset
from tests.integration.manager.conftest import REPO

FIXTURE = json.loads((REPO / "tests" / "fixtures" / "upstream-1.9" / "daemonset.json").read_text())
RES = ("apps.kruise.io", "daemonsets")


@pytest.fixture
def crd_dir():
    return REPO / "crds"  # API set 1.9: Advanced DaemonSet stored at v1beta1, as upstream 1.9 stores it


@pytest.fixture
def controller_setups():
    return [daemonset.SETUP]


async def test_manager_reconciles_an_upstream_stored_daemonset(kruise_cluster, emulator):
    client = kruise_cluster.client
    meta = FIXTURE["metadata"]
    with contextlib.suppress(AlreadyExists):
        await client.create(
            NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": meta["namespace"]}}
        )
    emulator.server.store.put(RES, copy.deepcopy(FIXTURE), "ADDED")

    def settled(ds):
        status = ds.get("status") or {}
        return (
            status.get("observedGeneration") == meta["generation"]
            and status.get("desiredNumberScheduled") == 3
            and status.get("numberReady") == 3
            and status.get("daemonSetHash") != FIXTURE["status"]["updateRevision"]
        )

    await kruise_cluster.until(
        lambda: client.get(ADVANCED_DAEMONSETS, meta["name"], meta["namespace"]), settled
    )
    pods = (await client.list(PODS, meta["namespace"], label_selector={"app": "node-agent"}))["items"]
    assert len({pod["spec"]["nodeName"] for pod in pods}) == 3

    stored = emulator.server.store.get(RES, meta["namespace"], meta["name"])
    assert stored["apiVersion"] == FIXTURE["apiVersion"]
    assert stored["spec"] == FIXTURE["spec"]
    assert stored["metadata"]["annotations"] == meta["annotations"]
    assert stored["metadata"]["labels"] == meta["labels"]
