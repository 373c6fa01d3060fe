"""Advanced StatefulSet resizing its claims with the rollout (gate StatefulSetAutoResizePVCGate,
``volumeClaimUpdateStrategy: OnPodRollingUpdate``), through the emulator.

Growing a claim template's storage during a rollout resizes each pod's claim right before the pod
is updated, highest ordinal first: the controller writes the template's size onto the claim
(annotated ``apps.kruise.io/owned-by-asts``, event ``SuccessfulResize``), counts the pod as
unavailable, and updates it only once the claim reports the new capacity. With
``volumeClaimUpdateStrategy: OnDelete`` or with the gate off the rollout leaves the claims alone.

Claims of the ``sandbox.kruise.io/volumes`` provisioner are bound and expanded by the simulator's
``volumes`` controller, as a CSI provisioner, the external resizer and the kubelet would; the happy
path and the cases that leave claims alone use it. The step-by-step test, which checks what the set
shows while a claim is resized but not yet expanded, names another provisioner and plays both parts
itself (marks each claim Bound, writes the grown capacity when it chooses), to hold that moment.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kruise.api.features import FeatureGates
from kruise.kube.errors import Conflict
from kruise.kube.resources import ADVANCED_STATEFULSETS, PVCS, STORAGE_CLASSES
from kruise.manager.controllers.statefulset import SETUP
from tests.integration.manager.test_statefulset_controller import (
    NS,
    events_of,
    get_sts,
    manifest,
    pods_of,
    settled,
    update_spec,
)

GATE = "StatefulSetAutoResizePVCGate"
SANDBOX_PROVISIONER = "sandbox.kruise.io/volumes"
TEST_PROVISIONER = "example.com/csi"  # no controller serves it: the test binds and resizes
OWNED_BY = "apps.kruise.io/owned-by-asts"
NAME = "web"
REPLICAS = 3


@pytest.fixture
def controller_setups():
    return [SETUP]


@pytest.fixture
def feature_gates(request):
    return FeatureGates({GATE: getattr(request, "param", True)}, env={})


def claim_template(storage_class: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": storage_class,
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }


async def get_claim(cluster, name: str) -> dict[str, Any]:
    return await cluster.client.get(PVCS, name, NS)


def requested(claim: dict[str, Any]) -> str:
    return claim["spec"]["resources"]["requests"]["storage"]


async def report_capacity(cluster, name: str, capacity: str) -> None:
    """Play the volume binder / resizer: the claim is Bound and its volume has `capacity`
    (retried on a conflict with the controller's own claim write)."""
    for _ in range(20):
        claim = copy.deepcopy(await get_claim(cluster, name))
        claim["status"] = {
            "phase": "Bound",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": capacity},
        }
        try:
            await cluster.client.update_status(PVCS, claim)
            return
        except Conflict:
            continue
    raise AssertionError(f"could not write the status of claim {name}")


def bound_at(claim: dict[str, Any], capacity: str) -> bool:
    status = claim.get("status") or {}
    return status.get("phase") == "Bound" and (status.get("capacity") or {}).get("storage") == capacity


async def claims_bound_at(cluster, capacity: str) -> None:
    for ordinal in range(REPLICAS):
        await cluster.until(
            lambda n=f"data-{NAME}-{ordinal}": get_claim(cluster, n), lambda c: bound_at(c, capacity)
        )


async def running(
    cluster, storage_class: str, claim_strategy: str, provisioner: str = SANDBOX_PROVISIONER
) -> dict[str, dict[str, Any]]:
    """A class, a 3-replica set whose claims are Bound at 1Gi (by the simulator, or by the test for
    ``TEST_PROVISIONER``), and its pods."""
    await cluster.client.create(
        STORAGE_CLASSES,
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": storage_class},
            "provisioner": provisioner,
            "allowVolumeExpansion": storage_class == "expandable",
        },
    )
    body = manifest(NAME, replicas=REPLICAS, volumeClaimTemplates=[claim_template(storage_class)])
    body["spec"]["volumeClaimUpdateStrategy"] = {"type": claim_strategy}
    await cluster.client.create(ADVANCED_STATEFULSETS, body)
    await settled(cluster, NAME, REPLICAS, availableReplicas=REPLICAS)
    if provisioner == TEST_PROVISIONER:
        for ordinal in range(REPLICAS):
            await report_capacity(cluster, f"data-{NAME}-{ordinal}", "1Gi")
    await claims_bound_at(cluster, "1Gi")
    return await pods_of(cluster, NAME)


def grow_and_roll(spec: dict[str, Any]) -> None:
    spec["template"]["spec"]["containers"][0]["image"] = "nginx:1.27"
    spec["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "2Gi"


def volume_claims(sts: dict[str, Any]) -> dict[str, int]:
    [entry] = (sts.get("status") or {}).get("volumeClaims") or [{}]
    return {k: v for k, v in entry.items() if k != "volumeClaimName"}


async def test_rollout_grows_every_claim_through_the_sandbox_resizer(kruise_cluster):
    before = await running(kruise_cluster, "expandable", "OnPodRollingUpdate")
    await update_spec(kruise_cluster, NAME, grow_and_roll)
    await settled(kruise_cluster, NAME, REPLICAS, updatedReplicas=REPLICAS, availableReplicas=REPLICAS)
    await claims_bound_at(kruise_cluster, "2Gi")
    sts = await kruise_cluster.until(
        lambda: get_sts(kruise_cluster, NAME),
        lambda s: volume_claims(s) == {"compatibleReplicas": REPLICAS, "compatibleReadyReplicas": REPLICAS},
    )
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    pods = await pods_of(kruise_cluster, NAME)
    for name, pod in pods.items():
        assert pod["metadata"]["uid"] != before[name]["metadata"]["uid"]
        assert pod["metadata"]["labels"]["controller-revision-hash"] == sts["status"]["updateRevision"]
    for ordinal in range(REPLICAS):
        claim = await get_claim(kruise_cluster, f"data-{NAME}-{ordinal}")
        assert requested(claim) == "2Gi" and claim["metadata"]["annotations"][OWNED_BY] == NAME
        assert not claim["status"].get("conditions")
    resized = [e for e in await events_of(kruise_cluster, NAME) if e["reason"] == "SuccessfulResize"]
    assert sorted(e["message"] for e in resized) == [
        f"resize Claim data-{NAME}-{n} Pod {NAME}-{n} in StatefulSet {NAME} success" for n in range(REPLICAS)
    ]


async def test_rollout_resizes_each_claim_before_its_pod_and_waits_for_it(kruise_cluster):
    """The test is the resizer here, so each claim stays resized-but-not-expanded until checked."""
    before = await running(kruise_cluster, "expandable", "OnPodRollingUpdate", provisioner=TEST_PROVISIONER)
    await update_spec(kruise_cluster, NAME, grow_and_roll)

    for done, ordinal in enumerate((2, 1, 0)):
        claim_name, pod_name = f"data-{NAME}-{ordinal}", f"{NAME}-{ordinal}"
        claim = await kruise_cluster.until(
            lambda n=claim_name: get_claim(kruise_cluster, n), lambda c: requested(c) == "2Gi"
        )
        assert claim["metadata"]["annotations"][OWNED_BY] == NAME
        # lower ordinals wait their turn: claims not resized, pods not updated
        for lower in range(ordinal):
            assert requested(await get_claim(kruise_cluster, f"data-{NAME}-{lower}")) == "1Gi"
        # a pass after the resize (woken by the claim's change) counted the claim compatible but
        # not ready, and still left the pod alone: the rollout waits for the expansion
        await kruise_cluster.until(
            lambda: get_sts(kruise_cluster, NAME),
            lambda s, d=done: volume_claims(s) == {"compatibleReplicas": d + 1, "compatibleReadyReplicas": d},
        )
        pods = await pods_of(kruise_cluster, NAME)
        assert pods[pod_name]["metadata"]["uid"] == before[pod_name]["metadata"]["uid"]

        await report_capacity(kruise_cluster, claim_name, "2Gi")
        sts = await get_sts(kruise_cluster, NAME)
        await kruise_cluster.until(
            lambda: pods_of(kruise_cluster, NAME),
            lambda pods, p=pod_name, rev=sts["status"]["updateRevision"]: (
                p in pods
                and pods[p]["metadata"]["uid"] != before[p]["metadata"]["uid"]
                and pods[p]["metadata"]["labels"]["controller-revision-hash"] == rev
            ),
        )

    sts = await settled(kruise_cluster, NAME, REPLICAS, updatedReplicas=REPLICAS, availableReplicas=REPLICAS)
    assert volume_claims(sts) == {"compatibleReplicas": REPLICAS, "compatibleReadyReplicas": REPLICAS}
    resized = [e for e in await events_of(kruise_cluster, NAME) if e["reason"] == "SuccessfulResize"]
    assert sorted(e["message"] for e in resized) == [
        f"resize Claim data-{NAME}-{n} Pod {NAME}-{n} in StatefulSet {NAME} success" for n in range(REPLICAS)
    ]


async def test_class_without_expansion_holds_the_rollout(kruise_cluster):
    before = await running(kruise_cluster, "fixed", "OnPodRollingUpdate")
    await update_spec(kruise_cluster, NAME, grow_and_roll)
    sts = await kruise_cluster.until(
        lambda: get_sts(kruise_cluster, NAME),
        lambda s: any(
            c["type"] == "FailedUpdatePod" and "does not support volume expansion" in c.get("message", "")
            for c in (s.get("status") or {}).get("conditions") or []
        ),
    )
    assert sts["status"]["updatedReplicas"] == 0
    for ordinal in range(REPLICAS):
        claim = await get_claim(kruise_cluster, f"data-{NAME}-{ordinal}")
        assert requested(claim) == "1Gi" and OWNED_BY not in (claim["metadata"].get("annotations") or {})
    pods = await pods_of(kruise_cluster, NAME)
    assert {n: p["metadata"]["uid"] for n, p in pods.items()} == {
        n: p["metadata"]["uid"] for n, p in before.items()
    }


async def rolls_without_touching_claims(cluster, claim_strategy: str) -> None:
    await running(cluster, "expandable", claim_strategy)
    await update_spec(cluster, NAME, grow_and_roll)
    sts = await settled(cluster, NAME, REPLICAS, updatedReplicas=REPLICAS, availableReplicas=REPLICAS)
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"]
    for ordinal in range(REPLICAS):
        claim = await get_claim(cluster, f"data-{NAME}-{ordinal}")
        assert requested(claim) == "1Gi"
        assert OWNED_BY not in (claim["metadata"].get("annotations") or {})
    assert not [e for e in await events_of(cluster, NAME) if e["reason"].endswith("Resize")]
    # the claims are older than the template: none is compatible any more
    assert volume_claims(sts) == {"compatibleReplicas": 0, "compatibleReadyReplicas": 0}


async def test_on_delete_claim_strategy_leaves_claims_alone(kruise_cluster):
    await rolls_without_touching_claims(kruise_cluster, "OnDelete")


@pytest.mark.parametrize("feature_gates", [False], indirect=True)
async def test_gate_off_leaves_claims_alone(kruise_cluster):
    await rolls_without_touching_claims(kruise_cluster, "OnPodRollingUpdate")
