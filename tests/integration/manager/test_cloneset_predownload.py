"""Image pre-download (gate PreDownloadImageForInPlaceUpdate): one ImagePullJob per changed
container for a multi-batch in-place rollout, recorded on the revision, removed once converged."""

from __future__ import annotations

import copy

import pytest

from kruise.api import cloneset as cloneset_api
from kruise.api.features import FeatureGates
from kruise.kube.resources import CLONESETS, CONTROLLER_REVISIONS, EVENTS, IMAGEPULLJOBS
from kruise.manager.controllers.cloneset import SETUP

NS = "default"


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def feature_gates():
    return FeatureGates({"PreDownloadImageForInPlaceUpdate": True}, env={})


def manifest():
    body = {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {
            "name": "pre",
            "namespace": NS,
            "annotations": {"apps.kruise.io/image-predownload-parallelism": "2"},
        },
        "spec": {
            "replicas": 5,
            "selector": {"matchLabels": {"app": "pre"}},
            "updateStrategy": {"type": "InPlaceIfPossible", "partition": 3},
            "template": {
                "metadata": {"labels": {"app": "pre"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]},
            },
        },
    }
    model = cloneset_api.CloneSet.model_validate(body)
    cloneset_api.set_defaults(model)
    return model.model_dump(by_alias=True, exclude_none=True)


async def test_image_pull_job_is_created_for_a_partitioned_in_place_rollout(kruise_cluster):
    client = kruise_cluster.client

    async def cs():
        return await client.get(CLONESETS, "pre", NS)

    await client.create(CLONESETS, manifest())
    await kruise_cluster.until(cs, lambda c: (c.get("status") or {}).get("readyReplicas") == 5)
    body = copy.deepcopy(await cs())
    body["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.26"
    await client.update(CLONESETS, body)
    status = (
        await kruise_cluster.until(cs, lambda c: (c.get("status") or {}).get("updatedReadyReplicas") == 2)
    )["status"]
    revision = status["updateRevision"]

    async def jobs():
        return (await client.list(IMAGEPULLJOBS, NS))["items"]

    (job,) = await kruise_cluster.until(jobs, lambda items: len(items) == 1)
    assert job["metadata"]["name"] == f"{revision}-main"
    assert job["spec"]["image"] == "nginx:1.26"
    assert job["spec"]["parallelism"] == 2
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CloneSet"
    selector = job["spec"]["podSelector"]["matchExpressions"][-1]
    assert selector["key"] == "controller-revision-hash" and selector["operator"] == "NotIn"
    # the controller labels the revision and its recorder writes the event after the job's create
    # returns: wait for both
    stored = await kruise_cluster.until(
        lambda: client.get(CONTROLLER_REVISIONS, revision, NS),
        lambda r: "apps.kruise.io/pre-predownload-created" in (r["metadata"].get("labels") or {}),
    )
    assert stored["metadata"]["labels"]["apps.kruise.io/pre-predownload-created"] == "true"
    await kruise_cluster.until(
        lambda: client.list(EVENTS, NS),
        lambda listing: any(e["reason"] == "CreatedImagePullJob" for e in listing["items"]),
    )

    # Converged: the jobs go.
    body = copy.deepcopy(await cs())
    body["spec"]["updateStrategy"]["partition"] = 0
    await client.update(CLONESETS, body)
    await kruise_cluster.until(jobs, lambda items: not items)
