"""An in-place update to a second tag of the same image completes as upstream's does.

The imageID does not move and containerd reports the image's first tag, so neither image rule can see the
new container; upstream's ``defaultCheckContainersInPlaceUpdateCompleted`` then relies on kruise-daemon's
runtime-containers-meta report: every container reported as the status's container, with the kubelet hash
of its current spec (``checkAllContainersHashConsistent``, ``plainHash``).
"""

from __future__ import annotations

import json
from typing import Any

from kruise.control.common.inplace import engine
from kruise.control.common.inplace.containerhash import kubelet_container_hash
from kruise.control.common.inplace.spec import UpdateSpec
from kruise.control.common.revision import revision_labels_for_pod
from kruise.sandbox.simulator.containerhash import container_hash
from tests.kit.control_builders import NOW, build_pod

ALPINE = "docker.io/library/nginx:alpine"
MAINLINE = "docker.io/library/nginx:mainline-alpine"
META = "apps.kruise.io/runtime-containers-meta"


def _write_revision(pod: dict[str, Any], revision: str) -> None:
    pod["metadata"]["labels"].update(revision_labels_for_pod(revision))


def _updated_to_mainline() -> dict[str, Any]:
    """A pod whose nginx:alpine container is being updated in place to nginx:mainline-alpine."""
    pod = build_pod(revision="cs-old")
    pod["spec"]["containers"][0]["image"] = ALPINE
    pod["status"]["containerStatuses"] = [
        {"name": "main", "image": ALPINE, "imageID": "nginx@sha256:one", "containerID": "containerd://old"}
    ]
    pod = engine.start_update(pod, UpdateSpec(revision="cs-new", container_images={"main": MAINLINE}), NOW,
                              _write_revision)  # fmt: skip
    assert pod["spec"]["containers"][0]["image"] == MAINLINE
    return pod


def _report(pod: dict[str, Any], container_id: str, plain_hash: int) -> None:
    meta = {"containers": [{"name": "main", "containerID": container_id, "restartCount": 1,
                            "hashes": {"plainHash": plain_hash}}]}  # fmt: skip
    pod["metadata"]["annotations"][META] = json.dumps(meta)


def test_restarted_with_the_new_specs_kubelet_hash_completes_despite_the_same_image_id() -> None:
    pod = _updated_to_mainline()
    # the kubelet restarted it: same imageID, and containerd names the image by its first tag
    pod["status"]["containerStatuses"][0]["containerID"] = "containerd://new"
    assert engine.update_completed_problem(pod) == "container main imageID not changed"
    _report(pod, "containerd://new", kubelet_container_hash(pod["spec"]["containers"][0]))
    assert engine.update_completed_problem(pod) is None


def test_a_report_of_the_old_container_or_the_old_spec_does_not_complete() -> None:
    pod = _updated_to_mainline()
    old_hash = kubelet_container_hash({"name": "main", "image": ALPINE})
    _report(pod, "containerd://old", old_hash)  # the daemon's report from before the update
    assert engine.update_completed_problem(pod) == "container main imageID not changed"
    pod["status"]["containerStatuses"][0]["containerID"] = "containerd://new"
    _report(pod, "containerd://new", old_hash)
    assert engine.update_completed_problem(pod) == "container main imageID not changed"
    _report(pod, "containerd://other", kubelet_container_hash(pod["spec"]["containers"][0]))
    assert engine.update_completed_problem(pod) == "container main imageID not changed"


def test_the_hash_is_the_kubelets_pick_of_name_and_image() -> None:
    """kubelet 1.31+ hashes name and image only; the sandbox kubelet writes the same value."""
    base = {"name": "main", "image": MAINLINE}
    assert kubelet_container_hash({**base, "env": [{"name": "A", "value": "1"}]}) == kubelet_container_hash(
        base
    )
    assert kubelet_container_hash(base) != kubelet_container_hash({**base, "image": ALPINE})
    assert kubelet_container_hash(base) != kubelet_container_hash({**base, "name": "other"})
    for container in (base, {"name": "a<b>&", "image": "x"}, {"name": "main"}):
        assert container_hash(container) == kubelet_container_hash(container)
