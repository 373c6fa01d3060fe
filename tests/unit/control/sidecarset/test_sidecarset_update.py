"""SidecarSet in-place upgrade planning: updated/upgradable/consistent, budget and partition."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from kruise.control.sidecarset import update
from kruise.control.sidecarset.metadata import PatchMetadataError
from tests.kit.pods import pod

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def sidecarset(hash_="h2", without="w1", **strategy):
    annotations = {"kruise.io/sidecarset-hash": hash_, "kruise.io/sidecarset-hash-without-image": without}
    return {
        "metadata": {"name": "s", "generation": 3, "annotations": annotations},
        "spec": {"containers": [{"name": "side", "image": "busybox:2"}], "updateStrategy": strategy},
    }


def sidecar_pod(
    name,
    hash_="h1",
    without="w1",
    ready=True,
    side_image="busybox:1",
    status_image=None,
    image_id="id-1",
    state=None,
):
    """A running pod injected by SidecarSet s (hashes `hash_` and `without`), its `side` sidecar
    reported as running `status_image` (default its spec image)."""
    annotations = {
        "kruise.io/sidecarset-hash": json.dumps({"s": {"hash": hash_, "sidecarSetName": "s"}}),
        "kruise.io/sidecarset-hash-without-image": json.dumps(
            {"s": {"hash": without, "sidecarSetName": "s"}}
        ),
    }
    if state is not None:
        annotations["kruise.io/sidecarset-inplace-update-state"] = json.dumps({"s": state})
    return pod(
        name,
        namespace=None,
        annotations=annotations,
        labels={},
        containers=[{"name": "side", "image": side_image}, {"name": "app", "image": "nginx"}],
        phase="Running",
        ready=ready,
        status={
            "containerStatuses": [
                {"name": "side", "image": status_image or side_image, "imageID": image_id},
                {"name": "app", "image": "nginx", "imageID": "x"},
            ]
        },
    )


def test_updated_and_upgradable():
    s = sidecarset()
    assert not update.is_updated(sidecar_pod("a"), s) and update.is_upgradable(sidecar_pod("a"), s)
    assert update.is_updated(sidecar_pod("a", hash_="h2"), s)
    assert not update.is_upgradable(sidecar_pod("a", without="w0"), s)


def test_budget_of_one_and_partition():
    s = sidecarset(maxUnavailable=1)
    pods = [sidecar_pod("a"), sidecar_pod("b"), sidecar_pod("c")]
    assert [p["metadata"]["name"] for p in update.pods_to_update(s, pods)] == ["a"]
    held = sidecarset(partition=2, maxUnavailable=3)
    assert len(update.pods_to_update(held, pods)) == 1
    assert update.pods_to_update(sidecarset(type="NotUpdate"), pods) == []
    assert update.pods_to_update(sidecarset(paused=True), pods) == []
    # an updated pod not ready yet uses up the budget
    busy = [sidecar_pod("a", hash_="h2", ready=False), sidecar_pod("b"), sidecar_pod("c")]
    assert update.pods_to_update(s, busy) == []
    # unready candidates take no budget
    unready = [sidecar_pod("a", hash_="h2", ready=False), sidecar_pod("b", ready=False)]
    assert [p["metadata"]["name"] for p in update.pods_to_update(s, unready)] == ["b"]


def test_updated_pod_and_consistency():
    s = sidecarset()
    new = update.updated_pod(sidecar_pod("a"), s, NOW)
    assert new["spec"]["containers"][0]["image"] == "busybox:2"
    assert new["spec"]["containers"][1]["image"] == "nginx"
    assert json.loads(new["metadata"]["annotations"]["kruise.io/sidecarset-hash"])["s"]["hash"] == "h2"
    state = json.loads(new["metadata"]["annotations"]["kruise.io/sidecarset-inplace-update-state"])["s"]
    assert state["lastContainerStatuses"] == {"side": {"imageID": "id-1"}} and state["revision"] == "h2"
    # kubelet has not restarted it yet: same imageID, old image in status
    assert not update.sidecars_consistent(new, s)
    restarted = json.loads(json.dumps(new))
    restarted["status"]["containerStatuses"][0].update(image="busybox:2", imageID="id-2")
    assert update.sidecars_consistent(restarted, s) and update.is_pod_ready(restarted, s)
    status = update.compute_status(s, [restarted, sidecar_pod("b")])
    assert status == {
        "observedGeneration": 3,
        "matchedPods": 2,
        "updatedPods": 1,
        "readyPods": 2,
        "updatedReadyPods": 1,
    }


def test_updated_pod_renews_the_hash_record_with_the_latest_revision():
    """Upstream e2e "sidecarSet InjectionStrategy.Revision checker": a pod injected from an older revision
    records, once upgraded in place, the revision the SidecarSet's status names as latest."""
    s = sidecarset()
    s["status"] = {"latestRevision": "s-new"}
    s["spec"]["initContainers"] = [
        {"name": "init", "image": "busybox"},
        {"name": "native", "image": "busybox", "restartPolicy": "Always"},
    ]
    old = sidecar_pod("a")
    records = {
        "other": {"hash": "o1", "sidecarSetName": "other"},
        "s": {"updateTimestamp": "2025-01-01T00:00:00Z", "hash": "h1", "sidecarSetName": "s",
              "sidecarList": ["side"], "controllerRevision": "s-old"},
    }  # fmt: skip
    old["metadata"]["annotations"]["kruise.io/sidecarset-hash"] = json.dumps(records)
    new = update.updated_pod(old, s, NOW)
    raw = new["metadata"]["annotations"]["kruise.io/sidecarset-hash"]
    assert json.loads(raw) == {
        "other": {"hash": "o1", "sidecarSetName": "other"},
        "s": {"updateTimestamp": "2026-01-01T00:00:00Z", "hash": "h2", "sidecarSetName": "s",
              "sidecarList": ["native", "side"], "controllerRevision": "s-new"},
    }  # fmt: skip
    assert raw.index('"other"') < raw.index('"s"')  # Go marshals the map with its keys sorted
    # the without-image record is left alone (it already agrees, or there would be no in-place update)
    assert (
        new["metadata"]["annotations"]["kruise.io/sidecarset-hash-without-image"]
        == old["metadata"]["annotations"]["kruise.io/sidecarset-hash-without-image"]
    )


def test_updated_pod_without_a_latest_revision_records_none():
    new = update.updated_pod(sidecar_pod("a"), sidecarset(), NOW)
    assert (
        "controllerRevision"
        not in json.loads(new["metadata"]["annotations"]["kruise.io/sidecarset-hash"])["s"]
    )


def test_updated_pod_reapplies_patch_pod_metadata():
    """Upstream e2e "sidecarSet patch pod metadata": the annotation follows the SidecarSet's new value on
    the in-place upgrade, each policy as at injection."""
    s = sidecarset()
    s["spec"]["patchPodMetadata"] = [
        {"patchPolicy": "MergePatchJson", "annotations": {"merged": '{"side":2}'}},
        {"patchPolicy": "Overwrite", "annotations": {"overwritten": "new"}},
        {"patchPolicy": "Retain", "annotations": {"retained": "new", "added": "yes"}},
    ]
    old = sidecar_pod("a")
    old["metadata"]["annotations"].update(merged='{"app":0,"side":1}', overwritten="old", retained="old")
    annotations = update.updated_pod(old, s, NOW)["metadata"]["annotations"]
    assert annotations["merged"] == '{"app":0,"side":2}'
    assert annotations["overwritten"] == "new"
    assert annotations["retained"] == "old" and annotations["added"] == "yes"


def test_updated_pod_refuses_a_merge_into_an_annotation_that_is_not_json():
    s = sidecarset()
    s["spec"]["patchPodMetadata"] = [
        {"patchPolicy": "MergePatchJson", "annotations": {"merged": '{"side":2}'}}
    ]
    old = sidecar_pod("a")
    old["metadata"]["annotations"]["merged"] = "plain text"
    with pytest.raises(PatchMetadataError, match="pod annotation merged is not a JSON document"):
        update.updated_pod(old, s, NOW)
