"""Advanced StatefulSet image pre-download decisions (upstream createImagePullJobsForInPlaceUpdate
and doPreDownload)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.control.common import predownload as shared
from kruise.control.common.revision import new_cloneset_revision
from kruise.control.statefulset import predownload

CREATED, IGNORED = shared.CREATED, shared.IGNORED
MIN_READY = "apps.kruise.io/image-predownload-min-updated-ready-pods"


def build(replicas: int | None = 5, strategy: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1"}]},
        },
        "updateStrategy": strategy
        if strategy is not None
        else {
            "type": "RollingUpdate",
            "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "partition": 2},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "sts-uid"},
        "spec": spec,
    }


def revisions(sts: dict[str, Any], change: str = "image") -> tuple[dict[str, Any], dict[str, Any]]:
    current = new_cloneset_revision(sts, 1, 0)
    new = copy.deepcopy(sts)
    container = new["spec"]["template"]["spec"]["containers"][0]
    if change == "image":
        container["image"] = "nginx:2"
    else:
        container["command"] = ["sh"]
    return current, new_cloneset_revision(new, 2, 0)


def rolling(**fields: Any) -> dict[str, Any]:
    return {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", **fields}}


@pytest.mark.parametrize(
    ("replicas", "strategy", "expected"),
    [
        (5, rolling(partition=2), CREATED),
        (5, rolling(), CREATED),  # maxUnavailable defaults to 1: several batches
        (5, rolling(maxUnavailable="50%"), CREATED),
        (5, rolling(maxUnavailable=5), IGNORED),  # one batch
        (5, rolling(maxUnavailable="100%"), IGNORED),
        (5, rolling(maxUnavailable="100%", partition=1), CREATED),
        (5, rolling(maxUnavailable=9), IGNORED),
        (4, rolling(), CREATED),
        (3, rolling(partition=1), IGNORED),  # replicas <= 3
        (None, rolling(), IGNORED),  # replicas default 1
        (5, {"type": "OnDelete"}, IGNORED),
        (5, {"type": "RollingUpdate", "rollingUpdate": {"podUpdatePolicy": "ReCreate"}}, IGNORED),
        (5, {"type": "RollingUpdate", "rollingUpdate": {}}, IGNORED),  # default policy ReCreate
        (5, {"type": "RollingUpdate"}, IGNORED),
        (5, {}, IGNORED),
        (5, rolling(podUpdatePolicy="InPlaceOnly"), CREATED),
    ],
)
def test_decision(replicas: int | None, strategy: dict[str, Any], expected: str) -> None:
    sts = build(replicas, strategy)
    current, update = revisions(sts)
    assert predownload.decision(sts, current, update) == expected
    update["metadata"]["labels"][expected] = "true"
    assert predownload.decision(sts, current, update) is None


def test_change_that_cannot_be_in_place_is_ignored() -> None:
    sts = build()
    current, update = revisions(sts, change="command")
    assert predownload.decision(sts, current, update) == IGNORED


def test_plan_deletes_jobs_once_revisions_converge() -> None:
    sts = build()
    current, _ = revisions(sts)
    assert predownload.plan_pre_download(sts, current, current) == shared.DELETE_JOBS


def test_plan_waits_for_min_updated_ready_pods() -> None:
    sts = build(10, rolling(partition=5))
    sts["metadata"]["annotations"] = {MIN_READY: "20%"}
    current, update = revisions(sts)
    name = update["metadata"]["name"]
    sts["status"] = {"updateRevision": name, "updatedReadyReplicas": 1}
    assert predownload.plan_pre_download(sts, current, update) == shared.NOTHING
    sts["status"]["updatedReadyReplicas"] = 2
    plan = predownload.plan_pre_download(sts, current, update)
    assert plan.label == CREATED and not plan.delete_jobs
    (job,) = plan.jobs
    assert job["metadata"]["name"] == f"{name}-main"
    assert job["spec"]["image"] == "nginx:2"
    assert job["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert job["metadata"]["ownerReferences"][0]["apiVersion"] == "apps.kruise.io/v1beta1"
    assert job["metadata"]["ownerReferences"][0]["uid"] == "sts-uid"


def test_plan_ignores_and_then_does_nothing() -> None:
    sts = build(2, rolling())
    current, update = revisions(sts)
    assert predownload.plan_pre_download(sts, current, update) == shared.IGNORE
    update["metadata"]["labels"][IGNORED] = "true"
    assert predownload.plan_pre_download(sts, current, update) == shared.NOTHING


def test_pull_settings_from_annotations_take_integers_only() -> None:
    sts = build()
    sts["metadata"]["annotations"] = {
        "apps.kruise.io/image-predownload-parallelism": "50%",
        "apps.kruise.io/image-predownload-timeout-seconds": "90",
    }
    current, update = revisions(sts)
    (job,) = predownload.plan_pre_download(sts, current, update).jobs
    assert job["spec"]["parallelism"] == 1
    assert job["spec"]["pullPolicy"] == {"backoffLimit": 1, "timeoutSeconds": 90}
