"""Gate StatefulSetAutoDeletePVC (beta, on): the controller acts on
``persistentVolumeClaimRetentionPolicy``; off, it ignores the policy and always retains claims,
as upstream skips every retention step then."""

from __future__ import annotations

import pytest
from test_statefulset_reconciler import NS, Harness, statefulset

from kruise.api.features import STATEFULSET_AUTO_DELETE_PVC, WITHOUT_EFFECT, FeatureGates
from kruise.control.statefulset.pods import retention_policy
from kruise.kube.resources import PODS, PVCS
from kruise.manager.controllers.statefulset.reconciler import STALE_CLAIM_REQUEUE

CLAIM = {
    "metadata": {"name": "data"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}
DELETE_BOTH = {"whenDeleted": "Delete", "whenScaled": "Delete"}


def _gates(on: bool) -> FeatureGates:
    return FeatureGates({STATEFULSET_AUTO_DELETE_PVC: on}, env={})


def test_gate_is_on_by_default_and_has_effect() -> None:
    assert FeatureGates(env={}).enabled(STATEFULSET_AUTO_DELETE_PVC)
    assert STATEFULSET_AUTO_DELETE_PVC not in WITHOUT_EFFECT


@pytest.mark.parametrize(("on", "expected"), [(True, DELETE_BOTH), (False, {})])
def test_retention_policy_is_ignored_with_the_gate_off(on, expected) -> None:
    sts = statefulset(persistentVolumeClaimRetentionPolicy=DELETE_BOTH)
    assert retention_policy(sts, auto_delete_pvc=on) == expected


@pytest.mark.parametrize(("on", "owners"), [(True, ["web"]), (False, [])])
async def test_when_deleted_delete_owns_new_claims_by_the_set_only_with_the_gate(on, owners) -> None:
    sts = statefulset(
        replicas=1, volumeClaimTemplates=[CLAIM], persistentVolumeClaimRetentionPolicy=DELETE_BOTH
    )
    h = Harness(sts, _gates(on))
    await h.reconcile()
    pvc = h.client.object(PVCS, "data-web-0", NS)
    assert [o["name"] for o in pvc["metadata"].get("ownerReferences") or []] == owners


@pytest.mark.parametrize(("on", "deleted"), [(True, True), (False, False)])
async def test_when_scaled_delete_removes_the_claims_of_scaled_in_pods_only_with_the_gate(
    on, deleted
) -> None:
    spec = {
        "podManagementPolicy": "Parallel",
        "volumeClaimTemplates": [CLAIM],
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Delete"},
    }
    h = Harness(statefulset(replicas=2, **spec), _gates(on))
    await h.reconcile()
    h.observe_pods()
    for name in ("web-0", "web-1"):
        h.make_ready(name)
    h.pvcs.add(*h.client.objects(PVCS))

    h.sets.add(statefulset(replicas=1, **spec))
    h.client.clear()
    await h.reconcile()
    assert ("delete", "web-1") in [(c.verb, c.name) for c in h.client.writes if c.resource == PODS]
    claim_deletes = [c.name for c in h.client.writes if c.resource == PVCS and c.verb == "delete"]
    assert claim_deletes == (["data-web-1"] if deleted else [])


def _claim_writes(h: Harness) -> list[tuple[str, str]]:
    return [(c.verb, c.name) for c in h.client.writes if c.resource == PVCS]


def _owner_names(h: Harness, name: str) -> list[str]:
    claim = h.client.object(PVCS, name, NS)
    return [o["name"] for o in claim["metadata"].get("ownerReferences") or []]


async def _two_ready_pods(spec: dict) -> Harness:
    h = Harness(statefulset(replicas=2, **spec))
    await h.reconcile()
    h.observe_pods()
    for name in ("web-0", "web-1"):
        h.make_ready(name)
    return h


async def test_a_policy_change_realigns_the_claims_of_live_pods_once() -> None:
    spec = {
        "podManagementPolicy": "Parallel",
        "volumeClaimTemplates": [CLAIM],
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    }
    h = await _two_ready_pods(spec)
    assert _owner_names(h, "data-web-0") == _owner_names(h, "data-web-1") == []

    h.sets.add(statefulset(replicas=2, **{**spec, "persistentVolumeClaimRetentionPolicy": DELETE_BOTH}))
    h.client.clear()
    await h.reconcile()
    assert _claim_writes(h) == [("update", "data-web-0"), ("update", "data-web-1")]
    assert _owner_names(h, "data-web-0") == _owner_names(h, "data-web-1") == ["web"]

    h.client.clear()
    await h.reconcile()
    assert _claim_writes(h) == []  # claims that match are not written

    h.sets.add(statefulset(replicas=2, **spec))
    await h.reconcile()
    assert _claim_writes(h) == [("update", "data-web-0"), ("update", "data-web-1")]
    assert _owner_names(h, "data-web-0") == _owner_names(h, "data-web-1") == []


async def test_condemned_pods_take_over_their_claims_before_they_are_removed() -> None:
    spec = {
        "podManagementPolicy": "Parallel",
        "volumeClaimTemplates": [CLAIM],
        "persistentVolumeClaimRetentionPolicy": DELETE_BOTH,
    }
    h = await _two_ready_pods(spec)
    web_1 = h.client.object(PODS, "web-1", NS)
    h.sets.add(statefulset(replicas=1, **spec))
    h.client.clear()
    await h.reconcile()
    writes = [(c.verb, c.resource, c.name) for c in h.client.writes if c.resource in (PODS, PVCS)]
    assert writes == [
        ("update", PVCS, "data-web-1"),
        ("delete", PODS, "web-1"),
        ("delete", PVCS, "data-web-1"),
    ]
    updated = h.client.calls_to("update", PVCS, "data-web-1")[0].body
    [owner] = updated["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("Pod", "web-1", web_1["metadata"]["uid"])
    assert _owner_names(h, "data-web-0") == ["web"]


async def test_claim_owners_are_left_alone_with_the_gate_off() -> None:
    spec = {
        "podManagementPolicy": "Parallel",
        "volumeClaimTemplates": [CLAIM],
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    }
    h = Harness(statefulset(replicas=1, **spec), _gates(False))
    await h.reconcile()
    h.observe_pods()
    h.make_ready("web-0")
    h.sets.add(statefulset(replicas=1, **{**spec, "persistentVolumeClaimRetentionPolicy": DELETE_BOTH}))
    h.client.clear()
    await h.reconcile()
    assert _claim_writes(h) == []


async def test_a_claim_still_owned_by_an_earlier_pod_blocks_the_new_pod_until_it_is_gone() -> None:
    spec = {"volumeClaimTemplates": [CLAIM], "persistentVolumeClaimRetentionPolicy": DELETE_BOTH}
    h = Harness(statefulset(replicas=1, **spec))
    stale = {
        "metadata": {
            "name": "data-web-0",
            "namespace": NS,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web-0", "uid": "gone-pod"}],
        },
        "spec": CLAIM["spec"],
    }
    h.client.put(PVCS, stale)
    h.pvcs.add(h.client.object(PVCS, "data-web-0", NS))
    result = await h.reconcile()
    assert h.pod_writes() == []
    assert _claim_writes(h) == []
    assert result is not None and result.requeue_after == STALE_CLAIM_REQUEUE

    # the garbage collector removes the claim: the pod and a fresh claim are created
    await h.client.delete(PVCS, "data-web-0", NS)
    h.client.clear()
    await h.reconcile()
    assert h.pod_writes() == [("create", "web-0")]
    assert _claim_writes(h) == [("create", "data-web-0")]
