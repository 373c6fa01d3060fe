"""Image pre-download decision and ImagePullJob objects for in-place rollouts."""

from __future__ import annotations

import copy

import pytest

from kruise.api.imagepulljob import ImagePullJob, validate
from kruise.control.cloneset import predownload
from kruise.control.common.revision import new_cloneset_revision
from tests.kit.control_builders import build_cloneset

CREATED = "apps.kruise.io/pre-predownload-created"
IGNORED = "apps.kruise.io/image-predownload-ignored"


def revisions(cs: dict) -> tuple[dict, dict]:
    current = new_cloneset_revision(cs, 1, 0)
    new = copy.deepcopy(cs)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:3"
    return current, new_cloneset_revision(new, 2, 0)


@pytest.mark.parametrize(
    ("replicas", "strategy", "expected"),
    [
        (5, {"type": "InPlaceIfPossible"}, CREATED),
        (5, {"type": "ReCreate"}, IGNORED),
        (5, {}, IGNORED),
        (3, {"type": "InPlaceIfPossible"}, IGNORED),
        (5, {"type": "InPlaceIfPossible", "maxUnavailable": "100%"}, IGNORED),
        (5, {"type": "InPlaceIfPossible", "maxUnavailable": "100%", "partition": 1}, CREATED),
    ],
)
def test_decision(replicas: int, strategy: dict, expected: str) -> None:
    cs = build_cloneset(replicas, **strategy)
    current, update = revisions(cs)
    assert predownload.decision(cs, current, update) == expected
    update["metadata"]["labels"][expected] = "true"
    assert predownload.decision(cs, current, update) is None


def test_recreate_only_change_is_ignored() -> None:
    cs = build_cloneset(5, type="InPlaceIfPossible")
    current = new_cloneset_revision(cs, 1, 0)
    cs["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh"]
    assert predownload.decision(cs, current, new_cloneset_revision(cs, 2, 0)) == IGNORED


def test_jobs_are_valid_image_pull_jobs() -> None:
    cs = build_cloneset(5, type="InPlaceIfPossible")
    cs["metadata"]["annotations"] = {"apps.kruise.io/image-predownload-parallelism": "5"}
    current, update = revisions(cs)
    (job,) = predownload.image_pull_jobs(cs, current, update)
    name = update["metadata"]["name"]
    assert job["metadata"]["name"] == f"{name}-main"
    assert job["spec"]["image"] == "nginx:3" and job["spec"]["parallelism"] == 5
    expression = job["spec"]["podSelector"]["matchExpressions"][-1]
    assert expression["operator"] == "NotIn" and expression["values"][0] == name
    assert job["metadata"]["ownerReferences"][0]["kind"] == "CloneSet"
    assert validate(ImagePullJob.model_validate(job)) == []


def test_should_consider_waits_for_updated_ready_pods() -> None:
    cs = build_cloneset(10)
    cs["metadata"]["annotations"] = {"apps.kruise.io/image-predownload-min-updated-ready-pods": "20%"}
    cs["status"] = {"updateRevision": "cs-new", "updatedReadyReplicas": 1}
    assert not predownload.should_consider(cs, "cs-old", "cs-new")
    cs["status"]["updatedReadyReplicas"] = 2
    assert predownload.should_consider(cs, "cs-old", "cs-new")
    assert not predownload.should_consider(cs, "cs-new", "cs-new")
    assert predownload.created_event_message("j", "nginx:3") == "created ImagePullJob j for image: nginx:3"
