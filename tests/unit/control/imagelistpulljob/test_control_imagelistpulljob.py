"""ImageListPullJob planning: children per image, create/delete actions, status arithmetic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kruise.control.imagelistpulljob import childjobs

NOW = "2026-11-24T10:00:00Z"


def ilpj(images=("nginx:1.26", "redis:7"), policy="Always", **spec):
    return {
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "ImageListPullJob",
        "metadata": {"name": "warm", "namespace": "default", "uid": "uid-warm"},
        "spec": {
            "images": list(images),
            "parallelism": 2,
            "completionPolicy": {"type": policy},
            **spec,
        },
    }


def child(name, image, *, hash_=None, owner="uid-warm", status=None, created="2026-11-24T09:00:00Z", **meta):
    labels = {"controller-revision-hash": hash_} if hash_ is not None else {}
    body = {
        "metadata": {
            "name": name,
            "namespace": "default",
            "creationTimestamp": created,
            "labels": labels,
            "ownerReferences": [
                {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImageListPullJob", "name": "warm",
                 "uid": owner, "controller": True}
            ],
            **meta,
        },
        "spec": {"image": image, "parallelism": 2, "completionPolicy": {"type": "Always"}},
    }  # fmt: skip
    if status is not None:
        body["status"] = status
    return body


def test_the_template_hash_ignores_images_and_follows_the_template():
    assert childjobs.template_hash(ilpj()) == childjobs.template_hash(ilpj(images=["busybox:1"]))
    assert childjobs.template_hash(ilpj()) != childjobs.template_hash(ilpj(parallelism=3))
    assert childjobs.template_hash(ilpj()).isalnum()


def test_a_new_child_carries_the_template_the_image_and_a_controller_reference():
    job = ilpj(selector={"names": ["node-1"]}, pullSecrets=["regcred"],
               pullPolicy={"backoffLimit": 1, "timeoutSeconds": 60})  # fmt: skip
    new = childjobs.new_child(job, "redis:7", "h1")
    assert new["metadata"]["generateName"] == "warm-"
    assert new["metadata"]["labels"] == {"controller-revision-hash": "h1"}
    (ref,) = new["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["name"], ref["uid"], ref["controller"]) == (
        "ImageListPullJob",
        "warm",
        "uid-warm",
        True,
    )
    assert new["spec"] == {
        "image": "redis:7",
        "parallelism": 2,
        "completionPolicy": {"type": "Always"},
        "selector": {"names": ["node-1"]},
        "pullSecrets": ["regcred"],
        "pullPolicy": {"backoffLimit": 1, "timeoutSeconds": 60},
    }


def test_actions_create_missing_images_and_delete_removed_ones():
    job = ilpj(images=["nginx:1.26", "redis:7"])
    h = childjobs.template_hash(job)
    children = [child("warm-a", "nginx:1.26", hash_=h), child("warm-b", "busybox:1", hash_=h)]
    actions = childjobs.actions(job, childjobs.live_children(job, children), h)
    assert actions.create == ["redis:7"]
    assert [c["metadata"]["name"] for c in actions.delete] == ["warm-b"]


def test_a_child_from_an_older_template_is_replaced():
    job = ilpj(images=["nginx:1.26"])
    h = childjobs.template_hash(job)
    actions = childjobs.actions(job, [child("warm-a", "nginx:1.26", hash_="old")], h)
    assert actions.create == ["nginx:1.26"]
    assert [c["metadata"]["name"] for c in actions.delete] == ["warm-a"]


def test_an_unlabelled_child_with_the_same_template_is_kept():
    job = ilpj(images=["nginx:1.26"])
    actions = childjobs.actions(job, [child("warm-a", "nginx:1.26")], childjobs.template_hash(job))
    assert actions.create == [] and actions.delete == []


def test_a_second_child_for_one_image_is_deleted_and_the_oldest_kept():
    job = ilpj(images=["nginx:1.26"])
    h = childjobs.template_hash(job)
    old = child("warm-a", "nginx:1.26", hash_=h, created="2026-11-24T09:00:00Z")
    new = child("warm-b", "nginx:1.26", hash_=h, created="2026-11-24T09:05:00Z")
    actions = childjobs.actions(job, childjobs.live_children(job, [new, old]), h)
    assert actions.create == []
    assert [c["metadata"]["name"] for c in actions.delete] == ["warm-b"]


def test_live_children_skip_other_owners_and_children_being_deleted():
    job = ilpj()
    children = [
        child("warm-a", "nginx:1.26"),
        child("other", "nginx:1.26", owner="uid-other"),
        child("warm-gone", "redis:7", deletionTimestamp=NOW),
    ]
    assert [c["metadata"]["name"] for c in childjobs.live_children(job, children)] == ["warm-a"]


def started(desired, active=0, succeeded=0, failed=0):
    return {"startTime": NOW, "desired": desired, "active": active, "succeeded": succeeded, "failed": failed}


def test_status_adds_up_children_and_lists_failed_images():
    job = ilpj(images=["nginx:1.26", "redis:7", "busybox:1"])
    children = [
        child("warm-a", "nginx:1.26", status=started(3, succeeded=3)),
        child("warm-b", "redis:7", status=started(3, succeeded=2, failed=1)),
        child("warm-c", "busybox:1", status=started(3, active=1, succeeded=1)),
    ]
    status = childjobs.status(job, children, NOW)
    assert status == {
        "startTime": NOW,
        "desired": 3,
        "active": 1,
        "completed": 2,
        "succeeded": 1,
        "failedImageStatuses": [
            {
                "imagePullJob": "warm-b",
                "name": "redis:7",
                "message": "Please check for details which nodes failed by "
                "'kubectl get ImagePullJob warm-b'.",
            }
        ],
    }


def test_status_completes_when_every_image_completed_unless_never():
    children = [
        child("warm-a", "nginx:1.26", status=started(2, succeeded=2)),
        child("warm-b", "redis:7", status=started(2, failed=2)),
    ]
    done = childjobs.status(ilpj(), children, NOW)
    assert done["completionTime"] == NOW and done["completed"] == 2 and done["succeeded"] == 1
    assert "completionTime" not in childjobs.status(ilpj(policy="Never"), children, NOW)


def test_children_that_did_not_start_do_not_count_and_the_start_time_is_kept():
    job = ilpj()
    job["status"] = {"startTime": "2026-11-24T09:00:00Z"}
    status = childjobs.status(job, [child("warm-a", "nginx:1.26")], NOW)
    assert status == {
        "startTime": "2026-11-24T09:00:00Z",
        "desired": 2,
        "active": 0,
        "completed": 0,
        "succeeded": 0,
    }


counts = st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)).map(
    lambda t: {"desired": t[0] + t[1] + t[2], "succeeded": t[0], "failed": t[1], "active": min(t[2], t[3])}
)


@given(st.lists(counts, min_size=1, max_size=6))
def test_status_counts_stay_within_the_image_count(child_counts):
    images = [f"img{i}:1" for i in range(len(child_counts))]
    children = [
        child(f"warm-{i}", image, status={"startTime": NOW, **c})
        for i, (image, c) in enumerate(zip(images, child_counts, strict=True))
    ]
    status = childjobs.status(ilpj(images=images), children, NOW)
    assert status["desired"] == len(images)
    assert 0 <= status["succeeded"] <= status["completed"] <= status["desired"]
    assert status["active"] == sum(1 for c in child_counts if c["active"] > 0)
    failed = [s["name"] for s in status.get("failedImageStatuses", [])]
    assert failed == [image for image, c in zip(images, child_counts, strict=True) if c["failed"] > 0]
    assert ("completionTime" in status) == (status["completed"] == len(images))
