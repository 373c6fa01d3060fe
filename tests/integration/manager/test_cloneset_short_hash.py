"""CloneSet with the CloneSetShortHash gate: pods carry the bare hash in `controller-revision-hash`.

Upstream `WriteRevisionHash`: the label is `<hash>` instead of `<cloneset>-<hash>`, `pod-template-hash` is
`<hash>` either way, and a pod is on a revision when the labels' last `-` parts match — so pods written
before the gate was switched on (long label) still count as updated.
"""

from __future__ import annotations

import copy

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.resources import CLONESETS, PODS
from kruise.manager.controllers.cloneset import SETUP
from tests.integration.manager.test_cloneset_controller import NS, manifest, pods_of, settled, update_spec


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def feature_gates():
    return FeatureGates({"CloneSetShortHash": True}, env={})


def short(revision: str) -> str:
    return revision.rsplit("-", 1)[1]


def new_image(spec):
    spec["template"]["spec"]["containers"][0]["image"] = "nginx:mainline"


async def test_pods_get_the_short_label_and_an_in_place_rollout_completes(kruise_cluster):
    body = manifest(replicas=3, updateStrategy={"type": "InPlaceIfPossible"})
    await kruise_cluster.client.create(CLONESETS, body)
    cs = await settled(kruise_cluster, "cs-demo", 3, availableReplicas=3)
    first = cs["status"]["updateRevision"]
    assert first.startswith("cs-demo-")
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await pods_of(kruise_cluster, "cs-demo")}
    for pod in await pods_of(kruise_cluster, "cs-demo"):
        labels = pod["metadata"]["labels"]
        assert labels["controller-revision-hash"] == short(first)
        assert labels["pod-template-hash"] == short(first)

    await update_spec(kruise_cluster, "cs-demo", new_image)
    cs = await settled(kruise_cluster, "cs-demo", 3, updatedReadyReplicas=3)
    second = cs["status"]["updateRevision"]
    assert second != first and cs["status"]["currentRevision"] == second
    after = await pods_of(kruise_cluster, "cs-demo")
    assert {p["metadata"]["name"]: p["metadata"]["uid"] for p in after} == before
    for pod in after:
        labels = pod["metadata"]["labels"]
        assert labels["controller-revision-hash"] == short(second)
        assert labels["pod-template-hash"] == short(second)
        assert pod["spec"]["containers"][0]["image"] == "nginx:mainline"


async def test_recreate_rollout_creates_pods_with_the_short_label(kruise_cluster):
    await kruise_cluster.client.create(CLONESETS, manifest(replicas=2))
    await settled(kruise_cluster, "cs-demo", 2)
    await update_spec(kruise_cluster, "cs-demo", new_image)
    cs = await settled(kruise_cluster, "cs-demo", 2, updatedReadyReplicas=2)
    pods = await kruise_cluster.until(lambda: pods_of(kruise_cluster, "cs-demo"), lambda pods: len(pods) == 2)
    revision = cs["status"]["updateRevision"]
    assert {p["metadata"]["labels"]["controller-revision-hash"] for p in pods} == {short(revision)}


async def test_a_pod_with_the_long_label_still_counts_as_updated(kruise_cluster):
    await kruise_cluster.client.create(CLONESETS, manifest(replicas=2))
    cs = await settled(kruise_cluster, "cs-demo", 2)
    revision = cs["status"]["updateRevision"]
    pod = sorted(await pods_of(kruise_cluster, "cs-demo"), key=lambda p: p["metadata"]["name"])[0]
    relabelled = copy.deepcopy(pod)
    relabelled["metadata"]["labels"]["controller-revision-hash"] = revision  # as written with the gate off
    await kruise_cluster.client.update(PODS, relabelled)

    await update_spec(kruise_cluster, "cs-demo", lambda spec: spec.update(replicas=3))
    await settled(kruise_cluster, "cs-demo", 3, updatedReplicas=3)
    kept = await kruise_cluster.client.get(PODS, pod["metadata"]["name"], NS)
    assert kept["metadata"]["uid"] == pod["metadata"]["uid"]
    assert kept["metadata"]["labels"]["controller-revision-hash"] == revision
