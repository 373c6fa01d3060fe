"""Advanced DaemonSet image pre-download (gates KruiseDaemon + PreDownloadImageForDaemonSetUpdate):
a rollout held by a partition creates one ImagePullJob per changed container and labels the
revision; a rollout done in one batch (the first one) is only labelled ignored; the jobs go once the
rollout completes; with the gate off nothing is created."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api import daemonset as daemonset_api
from kruise.api.features import FeatureGates
from kruise.kube.resources import ADVANCED_DAEMONSETS, CONTROLLER_REVISIONS, EVENTS, IMAGEPULLJOBS
from kruise.manager.controllers.daemonset import SETUP

NS = "default"
NAME = "agent"
CREATED = "apps.kruise.io/pre-predownload-created"
IGNORED = "apps.kruise.io/image-predownload-ignored"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def feature_gates(request):
    return FeatureGates({"PreDownloadImageForDaemonSetUpdate": getattr(request, "param", True)}, env={})


def manifest() -> dict[str, Any]:
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "annotations": {"apps.kruise.io/image-predownload-parallelism": "3"},
        },
        "spec": {
            "selector": {"matchLabels": {"app": NAME}},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"rollingUpdateType": "InPlaceIfPossible"},
            },
            "template": {
                "metadata": {"labels": {"app": NAME}},
                "spec": {
                    "containers": [
                        {"name": "main", "image": "nginx:1.25"},
                        {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "999d"]},
                    ]
                },
            },
        },
    }
    model = daemonset_api.DaemonSet.model_validate(body)
    daemonset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def get_ds(cluster) -> dict[str, Any]:
    return await cluster.client.get(ADVANCED_DAEMONSETS, NAME, NS)


async def jobs_of(cluster) -> list[dict[str, Any]]:
    return (await cluster.client.list(IMAGEPULLJOBS, NS))["items"]


def rolled(updated: int):
    def done(ds: dict[str, Any]) -> bool:
        status = ds.get("status") or {}
        return (
            status.get("observedGeneration") == ds["metadata"]["generation"]
            and status.get("desiredNumberScheduled") == 3
            and status.get("updatedNumberScheduled") == updated
            and status.get("numberReady") == 3
        )

    return done


async def roll_with_partition(cluster) -> tuple[dict[str, Any], str, str]:
    """Create, settle, then change the main image with partition 1 (two of three nodes update).
    Returns the DaemonSet, the first revision's name and the new revision's name."""
    client = cluster.client
    await client.create(ADVANCED_DAEMONSETS, manifest())
    ds = await cluster.until(lambda: get_ds(cluster), rolled(3), timeout=60)
    first = f"{NAME}-{ds['status']['daemonSetHash']}"
    body = copy.deepcopy(ds)
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    body["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 1
    await client.update(ADVANCED_DAEMONSETS, body)
    ds = await cluster.until(
        lambda: get_ds(cluster),
        lambda d: rolled(2)(d) and f"{NAME}-{d['status']['daemonSetHash']}" != first,
        timeout=60,
    )
    return ds, first, f"{NAME}-{ds['status']['daemonSetHash']}"


async def test_partitioned_rollout_creates_the_image_pull_job(kruise_cluster):
    client = kruise_cluster.client
    ds, first, revision = await roll_with_partition(kruise_cluster)

    # The first rollout put every pod in one batch: only labelled ignored.
    first_labels = (await client.get(CONTROLLER_REVISIONS, first, NS))["metadata"]["labels"]
    assert first_labels[IGNORED] == "true" and CREATED not in first_labels

    (job,) = await kruise_cluster.until(lambda: jobs_of(kruise_cluster), lambda items: len(items) == 1)
    stored = await client.get(CONTROLLER_REVISIONS, revision, NS)
    assert stored["metadata"]["labels"][CREATED] == "true"
    assert job["metadata"]["name"] == f"{revision}-main"
    # DaemonSet revisions carry no controller.kubernetes.io/hash label; upstream copies the empty value.
    assert job["metadata"]["labels"] == {"app": NAME, "controller.kubernetes.io/hash": ""}
    (owner,) = job["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "DaemonSet",
        NAME,
        ds["metadata"]["uid"],
        True,
    )
    spec = job["spec"]
    assert spec["image"] == "nginx:1.26"
    assert spec["parallelism"] == 3
    assert spec["pullPolicy"] == {"backoffLimit": 1, "timeoutSeconds": 300}
    assert spec["podSelector"] == {
        "matchLabels": {"app": NAME},
        "matchExpressions": [
            {"key": "controller-revision-hash", "operator": "NotIn", "values": [revision, ""]}
        ],
    }
    events = (await client.list(EVENTS, NS))["items"]
    assert any(
        e["reason"] == "CreatedImagePullJob"
        and e["message"] == f"created ImagePullJob {revision}-main for image: nginx:1.26"
        for e in events
    )

    # Rollout done: the DaemonSet's jobs are deleted.
    body = copy.deepcopy(await get_ds(kruise_cluster))
    body["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 0
    await client.update(ADVANCED_DAEMONSETS, body)
    await kruise_cluster.until(lambda: jobs_of(kruise_cluster), lambda items: not items, timeout=60)


@pytest.mark.parametrize("feature_gates", [False], indirect=True)
async def test_nothing_when_the_gate_is_off(kruise_cluster):
    _, first, revision = await roll_with_partition(kruise_cluster)
    assert await jobs_of(kruise_cluster) == []
    for name in (first, revision):
        labels = (await kruise_cluster.client.get(CONTROLLER_REVISIONS, name, NS))["metadata"]["labels"]
        assert CREATED not in labels and IGNORED not in labels
