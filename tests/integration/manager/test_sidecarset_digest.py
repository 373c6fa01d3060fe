"""Regression: a sidecar pinned by digest to the image it already runs settles (upstream's digest rule).

Pinning `busybox:1.35` to `docker.io/library/busybox@sha256:<its digest>` changes the pod spec but not
the image: the kubelet restarts the container on the same imageID and keeps reporting the tag as its
image. The imageID test alone ("the imageID recorded before the write must change, unless the status
image equals the spec one") would then never see the update finish, leaving the pod outdated-unready
for the SidecarSet and holding the rollout forever. Upstream's `IsPodStateConsistent` judges sidecars
that are all pinned by digest by the reported imageID instead, so the pod counts updated and ready.
"""

from __future__ import annotations

import copy

import pytest

from kruise.control.sidecarset.hashing import set_hash_annotations
from kruise.kube.resources import PODS, SIDECARSETS
from kruise.manager.controllers.sidecarset import SETUP
from tests.integration.manager.test_sidecarset_controller import NS, injected_pod, sidecarset, statuses


@pytest.fixture
def controller_setups():
    return [SETUP]


async def test_pinning_the_running_image_by_digest_completes(kruise_cluster):
    client = kruise_cluster.client
    body = sidecarset()
    body["spec"]["containers"][0]["image"] = "busybox:1.35"
    set_hash_annotations(body)
    created = await client.create(SIDECARSETS, body)
    await client.create(PODS, injected_pod("pinned", created))

    async def status():
        return (await client.get(SIDECARSETS, "test-sidecarset")).get("status") or {}

    await kruise_cluster.until(status, lambda s: s.get("matchedPods") == 1 and s.get("updatedReadyPods") == 1)
    running = statuses(await client.get(PODS, "pinned", NS))["sidecar1"]
    image_id = running["imageID"]  # containerd's form: docker.io/library/busybox@sha256:…
    assert image_id.startswith("docker.io/library/busybox@sha256:")

    changed = copy.deepcopy(await client.get(SIDECARSETS, "test-sidecarset"))
    changed["spec"]["containers"][0]["image"] = image_id
    set_hash_annotations(changed)
    generation = (await client.update(SIDECARSETS, changed))["metadata"]["generation"]

    final = await kruise_cluster.until(
        status,
        lambda s: (
            s.get("observedGeneration") == generation
            and s.get("updatedPods") == 1
            and s.get("updatedReadyPods") == 1
            and s.get("readyPods") == 1
        ),
    )
    assert final["matchedPods"] == 1
    now = await client.get(PODS, "pinned", NS)
    sidecar = next(c for c in now["spec"]["containers"] if c["name"] == "sidecar1")
    assert sidecar["image"] == image_id
    after = statuses(now)["sidecar1"]
    # restarted for the new spec, on the very same image: only the digest rule can call this done
    assert after["restartCount"] == 1 and after["imageID"] == image_id
    assert after["image"] != image_id
