"""The pre-download parts CloneSet, Advanced StatefulSet and Advanced DaemonSet share: changed
images, pull settings from annotations, min-updated-ready threshold, the ImagePullJob objects."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.imagepulljob import ImagePullJob, validate
from kruise.control.common import predownload
from kruise.control.common.revision import new_cloneset_revision

PAR = "apps.kruise.io/image-predownload-parallelism"
TIMEOUT = "apps.kruise.io/image-predownload-timeout-seconds"
MIN_READY = "apps.kruise.io/image-predownload-min-updated-ready-pods"


def owner(annotations: dict[str, str] | None = None, **containers: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "u-1"},
        "spec": {
            "replicas": 10,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
                "spec": {"containers": [{"name": n, "image": i} for n, i in containers.items()]},
            },
        },
    }
    if annotations:
        body["metadata"]["annotations"] = annotations
    return body


def revision(number: int, **containers: str) -> dict[str, Any]:
    return new_cloneset_revision(owner(**containers), number, 0)


@pytest.mark.parametrize(
    ("olds", "new", "expected"),
    [
        ([{"main": "a:1"}], {"main": "a:2"}, {"main": "a:2"}),
        ([{"main": "a:1"}], {"main": "a:1"}, {}),
        ([{"main": "a:1"}], {"main": "a:1", "side": "s:1"}, {"side": "s:1"}),
        ([{"main": "a:1", "side": "s:1"}], {"main": "a:2"}, {"main": "a:2"}),
        # several old revisions (DaemonSet): differing from any of them counts
        ([{"main": "a:2"}, {"main": "a:1"}], {"main": "a:2"}, {"main": "a:2"}),
        ([{"main": "a:2"}, {"side": "s:1"}], {"main": "a:2", "side": "s:1"}, {}),
        ([], {"main": "a:1"}, {"main": "a:1"}),
    ],
)
def test_changed_images(olds: list[dict[str, str]], new: dict[str, str], expected: dict[str, str]) -> None:
    old_revisions = [revision(i + 1, **o) for i, o in enumerate(olds)]
    assert predownload.changed_images(old_revisions, revision(9, **new)) == expected


images = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x:1", "x:2", "y:1"]), min_size=1)


@given(old=images, new=images)
def test_changed_images_against_one_revision(old: dict[str, str], new: dict[str, str]) -> None:
    changed = predownload.changed_images([revision(1, **old)], revision(2, **new))
    assert changed == {name: image for name, image in new.items() if old.get(name) != image}


@pytest.mark.parametrize(
    ("annotations", "percent", "expected"),
    [
        ({}, False, predownload.PullSettings(1, 300)),
        ({PAR: "4", TIMEOUT: "60"}, False, predownload.PullSettings(4, 60)),
        ({PAR: "50%"}, False, predownload.PullSettings(1, 300)),
        ({PAR: "50%"}, True, predownload.PullSettings("50%", 300)),
        ({PAR: "many", TIMEOUT: "soon"}, True, predownload.PullSettings(1, 300)),
        ({TIMEOUT: str(2**31)}, False, predownload.PullSettings(1, 300)),
    ],
)
def test_annotation_pull_settings(
    annotations: dict[str, str], percent: bool, expected: predownload.PullSettings
) -> None:
    assert predownload.annotation_pull_settings(owner(annotations), percent_parallelism=percent) == expected


@pytest.mark.parametrize(
    ("raw", "total", "expected"),
    [(None, 10, 0), ("3", 10, 3), ("25%", 10, 3), ("10%", 5, 1), ("bogus", 10, 0), ("0", 10, 0)],
)
def test_min_updated_ready_pods(raw: str | None, total: int, expected: int) -> None:
    annotations = {} if raw is None else {MIN_READY: raw}
    assert predownload.min_updated_ready_pods(owner(annotations), total) == expected


def test_enough_updated_ready_counts_only_the_same_update_revision() -> None:
    body = owner({MIN_READY: "2"})
    body["status"] = {"updateRevision": "web-old", "updatedReadyReplicas": 5}
    assert not predownload.enough_updated_ready(body, "web-new", 10)
    body["status"]["updateRevision"] = "web-new"
    assert predownload.enough_updated_ready(body, "web-new", 10)
    body["status"]["updatedReadyReplicas"] = 1
    assert not predownload.enough_updated_ready(body, "web-new", 10)


def test_already_decided() -> None:
    rev = revision(1, main="a:1")
    assert not predownload.already_decided(rev)
    for label in (predownload.CREATED, predownload.IGNORED):
        labelled = copy.deepcopy(rev)
        labelled["metadata"]["labels"][label] = "true"
        assert predownload.already_decided(labelled)


def test_image_pull_jobs_match_upstream_shape() -> None:
    body = owner({PAR: "3", TIMEOUT: "120"}, main="a:2", side="s:1")
    body["spec"]["template"]["spec"]["imagePullSecrets"] = [{"name": "reg"}]
    body["spec"]["selector"]["matchExpressions"] = [{"key": "tier", "operator": "Exists"}]
    update = new_cloneset_revision(body, 2, 0)
    ref = {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web", "uid": "u-1"}
    jobs = predownload.image_pull_jobs(
        body, ref, update, {"side": "s:1", "main": "a:2"}, predownload.annotation_pull_settings(body)
    )
    assert [j["metadata"]["name"] for j in jobs] == [
        f"{update['metadata']['name']}-main",
        f"{update['metadata']['name']}-side",
    ]
    job = jobs[0]
    hash_ = update["metadata"]["labels"]["controller.kubernetes.io/hash"]
    assert job["apiVersion"] == "apps.kruise.io/v1alpha1" and job["kind"] == "ImagePullJob"
    assert job["metadata"]["namespace"] == "ns"
    assert job["metadata"]["labels"] == {"app": "web", "controller.kubernetes.io/hash": hash_}
    assert job["metadata"]["ownerReferences"] == [ref]
    assert job["spec"] == {
        "image": "a:2",
        "podSelector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "Exists"},
                {
                    "key": "controller-revision-hash",
                    "operator": "NotIn",
                    "values": [update["metadata"]["name"], hash_],
                },
            ],
        },
        "parallelism": 3,
        "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 120},
        "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 600},
        "sandboxConfig": {
            "labels": {"app": "web", "controller.kubernetes.io/hash": hash_},
            "annotations": {"a": "b"},
        },
        "pullSecrets": ["reg"],
    }
    # the owner's selector is not modified
    assert body["spec"]["selector"]["matchExpressions"] == [{"key": "tier", "operator": "Exists"}]
    for j in jobs:
        assert validate(ImagePullJob.model_validate(j)) == []


def test_event_messages() -> None:
    assert predownload.created_event_message("j", "a:1") == "created ImagePullJob j for image: a:1"
    assert predownload.failed_event_message("j", "boom") == "failed to create ImagePullJob j: boom"
