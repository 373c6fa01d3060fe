"""Advanced DaemonSet image pre-download decisions (upstream daemonset_predownload_image.go and
the pre-download step of syncDaemonSet)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.control.common import predownload as shared
from kruise.control.daemonset import predownload
from kruise.control.daemonset.history import new_revision, revision_hash

CREATED, IGNORED = shared.CREATED, shared.IGNORED


def build(rolling: dict[str, Any] | None = None, desired: int = 4, **containers: str) -> dict[str, Any]:
    containers = containers or {"main": "nginx:1"}
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "kube-system", "uid": "ds-uid"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": n, "image": i} for n, i in containers.items()]},
            },
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling or {}},
        },
        "status": {"desiredNumberScheduled": desired, "updatedNumberScheduled": 0, "daemonSetHash": "old"},
    }


@pytest.mark.parametrize(
    ("rolling", "desired", "expected"),
    [
        ({}, 4, CREATED),  # maxUnavailable defaults to 1
        ({"maxUnavailable": 1}, 1, IGNORED),
        ({"maxUnavailable": 1}, 0, IGNORED),
        ({"maxUnavailable": 4}, 4, IGNORED),
        ({"maxUnavailable": "100%"}, 4, IGNORED),
        ({"maxUnavailable": "100%", "partition": 1}, 4, CREATED),
        ({"maxUnavailable": "30%"}, 4, CREATED),  # rounds up: 2 < 4
        ({"maxUnavailable": "76%"}, 4, IGNORED),  # rounds up: 4
        ({"partition": 2}, 2, CREATED),
        ({"maxSurge": 1, "maxUnavailable": 0}, 4, CREATED),
        ({"type": "InPlaceIfPossible"}, 4, CREATED),
        ({"type": "Standard"}, 4, CREATED),  # no update-type check upstream
    ],
)
def test_decision(rolling: dict[str, Any], desired: int, expected: str) -> None:
    ds = build(rolling, desired)
    update = new_revision(ds, 2)
    assert predownload.decision(ds, update) == expected
    update["metadata"]["labels"][expected] = "true"
    assert predownload.decision(ds, update) is None


def test_no_replicas_threshold() -> None:
    """Unlike CloneSet / Advanced StatefulSet, 2 nodes are enough."""
    ds = build({}, 2)
    assert predownload.decision(ds, new_revision(ds, 1)) == CREATED


def test_bad_partition_names_the_field() -> None:
    ds = build({"partition": "lots"}, 4)
    with pytest.raises(predownload.PreDownloadError, match=r"rollingUpdate\.partition"):
        predownload.decision(ds, new_revision(ds, 1))


@pytest.mark.parametrize(
    ("updated", "desired", "status_hash_is_current", "in_progress"),
    [(0, 4, True, True), (4, 4, False, True), (4, 4, True, False), (3, 4, False, True)],
)
def test_rollout_in_progress(
    updated: int, desired: int, status_hash_is_current: bool, in_progress: bool
) -> None:
    ds = build({}, desired)
    current = new_revision(ds, 1)
    ds["status"]["updatedNumberScheduled"] = updated
    if status_hash_is_current:
        ds["status"]["daemonSetHash"] = revision_hash(current)
    assert predownload.rollout_in_progress(ds, revision_hash(current)) is in_progress
    plan = predownload.plan_pre_download(ds, current, [])
    assert plan.delete_jobs is (not in_progress)


def test_plan_jobs_for_images_changed_against_old_revisions() -> None:
    old_ds = build({}, 4, main="nginx:1", side="busybox:1")
    older_ds = build({}, 4, main="nginx:0", side="busybox:1")
    ds = build({"partition": 1}, 4, main="nginx:1", side="busybox:2", extra="redis:7")
    old = [new_revision(old_ds, 1), new_revision(older_ds, 2)]
    current = new_revision(ds, 3)
    ds["metadata"]["annotations"] = {"apps.kruise.io/image-predownload-parallelism": "3"}
    plan = predownload.plan_pre_download(ds, current, old)
    assert plan.label == CREATED
    name = current["metadata"]["name"]
    by_name = {j["metadata"]["name"]: j for j in plan.jobs}
    # main differs from the older revision's nginx:0, side changed, extra is new
    assert set(by_name) == {f"{name}-main", f"{name}-side", f"{name}-extra"}
    job = by_name[f"{name}-side"]
    assert job["spec"]["image"] == "busybox:2" and job["spec"]["parallelism"] == 3
    assert job["metadata"]["namespace"] == "kube-system"
    ref = job["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["uid"], ref["controller"]) == ("DaemonSet", "ds-uid", True)
    # DaemonSet revisions carry no controller.kubernetes.io/hash label: upstream puts "" in both
    # the job label and the NotIn values; DaemonSet pods carry the bare hash, not the revision
    # name, so the selector keeps already-updated pods too (as upstream).
    assert job["metadata"]["labels"]["controller.kubernetes.io/hash"] == ""
    expression = job["spec"]["podSelector"]["matchExpressions"][-1]
    assert expression == {"key": "controller-revision-hash", "operator": "NotIn", "values": [name, ""]}


def test_plan_ignored_once_then_nothing() -> None:
    ds = build({"maxUnavailable": "100%"}, 3)
    current = new_revision(ds, 1)
    assert predownload.plan_pre_download(ds, current, []) == shared.IGNORE
    labelled = copy.deepcopy(current)
    labelled["metadata"]["labels"][IGNORED] = "true"
    assert predownload.plan_pre_download(ds, labelled, []) == shared.NOTHING
