"""`kruise.control.nodeimage.modes.plan_spec`: v1beta1 `mode: batch` pull secret references,
seen at v1alpha1 through the conversion-data annotation, are kept, and the annotation written with
the spec still gives a v1beta1 reader the right modes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as hs

from kruise.api.conversion import STASH_ANNOTATION, convert
from kruise.api.timestamps import rfc3339
from kruise.control.nodeimage.modes import V1ALPHA1, V1BETA1, plan_spec

NOW = datetime(2026, 11, 22, 23, 0, tzinfo=UTC)
JOB = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "namespace": "ns", "name": "warm",
       "uid": "uid-warm"}  # fmt: skip


def jobs(namespace, name):
    return "uid-warm" if (namespace, name) == ("ns", "warm") else None


def secrets(*present):
    """A Secret lookup over `namespace/name` strings."""
    return lambda namespace, name: f"{namespace}/{name}" in present


def tag(name, *, ttl=None):
    created = rfc3339(NOW - timedelta(hours=1))
    body = {"tag": name, "version": 0, "createdAt": created, "ownerReferences": [JOB]}
    if ttl is not None:
        body["pullPolicy"] = {"ttlSecondsAfterFinished": ttl}
    return body


def ref(name, mode=None):
    body = {"namespace": "ns", "name": name}
    if mode is not None:
        body["mode"] = mode
    return body


def beta(images, annotations=None, statuses=None):
    """A NodeImage as written at v1beta1."""
    meta = {"name": "node-1"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": V1BETA1,
        "kind": "NodeImage",
        "metadata": meta,
        "spec": {"images": images},
        "status": {"imageStatuses": statuses or {}},
    }


def stored(beta_obj):
    """What the manager reads: the object converted to v1alpha1 as the conversion webhook does."""
    return convert(beta_obj, V1ALPHA1)


def written(read, plan):
    """The object the controller PUTs (as the reconciler builds it)."""
    meta = {k: v for k, v in read["metadata"].items() if k != "annotations"}
    annotations = read["metadata"].get("annotations") if plan.annotations is None else plan.annotations
    if annotations:
        meta["annotations"] = annotations
    return {**read, "metadata": meta, "spec": plan.spec}


def beta_secrets(obj, image="nginx"):
    return convert(obj, V1BETA1)["spec"]["images"][image].get("pullSecrets")


def test_a_batch_reference_to_a_missing_secret_is_kept_and_keeps_its_mode():
    read = stored(beta({"nginx": {"pullSecrets": [ref("b", "batch"), ref("n")], "tags": [tag("1")]}}))
    assert "mode" not in json.dumps(read["spec"])  # v1alpha1 has no mode; the annotation holds it
    plan = plan_spec(read, NOW, jobs, secrets())
    assert plan.spec["images"]["nginx"]["pullSecrets"] == [ref("b")]
    assert plan.reasons == ["image nginx lost 1 pull secret(s)"]
    assert beta_secrets(written(read, plan)) == [ref("b", "batch")]


def test_modes_of_the_remaining_references_follow_them_to_their_new_places():
    refs = [ref("a", "batch"), ref("gone"), ref("c", "batch"), ref("here"), ref("also-gone")]
    read = stored(beta({"nginx": {"pullSecrets": refs, "tags": [tag("1")]}}))
    plan = plan_spec(read, NOW, jobs, secrets("ns/here"))
    assert plan.spec["images"]["nginx"]["pullSecrets"] == [ref("a"), ref("c"), ref("here")]
    assert beta_secrets(written(read, plan)) == [ref("a", "batch"), ref("c", "batch"), ref("here")]


def test_no_mode_left_means_no_annotation_and_other_annotations_stay():
    read = stored(
        beta(
            {
                "nginx": {"pullSecrets": [ref("b", "batch")], "tags": [tag("1", ttl=10)]},
                "redis": {"tags": [tag("7")]},
            },
            annotations={"team": "infra"},
            statuses={"nginx": {"tags": [{"tag": "1", "version": 0, "phase": "Succeeded",
                                          "completionTime": rfc3339(NOW - timedelta(minutes=1))}]}},
        )
    )  # fmt: skip
    assert STASH_ANNOTATION in read["metadata"]["annotations"]
    plan = plan_spec(read, NOW, jobs, secrets())
    assert list(plan.spec["images"]) == ["redis"]  # the TTL took nginx, batch reference and all
    assert plan.annotations == {"team": "infra"}


def test_an_annotation_the_conversion_created_goes_entirely_with_the_last_mode():
    images = {"nginx": {"pullSecrets": [ref("b", "batch")], "tags": [tag("1")]}, "x": {"tags": []}}
    read = stored(beta(images))
    plan = plan_spec(read, NOW, jobs, secrets())
    assert list(plan.spec["images"]) == ["nginx"]
    assert plan.annotations is None  # nginx's list is unchanged, so is its stash entry
    read = stored(beta({"nginx": {"pullSecrets": [ref("b", "batch")], "tags": [tag("1", ttl=0)]}},
                       statuses={"nginx": {"tags": [{"tag": "1", "version": 0, "phase": "Succeeded",
                                                     "completionTime": rfc3339(NOW)}]}}))  # fmt: skip
    plan = plan_spec(read, NOW, jobs, secrets())
    assert plan.spec["images"] == {}
    assert plan.annotations == {}


def test_a_tag_change_keeps_the_modes_of_untouched_lists():
    read = stored(
        beta({"nginx": {"pullSecrets": [ref("b", "batch"), ref("here")], "tags": [tag("1"), tag("2")]}})
    )
    read["spec"]["images"]["nginx"]["tags"][1].pop("createdAt")
    plan = plan_spec(read, NOW, jobs, secrets("ns/here"))
    assert [t["tag"] for t in plan.spec["images"]["nginx"]["tags"]] == ["1"]
    assert plan.annotations is None
    assert beta_secrets(written(read, plan)) == [ref("b", "batch"), ref("here")]


def test_a_stash_a_client_outdated_gives_no_modes():
    """A v1alpha1 client changed the list: the conversion no longer applies the entry, so neither
    does the controller, and the rewritten annotation drops it."""
    read = stored(beta({"nginx": {"pullSecrets": [ref("b", "batch")], "tags": [tag("1")]}}))
    read["spec"]["images"]["nginx"]["pullSecrets"] = [ref("b"), ref("new")]
    plan = plan_spec(read, NOW, jobs, secrets())
    assert "pullSecrets" not in plan.spec["images"]["nginx"]
    assert plan.annotations == {}


def test_an_unreadable_annotation_is_left_alone_and_references_count_as_plain():
    read = stored(beta({"nginx": {"pullSecrets": [ref("b"), ref("here")], "tags": [tag("1")]}}))
    read["metadata"]["annotations"] = {STASH_ANNOTATION: "{not json"}
    plan = plan_spec(read, NOW, jobs, secrets("ns/here"))
    assert plan.spec["images"]["nginx"]["pullSecrets"] == [ref("here")]
    assert plan.annotations is None


def test_an_object_without_apiversion_is_taken_as_v1alpha1():
    read = stored(beta({"nginx": {"pullSecrets": [ref("b", "batch"), ref("n")], "tags": [tag("1")]}}))
    del read["apiVersion"], read["kind"]
    plan = plan_spec(read, NOW, jobs, secrets())
    assert plan.spec["images"]["nginx"]["pullSecrets"] == [ref("b")]
    assert STASH_ANNOTATION in plan.annotations


def test_an_object_read_at_v1beta1_is_pruned_on_its_own_modes():
    obj = beta({"nginx": {"pullSecrets": [ref("b", "batch"), ref("n")], "tags": [tag("1")]}})
    plan = plan_spec(obj, NOW, jobs, secrets())
    assert plan.spec["images"]["nginx"]["pullSecrets"] == [ref("b", "batch")]
    assert plan.annotations is None


REFS = hs.lists(
    hs.tuples(hs.sampled_from(["a", "b", "c", "d"]), hs.sampled_from([None, "batch"]), hs.booleans()),
    max_size=6,
)


@given(REFS)
def test_a_v1beta1_reader_sees_exactly_upstreams_result(entries):
    """Whatever the mix, reading the written object at v1beta1 gives what upstream's controller
    leaves: the batch references and those whose Secret exists, in order, with their modes."""
    refs = [ref(f"{name}{i}", mode) for i, (name, mode, _) in enumerate(entries)]
    present = {f"ns/{name}{i}" for i, (name, _, exists) in enumerate(entries) if exists}
    image = {"tags": [tag("1")], **({"pullSecrets": refs} if refs else {})}
    read = stored(beta({"nginx": image}))
    plan = plan_spec(read, NOW, jobs, secrets(*present))
    expected = [r for r in refs if r.get("mode") == "batch" or f"ns/{r['name']}" in present]
    if len(expected) == len(refs):
        assert plan.spec is None
        return
    assert (beta_secrets(written(read, plan)) or []) == expected
