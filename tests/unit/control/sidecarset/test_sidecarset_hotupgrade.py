"""Hot-upgrade rollout of a SidecarSet into injected pods (pure planning): the idle container of the
`-1`/`-2` pair gets the new image and becomes the working one; once it runs ready, the old one is reset
to the empty image."""

from __future__ import annotations

import copy
import hashlib
import json
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st
from sidecar_builders import app_pod, sidecarset

from kruise.control.sidecarset import hotupgrade, update
from kruise.control.sidecarset.injection import inject

NOW = datetime(2026, 1, 1, tzinfo=UTC)
EMPTY = "openkruise/hotupgrade-sample:empty"
WORKING = "kruise.io/sidecarset-working-hotupgrade-container"
STATE = "kruise.io/sidecarset-inplace-update-state"


def hot_set(image="openkruise/hotupgrade-sample:sidecarv1", resource_version="100"):
    mesh = {
        "name": "sidecar",
        "image": image,
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": EMPTY},
    }
    body = sidecarset("hot", [mesh], metadata={"resourceVersion": resource_version, "generation": 2})
    return body


def image_id(image):
    return f"docker.io/{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def running(p, ready=None):
    """The pod as the kubelet reports it once every container runs the image its spec names."""
    out = copy.deepcopy(p)
    ready = ready or {}
    out["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True" if all(ready.values()) else "False"}],
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": image_id(c["image"]),
                "ready": ready.get(c["name"], True),
            }
            for c in out["spec"]["containers"]
        ],
    }
    return out


def injected(s):
    body = app_pod("p1")
    assert inject(body, [s], now=NOW)
    return running(body)


def images(p):
    return {c["name"]: c["image"] for c in p["spec"]["containers"]}


def annotations(p):
    return p["metadata"]["annotations"]


def test_injected_pod_is_updated_and_ready():
    s = hot_set()
    p = injected(s)
    v1 = s["spec"]["containers"][0]["image"]
    assert images(p) == {"app": "nginx:1.7.9", "sidecar-1": v1, "sidecar-2": EMPTY}
    assert update.is_updated(p, s) and update.is_pod_ready(p, s)
    assert update.pods_to_flip(s, [p]) == []


def test_new_image_goes_into_the_idle_container_which_becomes_working():
    old = hot_set()
    p = injected(old)
    new = hot_set("openkruise/hotupgrade-sample:sidecarv2", resource_version="200")
    assert not update.is_updated(p, new) and update.is_upgradable(p, new)
    assert update.pods_to_update(new, [p]) == [p]

    upgraded = update.updated_pod(p, new, NOW)

    assert images(upgraded) == {
        "app": "nginx:1.7.9",
        "sidecar-1": "openkruise/hotupgrade-sample:sidecarv1",  # the old one keeps serving meanwhile
        "sidecar-2": "openkruise/hotupgrade-sample:sidecarv2",
    }
    a = annotations(upgraded)
    assert json.loads(a[WORKING]) == {"sidecar": "sidecar-2"}
    assert a["version.sidecarset.kruise.io/sidecar-2"] == "200"
    assert a["versionalt.sidecarset.kruise.io/sidecar-2"] == "1"  # the version the old container had
    assert a["versionalt.sidecarset.kruise.io/sidecar-1"] == "200"
    assert json.loads(a[STATE])["hot"]["lastContainerStatuses"] == {"sidecar-2": {"imageID": image_id(EMPTY)}}
    assert update.is_updated(upgraded, new)
    # the old container is not reset before the new one runs: the pod is not ready for the SidecarSet
    assert not update.is_pod_ready(upgraded, new)
    assert update.pods_to_flip(new, [upgraded]) == []


def kubelet(p, ready=None):
    """Every container restarted onto its spec image (new imageIDs), ready unless `ready` says not."""
    return running(p, ready)


def test_new_container_not_ready_yet_keeps_the_old_one():
    new = hot_set("openkruise/hotupgrade-sample:sidecarv2", resource_version="200")
    upgraded = update.updated_pod(injected(hot_set()), new, NOW)
    # the kubelet has not restarted sidecar-2 yet: its status still shows the empty image's imageID
    assert update.pods_to_flip(new, [upgraded]) == []
    starting = kubelet(upgraded, ready={"sidecar-2": False})
    assert update.pods_to_flip(new, [starting]) == []
    assert update.compute_status(new, [starting])["updatedReadyPods"] == 0


def test_old_container_is_reset_once_the_new_one_runs_ready():
    new = hot_set("openkruise/hotupgrade-sample:sidecarv2", resource_version="200")
    upgraded = kubelet(update.updated_pod(injected(hot_set()), new, NOW))
    assert update.pods_to_flip(new, [upgraded]) == [upgraded]
    status = update.compute_status(new, [upgraded])
    assert status["updatedPods"] == 1 and status["readyPods"] == 0 and status["updatedReadyPods"] == 0

    flipped = update.flipped_pod(upgraded, new, NOW)

    assert flipped is not None
    assert images(flipped)["sidecar-1"] == EMPTY
    assert images(flipped)["sidecar-2"] == "openkruise/hotupgrade-sample:sidecarv2"
    a = annotations(flipped)
    assert json.loads(a[WORKING]) == {"sidecar": "sidecar-2"}
    assert a["version.sidecarset.kruise.io/sidecar-1"] == "0"
    assert a["versionalt.sidecarset.kruise.io/sidecar-2"] == "0"
    last = json.loads(a[STATE])["hot"]["lastContainerStatuses"]
    assert last["sidecar-1"] == {"imageID": image_id("openkruise/hotupgrade-sample:sidecarv1")}
    assert a["kruise.io/sidecarset-hash"] == annotations(upgraded)["kruise.io/sidecarset-hash"]
    assert update.flipped_pod(flipped, new, NOW) is None  # nothing left to reset
    # not ready until the kubelet restarted sidecar-1 on the empty image
    assert not update.is_pod_ready(flipped, new)
    done = kubelet(flipped)
    assert update.is_pod_ready(done, new) and update.pods_to_flip(new, [done]) == []
    assert update.compute_status(new, [done])["updatedReadyPods"] == 1


def test_second_rollout_uses_the_first_container_again():
    v2 = hot_set("openkruise/hotupgrade-sample:sidecarv2", resource_version="200")
    p = kubelet(update.flipped_pod(kubelet(update.updated_pod(injected(hot_set()), v2, NOW)), v2, NOW))
    v3 = hot_set("openkruise/hotupgrade-sample:sidecarv3", resource_version="300")
    upgraded = update.updated_pod(p, v3, NOW)
    assert images(upgraded)["sidecar-1"] == "openkruise/hotupgrade-sample:sidecarv3"
    assert images(upgraded)["sidecar-2"] == "openkruise/hotupgrade-sample:sidecarv2"
    a = annotations(upgraded)
    assert json.loads(a[WORKING]) == {"sidecar": "sidecar-1"}
    assert a["version.sidecarset.kruise.io/sidecar-1"] == "300"
    assert a["versionalt.sidecarset.kruise.io/sidecar-1"] == "200"


def test_back_to_the_image_the_working_container_runs_changes_no_container():
    v1 = hot_set()
    v2 = hot_set("openkruise/hotupgrade-sample:sidecarv2", resource_version="200")
    p = injected(v1)
    stamped = dict(p, metadata={**p["metadata"], "annotations": dict(annotations(p))})
    stamped["metadata"]["annotations"]["kruise.io/sidecarset-hash"] = json.dumps(
        {"hot": {"hash": v2["metadata"]["annotations"]["kruise.io/sidecarset-hash"]}}
    )
    rolled_back = update.updated_pod(stamped, v1, NOW)
    assert images(rolled_back) == images(p) and update.is_updated(rolled_back, v1)


def test_which_container_takes_the_new_image():
    sidecar = hot_set()["spec"]["containers"][0]

    def pick(image1, image2, working, ready=lambda name: False):
        containers = [{"name": "sidecar-1", "image": image1}, {"name": "sidecar-2", "image": image2}]
        p = {
            "metadata": {"annotations": {WORKING: json.dumps({"sidecar": working})}},
            "spec": {"containers": containers},
        }
        return hotupgrade.container_to_upgrade(sidecar, p, ready)[0]

    assert pick("v1", EMPTY, "sidecar-1") == "sidecar-2"
    assert pick(EMPTY, "v1", "sidecar-2") == "sidecar-1"
    # mid-upgrade: the one not ready is replaced again, whichever is working
    assert pick("v1", "v2", "sidecar-2", lambda n: n == "sidecar-1") == "sidecar-2"
    assert pick("v1", "v2", "sidecar-2", lambda n: n == "sidecar-2") == "sidecar-1"
    # both ready (or neither): the older one
    assert pick("v1", "v2", "sidecar-2", lambda n: True) == "sidecar-1"
    assert pick("v1", "v2", "sidecar-1") == "sidecar-2"
    # no readable record: upstream takes -2 as working
    unreadable = {"metadata": {"annotations": {WORKING: "not json"}}}
    assert hotupgrade.pod_pair("sidecar", unreadable) == ("sidecar-2", "sidecar-1")


def test_pods_without_the_pair_are_not_managed():
    s = hot_set()
    p = injected(s)
    assert update.has_sidecar_containers(p, s)
    gone = copy.deepcopy(p)
    gone["spec"]["containers"] = [c for c in gone["spec"]["containers"] if c["name"] != "sidecar-2"]
    assert not update.has_sidecar_containers(gone, s)
    unrecorded = copy.deepcopy(p)
    del unrecorded["metadata"]["annotations"][WORKING]
    assert not update.has_sidecar_containers(unrecorded, s)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["v1", "v2", "v3"]), min_size=1, max_size=6))
def test_any_sequence_of_rollouts_ends_with_one_working_container_on_the_latest_image(versions):
    """Drive a pod through rollouts as the controller and the kubelet would: after each, the working
    container runs the SidecarSet's image, the other sits on the empty image, and the pod counts as
    updated and ready."""
    current = hot_set()
    p = injected(current)
    for i, version in enumerate(versions):
        current = hot_set(f"openkruise/hotupgrade-sample:sidecar{version}", resource_version=str(300 + i))
        for _ in range(4):  # update, flip; each followed by the kubelet
            if not update.is_updated(p, current) and update.pods_to_update(current, [p]):
                p = kubelet(update.updated_pod(p, current, NOW))
            elif update.pods_to_flip(current, [p]):
                p = kubelet(update.flipped_pod(p, current, NOW))
        working, idle = hotupgrade.pod_pair("sidecar", p)
        assert images(p)[working] == current["spec"]["containers"][0]["image"]
        assert images(p)[idle] == EMPTY
        assert update.compute_status(current, [p])["updatedReadyPods"] == 1
