"""ImagePullJob controller: tags spread over NodeImages within parallelism, status from the NodeImages
(the daemon's status writes are played by patches here; tests/integration/daemon covers the daemon)."""

from __future__ import annotations

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import IMAGEPULLJOBS, NODEIMAGES
from kruise.manager.controllers import imagepulljob, nodeimage

NS = "default"


@pytest.fixture
def controller_setups():
    return [nodeimage.SETUP, imagepulljob.SETUP]


@pytest.fixture
def feature_gates():
    return FeatureGates({"ImagePullJobGate": True}, env={})


def job(name="warm", **spec):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImagePullJob",
        "metadata": {"name": name, "namespace": NS, "finalizers": ["apps.kruise.io/deletion-protection"]},
        "spec": {
            "image": "nginx:1.26",
            "parallelism": 2,
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 3},
            "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 60},
            **spec,
        },
    }


async def report(cluster, node, phase):
    """What kruise-daemon writes once it pulled (or failed) the tag."""
    image = await cluster.client.get(NODEIMAGES, node)
    version = image["spec"]["images"]["nginx"]["tags"][0]["version"]
    status = {"imageStatuses": {"nginx": {"tags": [{"tag": "1.26", "phase": phase, "version": version}]}}}
    await cluster.client.patch(NODEIMAGES, node, {"status": status}, subresource="status")


async def test_job_spreads_within_parallelism_and_completes(kruise_cluster):
    client = kruise_cluster.client

    async def images():
        return {n["metadata"]["name"]: n for n in (await client.list(NODEIMAGES))["items"]}

    await kruise_cluster.until(images, lambda n: len(n) == 3)
    await client.create(IMAGEPULLJOBS, job())

    def tagged(nodes):
        return sorted(
            name for name, n in nodes.items() if "nginx" in ((n.get("spec") or {}).get("images") or {})
        )

    first = await kruise_cluster.until(images, lambda n: len(tagged(n)) == 2)
    names = tagged(first)
    tag = first[names[0]]["spec"]["images"]["nginx"]["tags"][0]
    assert tag["tag"] == "1.26" and tag["ownerReferences"][0]["name"] == "warm"
    assert tag["pullPolicy"]["ttlSecondsAfterFinished"] == 3 + 300 and tag["pullPolicy"]["backoffLimit"] == 1

    await report(kruise_cluster, names[0], "Succeeded")
    everything = await kruise_cluster.until(images, lambda n: len(tagged(n)) == 3)
    third = next(n for n in tagged(everything) if n not in names)
    await report(kruise_cluster, names[1], "Failed")
    await report(kruise_cluster, third, "Succeeded")

    async def status():
        return (await client.get(IMAGEPULLJOBS, "warm", NS)).get("status") or {}

    done = await kruise_cluster.until(status, lambda s: s.get("completionTime"))
    assert (done["desired"], done["succeeded"], done["failed"]) == (3, 2, 1)
    assert done["failedNodes"] == [names[1]] and done["message"] == "job has completed"

    async def jobs():
        return (await client.list(IMAGEPULLJOBS, NS))["items"]

    # completionTime has second precision, so the TTL may run out up to a second early
    assert await kruise_cluster.until(jobs, lambda items: not items) == []  # finalizer dropped, TTL deleted


async def test_node_selector_by_names_and_deletion_releases_the_finalizer(kruise_cluster):
    client = kruise_cluster.client
    await kruise_cluster.until(lambda: client.list(NODEIMAGES), lambda li: len(li["items"]) == 3)
    await client.create(IMAGEPULLJOBS, job("only-one", selector={"names": ["node-2"]}, parallelism=5))

    async def status():
        return (await client.get(IMAGEPULLJOBS, "only-one", NS)).get("status") or {}

    running = await kruise_cluster.until(status, lambda s: s.get("active") == 1)
    assert running["desired"] == 1 and running["message"] == "job is running, no progress"
    await client.delete(IMAGEPULLJOBS, "only-one", NS)

    async def jobs():
        return (await client.list(IMAGEPULLJOBS, NS))["items"]

    assert await kruise_cluster.until(jobs, lambda items: not items) == []
