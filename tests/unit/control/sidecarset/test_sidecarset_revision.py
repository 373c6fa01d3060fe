"""SidecarSet ControllerRevisions: data, naming, latest choice, pruning, and injection of a history."""

from __future__ import annotations

import copy
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.api.keys import (
    ANNOTATION_SIDECARSET_HASH,
    ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
    LABEL_CONTROLLER_HASH,
    LABEL_SIDECARSET_CUSTOM_VERSION,
)
from kruise.control.common.revision import go_json, hash_revision_data
from kruise.control.sidecarset import revision as rev
from kruise.control.sidecarset.injection import inject
from tests.unit.control.sidecarset.sidecar_builders import LOG_VOLUME, SIDECAR1, app_pod, sidecarset

NS = "kruise-system"


def _set(image: str = "busybox", **spec):
    containers = [{**SIDECAR1, "image": image}]
    body = sidecarset("test-sidecarset", containers, volumes=[LOG_VOLUME], **spec)
    body["metadata"]["uid"] = "uid-1"
    return body


def _stored(sidecarset_obj, number: int, created: str = "2024-01-01T00:00:00Z"):
    """A revision as the apiserver would hand it back."""
    body = rev.new_revision(sidecarset_obj, NS, number, 0)
    body["metadata"]["creationTimestamp"] = created
    return body


def test_data_is_the_go_encoded_sidecar_part_of_the_spec():
    simple = sidecarset("s", [{"name": "sidecar1", "image": "busybox"}])
    simple["spec"]["containers"] = [{"name": "sidecar1", "image": "busybox"}]
    assert go_json(rev.revision_data(simple)) == (
        b'{"spec":{"$patch":"replace","containers":[{"image":"busybox","name":"sidecar1","resources":{},'
        b'"shareVolumePolicy":{},"upgradeStrategy":{}}],"imagePullSecrets":null,"initContainers":null,'
        b'"patchPodMetadata":null,"volumes":null}}'
    )


def test_data_ignores_everything_outside_the_sidecars():
    one = _set()
    other = _set(updateStrategy={"type": "NotUpdate"})
    other["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    assert rev.revision_data(one) == rev.revision_data(other)
    assert rev.revision_data(one) != rev.revision_data(_set(image="busybox:1.35.0"))


def test_new_revision_name_labels_annotations_and_owner():
    body = _set(metadata={"labels": {LABEL_SIDECARSET_CUSTOM_VERSION: "v1", "team": "a"}})
    body["metadata"]["uid"] = "uid-1"
    revision = rev.new_revision(body, NS, 3, 0)
    hash_ = hash_revision_data(go_json(revision["data"]), 0)
    meta = revision["metadata"]
    assert meta["name"] == f"test-sidecarset-{hash_}" and meta["namespace"] == NS
    assert meta["labels"] == {
        LABEL_SIDECARSET_CUSTOM_VERSION: "v1",
        "team": "a",
        LABEL_CONTROLLER_HASH: hash_,
        rev.LABEL_SIDECARSET_NAME: "test-sidecarset",
    }
    assert (
        meta["annotations"][ANNOTATION_SIDECARSET_HASH]
        == body["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH]
    )
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "SidecarSet",
            "name": "test-sidecarset",
            "uid": "uid-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert revision["revision"] == 3
    assert rev.new_revision(body, NS, 3, 1)["metadata"]["name"] != meta["name"]


def test_custom_version_from_v1beta1_spec_wins_over_label():
    body = _set(metadata={"labels": {LABEL_SIDECARSET_CUSTOM_VERSION: "old"}})
    assert rev.custom_version(body) == "old"
    body["spec"]["customVersion"] = "new"
    assert rev.custom_version(body) == "new"


def test_owned_revisions_filters_namespace_name_and_controller():
    body = _set()
    mine = _stored(body, 1)
    orphan = copy.deepcopy(_stored(_set(image="b:2"), 2))
    orphan["metadata"]["ownerReferences"] = []
    foreign = copy.deepcopy(_stored(_set(image="b:3"), 3))
    foreign["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    elsewhere = copy.deepcopy(_stored(_set(image="b:4"), 4))
    elsewhere["metadata"]["namespace"] = "default"
    other_name = copy.deepcopy(_stored(_set(image="b:5"), 5))
    other_name["metadata"]["labels"][rev.LABEL_SIDECARSET_NAME] = "x"
    owned = rev.owned_revisions(body, [orphan, foreign, elsewhere, other_name, mine], NS)
    assert [r["revision"] for r in owned] == [1, 2]


def test_choose_latest_reuse_rollback_create():
    v1, v2 = _set(), _set(image="busybox:1.35.0")
    r1, r2 = _stored(v1, 1), _stored(v2, 2)
    assert rev.choose_latest(v1, [], NS, 0).action == "create"
    reuse = rev.choose_latest(v2, [r1, r2], NS, 0)
    assert reuse.action == "reuse" and reuse.revision is r2
    back = rev.choose_latest(v1, [r1, r2], NS, 0)
    assert back.action == "rollback" and back.revision is r1 and back.number == 3
    new = rev.choose_latest(_set(image="busybox:2"), [r1, r2], NS, 0)
    assert new.action == "create" and new.revision["revision"] == 3


def _pod_on(revision_name: str, set_name: str = "test-sidecarset"):
    record = {set_name: {"hash": "h", "sidecarSetName": set_name, "controllerRevision": revision_name}}
    return app_pod(metadata={"annotations": {ANNOTATION_SIDECARSET_HASH: json.dumps(record)}})


def test_pod_revision_reads_the_hash_record():
    assert rev.pod_revision(_pod_on("r-1"), "test-sidecarset") == "r-1"
    assert rev.pod_revision(_pod_on("r-1"), "other") == ""
    assert (
        rev.pod_revision(app_pod(metadata={"annotations": {ANNOTATION_SIDECARSET_HASH: "{bad"}}), "x") == ""
    )
    assert rev.pod_revision(app_pod(), "test-sidecarset") == ""


def _history(count: int):
    return [_stored(_set(image=f"busybox:{i}"), i) for i in range(1, count + 1)]


def test_truncate_counts_all_revisions_and_keeps_used_ones():
    body = _set(revisionHistoryLimit=2)
    history = _history(5)
    names = [r["metadata"]["name"] for r in history]
    assert rev.revisions_to_delete(body, history, []) == names[:3]
    used = rev.revisions_to_delete(body, history, [_pod_on(names[0])])
    assert used == names[1:4]
    # everything but the newest is in use: nothing can go, history stays above the limit
    pods = [_pod_on(n) for n in names[:4]]
    assert rev.revisions_to_delete(body, history, pods) == []


def test_truncate_keeps_injection_revisions_and_minimum_of_one():
    history = _history(4)
    names = [r["metadata"]["name"] for r in history]
    history[1]["metadata"]["labels"][LABEL_SIDECARSET_CUSTOM_VERSION] = "v2"
    body = _set(
        revisionHistoryLimit=0,
        injectionStrategy={"revision": {"revisionName": names[0], "customVersion": "v2"}},
    )
    assert rev.revisions_to_delete(body, history, []) == [names[2]]
    assert rev.revisions_to_delete(_set(revisionHistoryLimit=10), history, []) == []


@given(limit=st.integers(min_value=0, max_value=8), count=st.integers(min_value=0, max_value=8))
def test_truncate_never_deletes_newest_and_respects_limit(limit, count):
    history = _history(count)
    doomed = rev.revisions_to_delete(_set(revisionHistoryLimit=limit), history, [])
    if history:
        assert history[-1]["metadata"]["name"] not in doomed
    assert len(history) - len(doomed) == min(count, max(1, limit))


def test_revision_for_injection_by_name_and_custom_version():
    history = _history(3)
    names = [r["metadata"]["name"] for r in history]
    for r in history[:2]:
        r["metadata"]["labels"][LABEL_SIDECARSET_CUSTOM_VERSION] = "v1"
    by_name = _set(injectionStrategy={"revision": {"revisionName": names[2]}})
    assert rev.revision_for_injection(by_name, history, NS) is history[2]
    by_version = _set(injectionStrategy={"revision": {"customVersion": "v1"}})
    assert rev.revision_for_injection(by_version, history, NS) is history[1]
    assert rev.revision_for_injection(_set(), history, NS) is None
    with pytest.raises(rev.RevisionNotFound, match=re.escape('controllerrevisions.apps "nope" not found')):
        rev.revision_for_injection(
            _set(injectionStrategy={"revision": {"revisionName": "nope"}}), history, NS
        )
    with pytest.raises(
        rev.RevisionNotFound, match=re.escape('ControllerRevision.apps "test-sidecarset" not found')
    ):
        rev.revision_for_injection(_set(injectionStrategy={"revision": {"customVersion": "v9"}}), history, NS)
    with pytest.raises(rev.RevisionNotFound):
        rev.revision_for_injection(by_name, history, "elsewhere")


def test_restore_brings_back_sidecars_hashes_and_revision_name():
    old = _set()
    revision = _stored(old, 1)
    current = _set(image="busybox:1.35.0")
    restored = rev.restore(current, revision)
    assert restored["spec"]["containers"][0]["image"] == "busybox"
    assert restored["spec"]["volumes"] == [LOG_VOLUME]
    assert "selector" not in restored["spec"] and "imagePullSecrets" not in restored["spec"]
    for key in (ANNOTATION_SIDECARSET_HASH, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE):
        assert restored["metadata"]["annotations"][key] == old["metadata"]["annotations"][key]
    assert restored["status"]["latestRevision"] == revision["metadata"]["name"]
    assert current["spec"]["containers"][0]["image"] == "busybox:1.35.0"  # input untouched


def test_restore_without_recorded_hashes_recomputes_them():
    old = _set()
    revision = _stored(old, 1)
    revision["metadata"].pop("annotations")
    restored = rev.restore(_set(image="busybox:2"), revision)
    assert (
        restored["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH]
        == (old["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH])
    )


def _with_strategy(policy: str | None, **update):
    body = _set(image="busybox:1.35.0", updateStrategy=update)
    body["spec"]["injectionStrategy"] = {"revision": {"revisionName": "OLD", "policy": policy}}
    return body


def _choose(body, the_pod, draw=0.5):
    old = _stored(_set(), 1)
    old["metadata"]["name"] = "OLD"
    chosen = rev.sidecarset_for_new_pod(body, the_pod, [old], NS, lambda: draw)
    return chosen["spec"]["containers"][0]["image"]


def test_new_pod_version_by_policy():
    assert _choose(_set(image="busybox:1.35.0"), app_pod()) == "busybox:1.35.0"
    assert _choose(_with_strategy("Always"), app_pod()) == "busybox"
    assert _choose(_with_strategy(None), app_pod()) == "busybox"
    assert _choose(_with_strategy("Partial", paused=True, partition="0%"), app_pod()) == "busybox"
    canary = {"matchLabels": {"canary": "true"}}
    assert _choose(_with_strategy("Partial", selector=canary), app_pod()) == "busybox"
    assert (
        _choose(_with_strategy("Partial", selector=canary), app_pod(labels={"canary": "true"}))
        == "busybox:1.35.0"
    )
    assert _choose(_with_strategy("Partial", partition=2), app_pod()) == "busybox:1.35.0"
    assert _choose(_with_strategy("Partial", partition="60%"), app_pod(), draw=0.6) == "busybox"
    assert _choose(_with_strategy("Partial", partition="60%"), app_pod(), draw=0.61) == "busybox:1.35.0"


def test_partition_percentage_parsing():
    assert rev.partition_probability(None) is None and rev.partition_probability(3) is None
    assert rev.partition_probability("25%") == 0.25
    with pytest.raises(ValueError, match=r"spec\.updateStrategy\.partition"):
        rev.partition_probability("25")
    with pytest.raises(ValueError, match=r"spec\.updateStrategy\.partition"):
        rev.partition_probability("x%")


def test_injecting_a_history_records_its_revision_and_hash():
    old = _set()
    revision = _stored(old, 1)
    body = _set(image="busybox:1.35.0")
    body["spec"]["injectionStrategy"] = {"revision": {"revisionName": revision["metadata"]["name"]}}
    body["status"] = {"latestRevision": "test-sidecarset-latest"}
    chosen = rev.sidecarset_for_new_pod(body, app_pod(), [revision], NS, lambda: 0.0)
    target = app_pod()
    assert inject(target, [dict(chosen)])
    assert [c["image"] for c in target["spec"]["containers"]] == ["busybox", "nginx:1.7.9"]
    record = json.loads(target["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH])["test-sidecarset"]
    assert record["controllerRevision"] == revision["metadata"]["name"]
    assert record["hash"] == old["metadata"]["annotations"][ANNOTATION_SIDECARSET_HASH]
