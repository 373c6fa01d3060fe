"""When a pod's sidecars run the images their spec names (upstream `IsPodStateConsistent`), including
the digest rule: sidecars all pinned by digest are judged by the imageID the kubelet reports, repo and
digest compared as written; otherwise by the imageIDs recorded before the last in-place write."""

from __future__ import annotations

import json

import pytest

from kruise.control.sidecarset import update
from tests.kit.pods import pod

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64
STATE = "kruise.io/sidecarset-inplace-update-state"


def sidecarset(*containers):
    return {"metadata": {"name": "s"}, "spec": {"containers": list(containers)}}


COLD = {"name": "side", "image": "x"}
HOT = {
    "name": "hot",
    "image": "x",
    "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
}


def sidecar_pod(containers, statuses=None, state=None):
    """`containers`: name -> spec image; `statuses`: name -> (status image, imageID), default the spec
    image and its own name as imageID; the app container is always there."""
    specs = [{"name": "app", "image": "nginx:1"}] + [{"name": n, "image": i} for n, i in containers.items()]
    reported = {"app": ("nginx:1", "docker.io/library/nginx@" + D1)}
    reported.update({n: (i, i) for n, i in containers.items()})
    reported.update(statuses or {})
    annotations = {} if state is None else {STATE: state if isinstance(state, str) else json.dumps(state)}
    container_statuses = [
        {"name": n, "image": image, "imageID": image_id} for n, (image, image_id) in reported.items()
    ]
    return pod(
        namespace=None,
        annotations=annotations,
        containers=specs,
        status={"containerStatuses": container_statuses},
    )


def recorded(**image_ids):
    last = {n: {"imageID": i} for n, i in image_ids.items()}
    return {"s": {"revision": "h1", "lastContainerStatuses": last}}


CASES = [
    # --- digest rule: every sidecar pinned by digest, imageID decides ---
    ("docker imageID, same digest", {"side": f"busybox@{D1}"},
     {"side": ("busybox:1.35", f"docker-pullable://busybox@{D1}")}, None, True),
    ("containerd imageID, same repo as written", {"side": f"docker.io/library/busybox@{D1}"},
     {"side": ("docker.io/library/busybox:1.35", f"docker.io/library/busybox@{D1}")}, None, True),
    ("containerd imageID, short repo in spec: not equal as written", {"side": f"busybox@{D1}"},
     {"side": ("docker.io/library/busybox:1.35", f"docker.io/library/busybox@{D1}")}, None, False),
    ("other digest still running", {"side": f"busybox@{D2}"},
     {"side": ("busybox:1.35", f"docker-pullable://busybox@{D1}")}, None, False),
    ("digest rule ignores the recorded imageIDs", {"side": f"busybox@{D2}"},
     {"side": ("busybox:1.35", f"docker-pullable://busybox@{D2}")},
     recorded(side=f"docker-pullable://busybox@{D2}"), True),
    ("pinned to the digest it already ran (same imageID as before the write)", {"side": f"busybox:1.35@{D1}"},
     {"side": ("busybox:1.35", f"docker-pullable://busybox@{D1}")},
     recorded(side=f"docker-pullable://busybox@{D1}"), True),
    ("no imageID yet", {"side": f"busybox@{D1}"}, {"side": ("busybox", "")}, None, False),
    ("bare image id reported", {"side": f"busybox@{D1}"}, {"side": ("busybox", D1)}, None, False),
    # --- tag images: the recorded imageIDs decide ---
    ("never updated in place", {"side": "busybox:1.35"}, {"side": ("busybox:1.34", "id-1")}, None, True),
    ("restarted on a new imageID", {"side": "busybox:1.35"}, {"side": ("busybox:1.35", "id-2")},
     recorded(side="id-1"), True),
    ("kubelet not there yet", {"side": "busybox:1.35"}, {"side": ("busybox:1.34", "id-1")},
     recorded(side="id-1"), False),
    ("re-tag to the same imageID", {"side": "busybox:1.35"}, {"side": ("busybox:1.35", "id-1")},
     recorded(side="id-1"), True),
    ("same imageID, status image written differently: not settled", {"side": "busybox:1.35"},
     {"side": ("docker.io/library/busybox:1.35", "id-1")}, recorded(side="id-1"), False),
    ("record of another SidecarSet only", {"side": "busybox:1.35"}, {"side": ("busybox:1.34", "id-1")},
     {"other": {"lastContainerStatuses": {"side": {"imageID": "id-1"}}}}, True),
    ("record not JSON", {"side": "busybox:1.35"}, None, "{broken", False),
    ("record JSON but not an object", {"side": "busybox:1.35"}, None, "[]", False),
    ("record null: Go decodes an empty map", {"side": "busybox:1.35"}, None, "null", True),
    ("this SidecarSet's entry not an object", {"side": "busybox:1.35"}, None, '{"s": 5}', False),
    ("another SidecarSet's entry of the wrong type fails the decode", {"side": "busybox:1.35"}, None,
     '{"s": {}, "other": {"revision": 1}}', False),
    ("field names match in any case", {"side": "busybox:1.35"}, {"side": ("busybox:1.34", "id-1")},
     '{"s": {"LASTCONTAINERSTATUSES": {"side": {"ImageId": "id-1"}}}}', False),
]  # fmt: skip


@pytest.mark.parametrize(("containers", "statuses", "state", "consistent"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_cold_sidecar_consistency(containers, statuses, state, consistent):
    assert (
        update.sidecars_consistent(sidecar_pod(containers, statuses, state), sidecarset(COLD)) is consistent
    )


def test_a_missing_container_status_is_inconsistent():
    p = sidecar_pod({"side": f"busybox@{D1}"})
    p["status"]["containerStatuses"].pop()
    assert not update.sidecars_consistent(p, sidecarset(COLD))


def test_digest_rule_needs_every_sidecar_pinned():
    """One tag sidecar sends the whole check to the recorded imageIDs, where a digest sidecar whose
    imageID did not change but whose status image differs is still outdated."""
    s = sidecarset(COLD, {"name": "tagged", "image": "x"})
    containers = {"side": f"busybox@{D2}", "tagged": "envoy:1"}
    statuses = {"side": ("busybox:1.35", f"docker-pullable://busybox@{D2}")}
    assert update.sidecars_consistent(sidecar_pod(containers, statuses), s)
    stale = recorded(side=f"docker-pullable://busybox@{D2}")
    assert not update.sidecars_consistent(sidecar_pod(containers, statuses, stale), s)
    # checked alone, the digest sidecar is judged by its imageID
    assert update.sidecars_consistent(sidecar_pod(containers, statuses, stale), s, ["side"])


def test_pod_order_decides_which_digest_sidecars_are_checked():
    """As upstream, containers are walked in pod order and the first tag sidecar ends the digest checks:
    a mismatching digest sidecar before it fails the pod, one after it is left to the recorded imageIDs."""
    s = sidecarset(COLD, {"name": "tagged", "image": "x"})
    mismatch = {"side": ("busybox:1.35", f"docker-pullable://busybox@{D1}")}
    before = sidecar_pod({"side": f"busybox@{D2}", "tagged": "envoy:1"}, mismatch)
    after = sidecar_pod({"tagged": "envoy:1", "side": f"busybox@{D2}"}, mismatch)
    assert not update.sidecars_consistent(before, s)
    assert update.sidecars_consistent(after, s)


def test_app_containers_are_not_judged():
    s = sidecarset(COLD)
    p = sidecar_pod({"side": f"busybox@{D1}"}, {"side": ("busybox", f"docker-pullable://busybox@{D1}")})
    p["spec"]["containers"][0]["image"] = f"nginx@{D2}"  # app runs something else: not our business
    assert update.sidecars_consistent(p, s)


def test_hot_upgrade_pair_with_digest_images():
    """Both containers of a hot-upgrade pair count: the idle one on a digest empty image is judged too."""
    empty = f"openkruise/hotupgrade-sample@{D2}"
    s = sidecarset(HOT)
    containers = {"hot-1": f"sidecar@{D1}", "hot-2": empty}
    statuses = {
        "hot-1": ("sidecar:v1", f"docker-pullable://sidecar@{D1}"),
        "hot-2": (
            "openkruise/hotupgrade-sample:empty",
            f"docker-pullable://openkruise/hotupgrade-sample@{D2}",
        ),
    }
    assert update.sidecars_consistent(sidecar_pod(containers, statuses), s)
    lagging = dict(statuses, **{"hot-2": ("sidecar:v0", f"docker-pullable://sidecar@{D1}")})
    assert not update.sidecars_consistent(sidecar_pod(containers, lagging), s)
    assert update.sidecars_consistent(sidecar_pod(containers, lagging), s, ["hot-1"])


def test_mid_update_uses_the_digest_rule():
    """A ready sidecar pinned to a digest it does not run yet holds back the next update; once the
    kubelet reports that digest it does not, even though its imageID equals the recorded one."""
    s = sidecarset(COLD)
    stale = recorded(side=f"docker-pullable://busybox@{D1}")
    p = sidecar_pod(
        {"side": f"busybox@{D2}"}, {"side": ("busybox:1.35", f"docker-pullable://busybox@{D1}")}, stale
    )
    p["status"]["containerStatuses"][1]["ready"] = True
    assert update.mid_update(p, s)
    running = {"side": ("busybox:1.35", f"docker-pullable://busybox@{D1}")}
    pinned = sidecar_pod({"side": f"busybox@{D1}"}, running, stale)
    pinned["status"]["containerStatuses"][1]["ready"] = True
    assert not update.mid_update(pinned, s)
