"""Pure parts of the simulator's StatefulSet controller: identity, storage, retention, revisions."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kruise.sandbox.simulator.statefulset import max_unavailable
from kruise.sandbox.simulator.statefulset_history import (
    HASH_LABEL,
    equal_revisions,
    new_revision,
    revision_data,
    template_of,
    to_prune,
)
from kruise.sandbox.simulator.statefulset_pods import (
    claim_owner_changes,
    claims_for,
    new_pod,
    ordinal_of,
    ordinal_range,
)

Obj = dict[str, Any]


def sts(**spec: Any) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "ns", "uid": "set-uid"},
        "spec": {
            "replicas": 2,
            "serviceName": "svc",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx"}],
                    "volumes": [{"name": "data", "emptyDir": {}}, {"name": "cfg", "emptyDir": {}}],
                },
            },
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
            ],
            **spec,
        },
    }


@pytest.mark.parametrize(
    ("name", "ordinal"),
    [("web-0", 0), ("web-12", 12), ("web-a", None), ("web", None), ("webx-1", None), ("web-1-2", None)],
)
def test_ordinal_of_only_parses_the_sets_own_names(name: str, ordinal: int | None):
    assert ordinal_of({"metadata": {"name": name}}, "web") == ordinal


@given(start=st.integers(0, 1000), replicas=st.integers(0, 50))
def test_ordinal_range_starts_at_ordinals_start(start: int, replicas: int):
    wanted = ordinal_range(sts(replicas=replicas, ordinals={"start": start}))
    assert list(wanted) == list(range(start, start + replicas))


def test_new_pod_identity_and_claim_volume_replacing_the_template_volume():
    pod = new_pod(sts(), sts()["spec"]["template"], 3, "web-abc")
    meta = pod["metadata"]
    assert meta["name"] == "web-3" and meta["generateName"] == "web-"
    assert meta["labels"] == {
        "app": "web",
        "statefulset.kubernetes.io/pod-name": "web-3",
        "apps.kubernetes.io/pod-index": "3",
        "controller-revision-hash": "web-abc",
    }
    assert pod["spec"]["hostname"] == "web-3" and pod["spec"]["subdomain"] == "svc"
    assert pod["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-3"}},
        {"name": "cfg", "emptyDir": {}},
    ]
    assert meta["ownerReferences"][0]["uid"] == "set-uid"


def test_claims_carry_the_selector_labels():
    (claim,) = claims_for(sts(), 1)
    assert claim["metadata"] == {"name": "data-web-1", "namespace": "ns", "labels": {"app": "web"}}
    assert claim["kind"] == "PersistentVolumeClaim"


@pytest.mark.parametrize(
    ("when_deleted", "when_scaled", "ordinal", "owners"),
    [
        ("Retain", "Retain", 0, []),
        ("Delete", "Retain", 0, ["StatefulSet"]),
        ("Delete", "Retain", 5, ["StatefulSet"]),
        ("Retain", "Delete", 0, []),
        ("Retain", "Delete", 5, ["Pod"]),
        ("Delete", "Delete", 0, ["StatefulSet"]),
        ("Delete", "Delete", 5, ["Pod"]),
    ],
)
def test_retention_policy_owner_references(
    when_deleted: str, when_scaled: str, ordinal: int, owners: list[str]
):
    policy = {"whenDeleted": when_deleted, "whenScaled": when_scaled}
    owner = sts(persistentVolumeClaimRetentionPolicy=policy)
    pod = {"metadata": {"name": f"web-{ordinal}", "uid": "pod-uid"}}
    claim = claims_for(owner, ordinal)[0]
    refs = claim_owner_changes(owner, claim, pod, ordinal)
    assert [r["kind"] for r in refs or []] == owners
    claim["metadata"]["ownerReferences"] = refs or []
    assert claim_owner_changes(owner, claim, pod, ordinal) is None  # settled: nothing more to change


def test_revision_round_trip_and_reuse():
    owner = sts()
    revision = new_revision(owner, 4, 0)
    assert revision["metadata"]["name"] == f"web-{revision['metadata']['labels'][HASH_LABEL]}"
    assert revision["revision"] == 4 and revision["metadata"]["labels"]["app"] == "web"
    assert revision["data"]["spec"]["template"]["$patch"] == "replace"
    assert template_of(revision) == owner["spec"]["template"]
    assert new_revision(owner, 4, 1)["metadata"]["name"] != revision["metadata"]["name"]
    other = new_revision(sts(template={"metadata": {"labels": {"app": "web"}}, "spec": {}}), 5, 0)
    assert equal_revisions([other, revision], revision_data(owner)) == [revision]


def test_pruning_keeps_live_and_the_newest_history():
    revisions = [{"metadata": {"name": f"r{i}"}, "revision": i} for i in range(1, 6)]
    assert [r["metadata"]["name"] for r in to_prune(revisions, {"r1", "r5"}, 1)] == ["r2", "r3"]
    assert to_prune(revisions, set(), 10) == []


@pytest.mark.parametrize(
    ("raw", "replicas", "expected"), [(None, 5, None), (2, 5, 2), ("40%", 5, 2), ("1%", 5, 1), (0, 5, 1)]
)
def test_max_unavailable(raw: Any, replicas: int, expected: int | None):
    rolling = {} if raw is None else {"maxUnavailable": raw}
    owner = sts(updateStrategy={"type": "RollingUpdate", "rollingUpdate": rolling})
    assert max_unavailable(owner, replicas) == expected
