"""ImagePullJob planning: image split, targets, NodeImage edits, progress and status."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kruise.control.imagepulljob import nodeimages

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def job(**spec):
    return {
        "metadata": {"name": "j", "namespace": "ns", "uid": "u1"},
        "spec": {"image": "nginx:1.26", **spec},
    }


def node_image(name, labels=None, tags=None, statuses=None):
    spec = {"images": {"nginx": {"tags": tags}}} if tags is not None else {}
    status = {"imageStatuses": {"nginx": {"tags": statuses}}} if statuses is not None else {}
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": spec, "status": status}


@pytest.mark.parametrize(
    ("image", "split"),
    [("nginx:1.26", ("nginx", "1.26")), ("nginx", ("nginx", "latest")),
     ("reg:5000/a/b", ("reg:5000/a/b", "latest")), ("reg:5000/a/b:v1", ("reg:5000/a/b", "v1"))],
)  # fmt: skip
def test_split_image(image, split):
    assert nodeimages.split_image(image) == split


def test_targets():
    images = [node_image("a", {"pool": "x"}), node_image("b", {"pool": "y"}), node_image("c", {"pool": "x"})]
    assert nodeimages.target_nodes(job(), images, []) == ["a", "b", "c"]
    assert nodeimages.target_nodes(job(selector={"names": ["c", "zz"]}), images, []) == ["c"]
    assert nodeimages.target_nodes(job(selector={"matchLabels": {"pool": "x"}}), images, []) == ["a", "c"]
    pods = [
        {"metadata": {"namespace": "ns", "labels": {"app": "w"}}, "spec": {"nodeName": "b"}},
        {"metadata": {"namespace": "other", "labels": {"app": "w"}}, "spec": {"nodeName": "a"}},
    ]
    assert nodeimages.target_nodes(job(podSelector={"matchLabels": {"app": "w"}}), images, pods) == ["b"]


def test_with_job_adds_or_joins_a_tag():
    added = nodeimages.with_job(job(), node_image("a"), [{"namespace": "ns", "name": "s"}], NOW)
    (tag,) = added["images"]["nginx"]["tags"]
    assert tag["version"] == 0 and tag["ownerReferences"][0]["uid"] == "u1"
    assert added["images"]["nginx"]["pullSecrets"] == [{"namespace": "ns", "name": "s"}]
    shared = node_image("a", tags=[{"tag": "1.26", "version": 3, "ownerReferences": [{"uid": "other"}]}])
    joined = nodeimages.with_job(job(), shared, [], NOW)["images"]["nginx"]["tags"][0]
    assert joined["version"] == 4 and [r["uid"] for r in joined["ownerReferences"]] == ["other", "u1"]
    owned = node_image("a", tags=[{"tag": "1.26", "version": 0, "ownerReferences": [{"uid": "u1"}]}])
    assert nodeimages.with_job(job(), owned, [], NOW) is None


def test_progress_reads_the_matching_version_only():
    owned = [{"tag": "1.26", "version": 2, "ownerReferences": [{"uid": "u1"}]}]
    images = {
        "a": node_image("a", tags=owned, statuses=[{"tag": "1.26", "version": 2, "phase": "Succeeded"}]),
        "b": node_image("b", tags=owned, statuses=[{"tag": "1.26", "version": 1, "phase": "Succeeded"}]),
        "c": node_image("c", tags=owned, statuses=[{"tag": "1.26", "version": 2, "phase": "Failed"}]),
        "d": node_image("d"),
    }
    result = nodeimages.progress(job(), ["a", "b", "c", "d"], images)
    assert (result.succeeded, result.active, result.failed, result.not_synced) == (1, 1, 1, ["d"])
    status = nodeimages.job_status(job(), result, NOW, None)
    assert status["message"] == "job is running, progress 50.0%" and "completionTime" not in status


def test_completion_and_never():
    done = nodeimages.JobProgress(desired=2, succeeded=2)
    assert nodeimages.job_status(job(), done, NOW, None)["message"] == "job has completed"
    never = job(completionPolicy={"type": "Never"})
    assert "completionTime" not in nodeimages.job_status(never, done, NOW, None)
    assert nodeimages.tag_pull_policy(never)["ttlSecondsAfterFinished"] == nodeimages.TTL_FOR_NEVER_SECONDS


def test_parallelism():
    assert nodeimages.parallelism(job(), 10) == 1
    assert nodeimages.parallelism(job(parallelism=4), 10) == 4
    assert nodeimages.parallelism(job(parallelism="50%"), 10) == 5
