"""`kruise.control.nodeimage.cleanup.prune_spec`: which NodeImage tags go (no createdAt, owners gone, TTL
past) and when the next TTL runs out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as hs

from kruise.api.timestamps import rfc3339
from kruise.control.nodeimage.cleanup import live_owners, prune_spec

NOW = datetime(2026, 11, 22, 23, 0, tzinfo=UTC)
JOB = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "namespace": "ns", "name": "warm",
       "uid": "uid-warm"}  # fmt: skip
SECRETS = lambda namespace, name: True  # noqa: E731 - every Secret exists
OTHER = {"apiVersion": "example.com/v1", "kind": "Warmer", "namespace": "ns", "name": "x", "uid": "uid-x"}


def jobs(**live):
    """A lookup over `name=uid` pairs in namespace ns."""
    return lambda namespace, name: live.get(name) if namespace == "ns" else None


def spec_tag(tag, *, ttl=None, version=0, owners=(JOB,), created=True):
    body = {"tag": tag, "version": version, "ownerReferences": list(owners)}
    if created:
        body["createdAt"] = rfc3339(NOW - timedelta(hours=1))
    if ttl is not None:
        body["pullPolicy"] = {"ttlSecondsAfterFinished": ttl}
    return body


def status_tag(tag, *, finished_ago=None, version=0):
    body = {"tag": tag, "version": version, "phase": "Pulling" if finished_ago is None else "Succeeded"}
    if finished_ago is not None:
        body["completionTime"] = rfc3339(NOW - timedelta(seconds=finished_ago))
    return body


def node_image(images, statuses=None):
    return {
        "metadata": {"name": "node-1"},
        "spec": {"images": images},
        "status": {"imageStatuses": {name: {"tags": tags} for name, tags in (statuses or {}).items()}},
    }


def test_nothing_to_do_writes_nothing_and_waits_for_nothing():
    plan = prune_spec(
        node_image({"nginx": {"tags": [spec_tag("1.25")]}}), NOW, jobs(warm="uid-warm"), SECRETS
    )
    assert (plan.spec, plan.reasons, plan.requeue_after) == (None, [], None)


def test_a_finished_tag_past_its_ttl_goes_with_its_empty_image():
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1.25", ttl=300)]}, "redis": {"tags": [spec_tag("7")]}},
        {"nginx": [status_tag("1.25", finished_ago=300)]},
    )
    plan = prune_spec(ni, NOW, jobs(warm="uid-warm"), SECRETS)
    assert plan.spec == {"images": {"redis": {"tags": [spec_tag("7")]}}}
    assert plan.reasons == ["image nginx:1.25 has exceeded TTL (300)s since it completed",
                            "no longer has nginx image spec"]  # fmt: skip
    assert ni["spec"]["images"]["nginx"]["tags"]  # the input is left alone


def test_a_tag_in_its_ttl_stays_and_the_plan_comes_back_when_it_runs_out():
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1.25", ttl=300), spec_tag("1.26", ttl=600)]}},
        {"nginx": [status_tag("1.25", finished_ago=100), status_tag("1.26", finished_ago=10)]},
    )
    plan = prune_spec(ni, NOW, jobs(warm="uid-warm"), SECRETS)
    assert plan.spec is None and plan.requeue_after == pytest.approx(200.0)


def test_a_nearly_due_ttl_reports_the_exact_wait():
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", ttl=60)]}}, {"nginx": [status_tag("1", finished_ago=58)]}
    )
    # raising it to the 3-5 s minimum is requeue_delay's job, once spec and status waits are merged
    assert prune_spec(ni, NOW, jobs(warm="uid-warm"), SECRETS).requeue_after == pytest.approx(2.0)


@pytest.mark.parametrize(
    "status",
    [None, status_tag("1"), status_tag("1", finished_ago=9999, version=0)],
    ids=["no-status", "still-pulling", "finished-at-an-older-version"],
)
def test_the_ttl_counts_only_from_a_finish_at_the_tags_version(status):
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", ttl=1, version=1)]}}, {"nginx": [status] if status else []}
    )
    plan = prune_spec(ni, NOW, jobs(warm="uid-warm"), SECRETS)
    assert (plan.spec, plan.requeue_after) == (None, None)


def test_a_tag_without_created_at_goes():
    ni = node_image({"nginx": {"tags": [spec_tag("1", created=False), spec_tag("2")]}})
    plan = prune_spec(ni, NOW, jobs(warm="uid-warm"), SECRETS)
    assert [t["tag"] for t in plan.spec["images"]["nginx"]["tags"]] == ["2"]
    assert plan.reasons == ["image nginx:1 has no createdAt field"]


@pytest.mark.parametrize("live", [{}, {"warm": "uid-recreated"}], ids=["deleted", "recreated"])
def test_a_tag_whose_jobs_are_all_gone_goes(live):
    plan = prune_spec(node_image({"nginx": {"tags": [spec_tag("1")]}}), NOW, jobs(**live), SECRETS)
    assert plan.spec == {"images": {}}
    assert plan.reasons == ["image nginx:1 owners are all gone", "no longer has nginx image spec"]


def test_a_gone_job_is_dropped_from_the_owners_of_a_shared_tag():
    second = {**JOB, "name": "warm-2", "uid": "uid-2"}
    plan = prune_spec(
        node_image({"nginx": {"tags": [spec_tag("1", owners=(JOB, second))]}}),
        NOW,
        jobs(warm="uid-warm"),
        SECRETS,
    )
    assert plan.spec["images"]["nginx"]["tags"][0]["ownerReferences"] == [JOB]
    assert plan.reasons == ["image nginx:1 lost 1 owner(s)"]


def test_owners_of_other_kinds_and_tags_without_owners_are_kept():
    ni = node_image({"nginx": {"tags": [spec_tag("1", owners=(OTHER,)), spec_tag("2", owners=())]}})
    assert prune_spec(ni, NOW, jobs(), SECRETS).spec is None
    assert live_owners([OTHER, JOB], jobs()) == [OTHER]


def test_kept_tags_are_sorted_by_name_when_the_spec_is_rewritten():
    tags = [spec_tag("b"), spec_tag("x", created=False), spec_tag("a")]
    plan = prune_spec(node_image({"nginx": {"tags": tags}}), NOW, jobs(warm="uid-warm"), SECRETS)
    assert [t["tag"] for t in plan.spec["images"]["nginx"]["tags"]] == ["a", "b"]


@given(
    ttl=hs.integers(min_value=0, max_value=10_000),
    ago=hs.integers(min_value=0, max_value=20_000),
)
def test_a_tag_goes_exactly_when_its_ttl_has_elapsed(ttl, ago):
    ni = node_image(
        {"nginx": {"tags": [spec_tag("1", ttl=ttl)]}}, {"nginx": [status_tag("1", finished_ago=ago)]}
    )
    plan = prune_spec(ni, NOW, jobs(warm="uid-warm"), SECRETS)
    if ago >= ttl:
        assert plan.spec == {"images": {}} and plan.requeue_after is None
    else:
        assert plan.spec is None
        assert plan.requeue_after == pytest.approx(ttl - ago)


def secrets(*present):
    """A Secret lookup over `namespace/name` strings."""
    return lambda namespace, name: f"{namespace}/{name}" in present


def test_pull_secrets_whose_secret_is_gone_are_dropped_and_batch_ones_kept():
    refs = [
        {"namespace": "ns", "name": "here"},
        {"namespace": "ns", "name": "gone"},
        {"namespace": "kruise-daemon-config", "name": "synced", "mode": "batch"},
    ]
    ni = node_image({"nginx": {"pullSecrets": refs, "tags": [spec_tag("1")]}})
    plan = prune_spec(ni, NOW, jobs(warm="uid-warm"), secrets("ns/here"))
    assert plan.spec["images"]["nginx"]["pullSecrets"] == [refs[0], refs[2]]
    assert plan.reasons == ["image nginx lost 1 pull secret(s)"]


def test_an_emptied_pull_secret_list_is_left_out():
    ni = node_image(
        {"nginx": {"pullSecrets": [{"namespace": "ns", "name": "gone"}], "tags": [spec_tag("1")]}}
    )
    plan = prune_spec(ni, NOW, jobs(warm="uid-warm"), secrets())
    assert plan.spec == {"images": {"nginx": {"tags": [spec_tag("1")]}}}


def test_present_pull_secrets_change_nothing():
    ni = node_image(
        {"nginx": {"pullSecrets": [{"namespace": "ns", "name": "here"}], "tags": [spec_tag("1")]}}
    )
    assert prune_spec(ni, NOW, jobs(warm="uid-warm"), secrets("ns/here")).spec is None
