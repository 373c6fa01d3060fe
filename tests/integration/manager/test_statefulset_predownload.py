"""Advanced StatefulSet image pre-download (gates KruiseDaemon + PreDownloadImageForInPlaceUpdate):
an in-place rollout in several batches creates one ImagePullJob per changed container, labels the
update revision, and the jobs go once the revisions converge; with the gate off nothing is created."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api import statefulset as statefulset_api
from kruise.api.features import FeatureGates
from kruise.kube.resources import ADVANCED_STATEFULSETS, CONTROLLER_REVISIONS, EVENTS, IMAGEPULLJOBS
from kruise.manager.controllers.statefulset import SETUP

NS = "default"
CREATED = "apps.kruise.io/pre-predownload-created"
IGNORED = "apps.kruise.io/image-predownload-ignored"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def feature_gates(request):
    return FeatureGates({"PreDownloadImageForInPlaceUpdate": getattr(request, "param", True)}, env={})


def manifest() -> dict[str, Any]:
    body = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "web",
            "namespace": NS,
            "annotations": {
                "apps.kruise.io/image-predownload-parallelism": "2",
                "apps.kruise.io/image-predownload-timeout-seconds": "120",
            },
        },
        "spec": {
            "replicas": 5,
            "serviceName": "web",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "web"}},
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 3},
            },
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": {"team": "a"}},
                "spec": {
                    "readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
                    "imagePullSecrets": [{"name": "registry"}],
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.25"},
                        {"name": "sidecar", "image": "busybox:1.36", "command": ["sleep", "999d"]},
                    ],
                },
            },
        },
    }
    model = statefulset_api.StatefulSet.model_validate(body)
    statefulset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def roll_new_image(cluster) -> tuple[dict[str, Any], str]:
    """Create the set, wait for it, change one image; return the set and its update revision once
    the two pods above the partition run the new revision."""
    client = cluster.client

    async def sts():
        return await client.get(ADVANCED_STATEFULSETS, "web", NS)

    await client.create(ADVANCED_STATEFULSETS, manifest())
    await cluster.until(sts, lambda s: (s.get("status") or {}).get("readyReplicas") == 5)
    body = copy.deepcopy(await sts())
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(ADVANCED_STATEFULSETS, body)
    current = await cluster.until(
        sts,
        lambda s: (
            (s.get("status") or {}).get("updatedReadyReplicas") == 2
            and s["status"].get("updateRevision") != s["status"].get("currentRevision")
        ),
    )
    return current, current["status"]["updateRevision"]


async def jobs_of(cluster) -> list[dict[str, Any]]:
    return (await cluster.client.list(IMAGEPULLJOBS, NS))["items"]


async def test_in_place_rollout_creates_the_image_pull_job(kruise_cluster):
    client = kruise_cluster.client
    sts, revision = await roll_new_image(kruise_cluster)

    (job,) = await kruise_cluster.until(lambda: jobs_of(kruise_cluster), lambda items: len(items) == 1)
    stored = await client.get(CONTROLLER_REVISIONS, revision, NS)
    hash_ = stored["metadata"]["labels"]["controller.kubernetes.io/hash"]
    assert stored["metadata"]["labels"][CREATED] == "true"
    assert job["metadata"]["name"] == f"{revision}-nginx"  # only the changed container
    assert job["metadata"]["labels"] == {"app": "web", "controller.kubernetes.io/hash": hash_}
    (owner,) = job["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "StatefulSet",
        "web",
        sts["metadata"]["uid"],
        True,
    )
    spec = job["spec"]
    assert spec["image"] == "nginx:1.26"
    assert spec["parallelism"] == 2
    assert spec["pullPolicy"] == {"backoffLimit": 1, "timeoutSeconds": 120}
    assert spec["pullSecrets"] == ["registry"]
    assert spec["completionPolicy"] == {"type": "Always", "ttlSecondsAfterFinished": 600}
    assert spec["podSelector"] == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "controller-revision-hash", "operator": "NotIn", "values": [revision, hash_]}
        ],
    }
    assert spec["sandboxConfig"]["annotations"] == {"team": "a"}
    events = (await client.list(EVENTS, NS))["items"]
    assert any(
        e["reason"] == "CreatedImagePullJob"
        and e["message"] == f"created ImagePullJob {revision}-nginx for image: nginx:1.26"
        for e in events
    )

    # Converged: the set's jobs are deleted.
    body = copy.deepcopy(await client.get(ADVANCED_STATEFULSETS, "web", NS))
    body["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 0
    await client.update(ADVANCED_STATEFULSETS, body)
    await kruise_cluster.until(lambda: jobs_of(kruise_cluster), lambda items: not items, timeout=60)


@pytest.mark.parametrize("feature_gates", [False], indirect=True)
async def test_nothing_when_the_gate_is_off(kruise_cluster):
    _, revision = await roll_new_image(kruise_cluster)
    assert await jobs_of(kruise_cluster) == []
    labels = (await kruise_cluster.client.get(CONTROLLER_REVISIONS, revision, NS))["metadata"]["labels"]
    assert CREATED not in labels and IGNORED not in labels
