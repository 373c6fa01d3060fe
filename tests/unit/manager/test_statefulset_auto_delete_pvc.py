"""Gate StatefulSetAutoDeletePVC (beta, on): the controller acts on
``persistentVolumeClaimRetentionPolicy``; off, it ignores the policy and always retains claims,
as upstream skips every retention step then."""

from __future__ import annotations

import pytest
from test_statefulset_reconciler import NS, Harness, statefulset

from kruise.api.features import STATEFULSET_AUTO_DELETE_PVC, WITHOUT_EFFECT, FeatureGates
from kruise.control.statefulset.pods import retention_policy
from kruise.kube.resources import PODS, PVCS

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
