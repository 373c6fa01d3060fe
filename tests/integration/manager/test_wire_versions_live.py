"""kruise-manager on API set 1.9 talks Advanced DaemonSet and BroadcastJob at their storage version
(v1beta1) and converts in-process (`kruise.kube.wire`): while it reconciles them kube-apiserver never
calls kruise-webhook's /convert for them. The emulator's conversion webhook caller is wrapped to count
every ConversionReview it sends, by kind (`tests.kit.conversions`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from kruise.kube.client import Client
from kruise.kube.errors import InternalError
from kruise.kube.resources import ADVANCED_DAEMONSETS, BROADCASTJOBS, PODS
from kruise.manager.controllers import broadcastjob, daemonset
from tests.integration.manager.conftest import REPO
from tests.kit.conversions import CountingCaller, counting_conversions

NS = "default"


@pytest.fixture
def crd_dir():
    return REPO / "crds"  # API set 1.9: the seven kinds stored at v1beta1, conversion by kruise-webhook


@pytest.fixture
def controller_setups():
    return [daemonset.SETUP, broadcastjob.SETUP]


@pytest.fixture
def conversions(emulator) -> Iterator[CountingCaller]:
    """Asked for before `kruise_cluster`, so it counts from before the manager's first list."""
    with counting_conversions(emulator) as counting:
        yield counting


def daemon_set(image: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "wire-ds", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "wire-ds"}},
            "template": {
                "metadata": {"labels": {"app": "wire-ds"}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 3}},
        },
    }


BROADCAST_JOB = {
    "apiVersion": "apps.kruise.io/v1alpha1",
    "kind": "BroadcastJob",
    "metadata": {"name": "wire-bcj", "namespace": NS},
    "spec": {
        "template": {"spec": {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"}},
        "completionPolicy": {"type": "Always"},
    },
}


def ds_settled(image: str):
    def done(ds: dict[str, Any]) -> bool:
        status = ds.get("status") or {}
        return (
            status.get("observedGeneration") == ds["metadata"]["generation"]
            and status.get("updatedNumberScheduled") == 3
            and status.get("numberReady") == 3
            and ds["spec"]["template"]["spec"]["containers"][0]["image"] == image
        )

    return done


async def test_manager_reconciles_daemonset_and_broadcastjob_without_convert(
    conversions, kruise_cluster, webhook, emulator
):
    client = kruise_cluster.client
    assert client.wire.wire_ref(ADVANCED_DAEMONSETS) is not None
    assert client.wire.wire_ref(BROADCASTJOBS) is not None

    await client.create(ADVANCED_DAEMONSETS, daemon_set("nginx:1.25"))
    await client.create(BROADCASTJOBS, BROADCAST_JOB)

    def get_ds():
        return client.get(ADVANCED_DAEMONSETS, "wire-ds", NS)

    ds = await kruise_cluster.until(get_ds, ds_settled("nginx:1.25"))
    assert ds["apiVersion"] == "apps.kruise.io/v1alpha1" and ds["status"]["daemonSetHash"]

    updated = copy.deepcopy(ds)
    updated["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(ADVANCED_DAEMONSETS, updated)
    ds = await kruise_cluster.until(get_ds, ds_settled("nginx:1.26"))
    pods = (await client.list(PODS, NS, label_selector={"app": "wire-ds"}))["items"]
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]
    assert {p["spec"]["containers"][0]["image"] for p in live} == {"nginx:1.26"}

    job = await kruise_cluster.until(
        lambda: client.get(BROADCASTJOBS, "wire-bcj", NS),
        lambda j: (j.get("status") or {}).get("phase") == "completed",
    )
    assert (job["status"]["desired"], job["status"]["succeeded"]) == (3, 3)

    assert conversions.of("DaemonSet") == []
    assert conversions.of("BroadcastJob") == []

    # The count is live: a client that talks v1alpha1 on the wire does go through /convert.
    plain = await Client.from_kubeconfig(emulator.kubeconfig)
    try:

        async def read_alpha() -> dict[str, Any] | None:
            try:
                return await plain.get(ADVANCED_DAEMONSETS, "wire-ds", NS)
            except InternalError:  # kruise-webhook has not written its CA into the CRD yet
                return None

        alpha = await kruise_cluster.until(read_alpha, lambda obj: obj is not None)
    finally:
        await plain.close()
    assert alpha["status"]["daemonSetHash"] == ds["status"]["daemonSetHash"]
    assert ("DaemonSet", "apps.kruise.io/v1alpha1") in conversions.of("DaemonSet")
