"""CloneSet's volumeClaimTemplates hash and the RecreatePodWhenChangeVCTInCloneSetGate decision.

The expected hashes are upstream's own test vectors (pkg/util/volumeclaimtemplate), so a revision
written by a Go kruise-manager and one written here carry the same annotation.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.control.cloneset import predownload
from kruise.control.cloneset.diffs import calculate_diffs
from kruise.control.cloneset.update import UpdateKind, plan_update
from kruise.control.cloneset.vcthash import (
    can_update_in_place,
    expected_hash,
    revision_annotation,
    revision_hash,
    templates_json,
    vct_change_forces_recreate,
)
from kruise.control.common.revision import choose_revisions, new_cloneset_revision
from tests.kit.control_builders import NOW, build_cloneset, build_pod

KEY = "kruise.io/cloneset-volumeclaimtemplate-hash"
STATE = "lifecycle.apps.kruise.io/state"


def claim(name: str, request: str, limit: str | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"storage": request}}
    if limit is not None:
        resources["limits"] = {"storage": limit}
    return {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": resources}}


def revision(hash_: str | None) -> dict[str, Any]:
    annotations = {} if hash_ is None else {KEY: hash_}
    return {"metadata": {"name": "r", "annotations": annotations}}


@pytest.mark.parametrize(
    ("templates", "expected"),
    [
        (None, 86995377),
        ([], 86995377),
        ([claim("pvc-1", "1Gi", "2Gi")], 1129974074),
        ([claim("pvc-1", "1Gi", "2Gi"), claim("pvc-2", "2Gi", "4Gi")], 510584408),
        ([claim("pvc-2", "2Gi", "4Gi"), claim("pvc-1", "1Gi", "2Gi")], 510584408),
    ],
)
def test_hash_matches_upstream_vectors(templates: list | None, expected: int) -> None:
    assert expected_hash(templates) == expected


def test_encoding_is_go_struct_order_and_ignores_metadata_besides_name() -> None:
    template = claim("data", "1024Mi")
    template["metadata"]["labels"] = {"a": "b"}
    template["spec"] = {"storageClassName": "fast", **template["spec"], "volumeMode": "Filesystem"}
    assert templates_json([template]) == (
        b'[{"metadata":{"name":"data","creationTimestamp":null},"spec":{"accessModes":["ReadWriteOnce"],'
        b'"resources":{"requests":{"storage":"1Gi"}},"storageClassName":"fast","volumeMode":"Filesystem"},'
        b'"status":{}}]'
    )


@given(st.sampled_from(["1Gi", "2Gi", "10Gi", "500Mi"]), st.sampled_from(["1Gi", "2Gi", "10Gi", "500Mi"]))
def test_hash_changes_exactly_when_the_claim_spec_changes(a: str, b: str) -> None:
    assert (expected_hash([claim("data", a)]) == expected_hash([claim("data", b)])) == (a == b)


def test_revision_annotation_is_empty_without_templates() -> None:
    cs = build_cloneset()
    assert revision_annotation(cs) == ""
    cs["spec"]["volumeClaimTemplates"] = [claim("pvc-1", "1Gi", "2Gi")]
    assert revision_annotation(cs) == "1129974074"


@pytest.mark.parametrize(
    ("old", "new", "in_place"),
    [
        (None, None, True),
        (None, "11", True),
        ("11", None, True),
        ("", "", True),
        ("11", "11", True),
        ("", "11", False),
        ("11", "22", False),
    ],
)
def test_can_update_in_place_only_refuses_two_recorded_different_hashes(
    old: str | None, new: str | None, in_place: bool
) -> None:
    assert revision_hash(revision(old)) == old
    assert can_update_in_place(revision(old), revision(new)) is in_place


@pytest.mark.parametrize(
    ("gate", "update_type", "forced"),
    [
        (True, "InPlaceIfPossible", True),
        (True, "ReCreate", True),
        (True, "InPlaceOnly", False),
        (False, "InPlaceIfPossible", False),
    ],
)
def test_gate_and_in_place_only_decide_whether_a_hash_difference_counts(
    gate: bool, update_type: str, forced: bool
) -> None:
    cs = build_cloneset(type=update_type)
    old, same, other = revision("11"), revision("11"), revision("22")
    assert vct_change_forces_recreate(cs, old, other, recreate_on_vct_change=gate) is forced
    assert not vct_change_forces_recreate(cs, old, same, recreate_on_vct_change=gate)


def _revisions(cs: dict) -> tuple[dict, dict]:
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1"
    cs["spec"]["volumeClaimTemplates"] = [claim("data", "1Gi")]
    old = new_cloneset_revision(cs, 1, 0, revision_annotation(cs))
    cs["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    cs["spec"]["volumeClaimTemplates"] = [claim("data", "2Gi")]
    new = new_cloneset_revision(cs, 2, 0, revision_annotation(cs))
    return old, new


@pytest.mark.parametrize(("gate", "kind"), [(True, UpdateKind.RECREATE), (False, UpdateKind.IN_PLACE)])
def test_plan_update_recreates_on_vct_change_only_with_the_gate(gate: bool, kind: UpdateKind) -> None:
    cs = build_cloneset(2, type="InPlaceIfPossible", maxUnavailable=2)
    old, new = _revisions(cs)
    pods = []
    for i in range(2):
        pod = build_pod(f"p{i}", labels={STATE: "Normal"})
        pod["metadata"]["labels"]["controller-revision-hash"] = old["metadata"]["name"]
        pod["metadata"]["labels"]["pod-template-hash"] = old["metadata"]["name"].rsplit("-", 1)[-1]
        pods.append(pod)
    diffs = calculate_diffs(cs, pods, old["metadata"]["name"], new["metadata"]["name"], NOW)
    plan = plan_update(cs, pods, old, new, [old, new], diffs, NOW, recreate_on_vct_change=gate)
    assert [u.kind for u in plan.updates] == [kind, kind]
    assert all((u.spec is None) == (kind is UpdateKind.RECREATE) for u in plan.updates)


def test_predownload_is_ignored_when_the_gate_forces_recreate() -> None:
    cs = build_cloneset(10, type="InPlaceIfPossible", partition=5)
    old, new = _revisions(cs)
    assert predownload.decision(cs, old, new) == predownload.shared.CREATED
    assert predownload.decision(cs, old, new, recreate_on_vct_change=True) == predownload.shared.IGNORED


def test_choose_revisions_writes_hash_on_create_keeps_it_on_reuse_and_updates_it_on_rollback() -> None:
    v1 = build_cloneset()
    v1["spec"]["volumeClaimTemplates"] = [claim("data", "1Gi")]
    h1 = revision_annotation(v1)
    created = choose_revisions(v1, [], h1)
    assert created.action == "create" and created.update["metadata"]["annotations"][KEY] == h1
    r1 = new_cloneset_revision(v1, 1, 0, h1)

    # only the templates change: no new revision, the stored hash stays (as upstream)
    vct_only = copy.deepcopy(v1)
    vct_only["spec"]["volumeClaimTemplates"] = [claim("data", "5Gi")]
    reuse = choose_revisions(vct_only, [r1], revision_annotation(vct_only))
    assert reuse.action == "reuse" and reuse.annotations is None
    assert reuse.update["metadata"]["annotations"][KEY] == h1

    v2 = copy.deepcopy(v1)
    v2["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:3"
    r2 = new_cloneset_revision(v2, 2, 0, h1)
    same = choose_revisions(v1, [r1, r2], h1)
    assert same.action == "rollback" and same.annotations is None
    back = choose_revisions(vct_only, [r1, r2], revision_annotation(vct_only))
    assert back.action == "rollback"
    assert back.annotations is not None and back.annotations[KEY] == revision_annotation(vct_only)
    assert back.update["metadata"]["annotations"][KEY] == revision_annotation(vct_only)
    assert back.update["revision"] == 3
    assert r1["metadata"]["annotations"][KEY] == h1  # the stored object is not mutated
