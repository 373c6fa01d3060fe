"""Upstream's Advanced StatefulSet e2e, Describe "StatefulSet v1beta1" — contexts "Non-retain
StatefulSetPersistentVolumeClaimPolicy [Feature:StatefulSetAutoDeletePVC]" and "Automatically recreate
PVC for pending pod when PVC is missing" (openkruise/kruise v1.9.0 test/e2e/apps/v1beta1/statefulset.go)
— translated to kubectl on the AllAlpha sandbox: same objects, same steps, same assertions.

Every case starts with `SkipIfNoDefaultStorageClass`: upstream's kind cluster has a default class, so
the cases run there; the sandbox has none of its own, so `ensure_default_class` gives it one (on the
sandbox's provisioner) rather than let the cases pass by skipping."""

from __future__ import annotations

import json
import re

import pytest
from harness import Cluster
from statefulset_tester import (
    STS,
    StatefulSetTester,
    ensure_default_class,
    headless_service,
    new_statefulset,
    status,
)
from upstream_kit import Case, Obj, upstream_case

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SS_NAME = "ss"
LABELS = {"foo": "bar", "baz": "blah"}
HEADLESS_SVC = "test"
STATEFUL_MOUNTS = [{"name": "datadir", "mountPath": "/data/"}]
POD_MOUNTS = [{"name": "home", "mountPath": "/home"}]
HOST_LABEL = "kubernetes.io/hostname"


async def setup(case: Case, replicas: int, policy: Obj) -> tuple[StatefulSetTester, Obj]:
    """The context's BeforeEach (the headless service; `NewStatefulSet` with a `datadir` claim template and
    a `home` host path) and the case's own replicas and retention policy."""
    await ensure_default_class(case.cluster)
    await case.create(headless_service(HEADLESS_SVC, LABELS))
    ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 2, STATEFUL_MOUNTS, POD_MOUNTS, LABELS)
    ss["spec"]["replicas"] = replicas
    ss["spec"]["persistentVolumeClaimRetentionPolicy"] = policy
    return StatefulSetTester(case), ss


def claim_ordinals(ss: Obj, claims: list[Obj], template: str) -> list[int]:
    """The ordinals of the claims named `<template>-<set>-<ordinal>`."""
    pattern = re.compile(rf"^{re.escape(template)}-{re.escape(ss['metadata']['name'])}-([0-9]+)$")
    return [int(m.group(1)) for c in claims if (m := pattern.match(c["metadata"]["name"]))]


async def verify_pvcs_exist(case: Case, ss: Obj, ids: list[int]) -> None:
    """`verifyStatefulSetPVCsExist`: for every claim template, the namespace's claims of that template are
    exactly the ordinals `ids`."""
    want = set(ids)

    def consistent(claims: list[Obj]) -> bool:
        for template in ss["spec"]["volumeClaimTemplates"]:
            seen = claim_ordinals(ss, claims, template["metadata"]["name"])
            if not set(seen) <= want or len(set(seen)) != len(want):
                return False
        return True

    await case.eventually(
        lambda: case.list("persistentvolumeclaims"), consistent, f"claims of ordinals {sorted(want)}"
    )


async def verify_pvcs_exist_with_owner_refs(
    case: Case, ss: Obj, ids: list[int], want_set_ref: bool, want_pod_ref: bool
) -> None:
    """`verifyStatefulSetPVCsExistWithOwnerRefs`: as `verify_pvcs_exist`, and each claim is owned by the
    set (`want_set_ref`) and by its pod (`want_pod_ref`) as asked."""
    set_uid = (await case.must_get(STS, ss["metadata"]["name"]))["metadata"]["uid"]
    want = set(ids)

    async def probe() -> tuple[list[Obj], dict[str, str]]:
        claims = await case.list("persistentvolumeclaims")
        pods = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await case.list("pods")}
        return claims, pods

    def consistent(read: tuple[list[Obj], dict[str, str]]) -> bool:
        claims, pods = read
        for template in ss["spec"]["volumeClaimTemplates"]:
            name = template["metadata"]["name"]
            seen: set[int] = set()
            for claim in claims:
                ords = claim_ordinals(ss, [claim], name)
                if not ords:
                    continue
                if ords[0] not in want:
                    return False
                refs = claim["metadata"].get("ownerReferences") or []
                set_ref = any(r["kind"] == "StatefulSet" and r["uid"] == set_uid for r in refs)
                pod_name = f"{ss['metadata']['name']}-{ords[0]}"
                pod_refs = [r for r in refs if r["kind"] == "Pod"]
                if pod_refs and pod_name not in pods:
                    return False  # upstream retries until the claim's pod is there to compare
                pod_ref = any(r["uid"] == pods.get(pod_name) for r in pod_refs)
                if set_ref == want_set_ref and pod_ref == want_pod_ref:
                    seen.add(ords[0])
            if len(seen) != len(want):
                return False
        return True

    await case.eventually(
        probe,
        consistent,
        f"claims of ordinals {sorted(want)} with set ref {want_set_ref}, pod ref {want_pod_ref}",
    )


async def scale(case: Case, sst: StatefulSetTester, ss: Obj, count: int) -> Obj:
    """`StatefulSetTester.Scale`: set the replicas, then wait until the set has exactly `count` pods."""

    def replicas(update: Obj) -> None:
        update["spec"]["replicas"] = count

    ss = await sst.update_with_retries(ss["metadata"]["name"], replicas)
    await case.eventually(lambda: sst.pods(ss), lambda pods: len(pods) == count, f"{count} pods")
    return ss


async def orphan_pod(case: Case, name: str) -> None:
    """Upstream's "Orphaning" patch, byte for byte: `json.Marshal(metav1.ObjectMeta{OwnerReferences:
    []metav1.OwnerReference{}})` omits the empty list (`omitempty`) and marshals to
    `{"creationTimestamp":null}`, sent as a strategic merge patch of the pod, so it leaves the pod's owner
    references as they were; the cases' point is that the claims go whatever the patch did."""
    await case.kubectl(
        "patch", "pod", name, "--type", "strategic", "-p", json.dumps({"creationTimestamp": None})
    )


async def test_should_delete_pvcs_with_a_when_deleted_policy(kruise_sandbox_all_gates: Cluster):
    """should delete PVCs with a WhenDeleted policy"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst, ss = await setup(case, 3, {"whenDeleted": "Delete"})
        await sst.create(ss)

        # Confirming all 3 PVCs exist with their owner refs
        await verify_pvcs_exist_with_owner_refs(case, ss, [0, 1, 2], True, False)

        # Deleting stateful set
        await case.kubectl("delete", STS, SS_NAME, "--wait=false")

        # Verifying PVCs deleted
        await verify_pvcs_exist(case, ss, [])


async def test_should_delete_pvcs_with_a_on_scaledown_policy(kruise_sandbox_all_gates: Cluster):
    """should delete PVCs with a OnScaledown policy"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst, ss = await setup(case, 3, {"whenScaled": "Delete"})
        await sst.create(ss)

        # Confirming all 3 PVCs exist
        await verify_pvcs_exist(case, ss, [0, 1, 2])

        # Scaling stateful set to one replica
        ss = await scale(case, sst, ss, 1)

        # Verifying all but one PVC deleted
        await verify_pvcs_exist(case, ss, [0])


async def test_should_delete_pvcs_with_a_on_scaledown_policy_and_range_reserve_ordinals(
    kruise_sandbox_all_gates: Cluster,
):
    """should delete PVCs with a OnScaledown policy and range reserveOrdinals=[0,2-5]"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst, ss = await setup(case, 3, {"whenScaled": "Delete"})
        ss["spec"]["reserveOrdinals"] = [0, "2-5"]
        await sst.create(ss)

        # Confirming all 3 PVCs exist
        await verify_pvcs_exist(case, ss, [1, 6, 7])

        # Scaling stateful set to one replica
        ss = await scale(case, sst, ss, 1)

        # Verifying all but one PVC deleted
        await verify_pvcs_exist(case, ss, [1])


async def test_should_delete_pvcs_after_adopting_pod_when_deleted(kruise_sandbox_all_gates: Cluster):
    """should delete PVCs after adopting pod (WhenDeleted)"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst, ss = await setup(case, 3, {"whenDeleted": "Delete"})
        await sst.create(ss)

        # Confirming all 3 PVCs exist with their owner refs
        await verify_pvcs_exist_with_owner_refs(case, ss, [0, 1, 2], True, False)

        # Orphaning the 3rd pod
        await orphan_pod(case, f"{SS_NAME}-2")

        # Deleting stateful set
        await case.kubectl("delete", STS, SS_NAME, "--wait=false")

        # Verifying PVCs deleted
        await verify_pvcs_exist(case, ss, [])


async def test_should_delete_pvcs_after_adopting_pod_when_scaled(kruise_sandbox_all_gates: Cluster):
    """should delete PVCs after adopting pod (WhenScaled) [Feature:StatefulSetAutoDeletePVC]"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        sst, ss = await setup(case, 3, {"whenScaled": "Delete"})
        await sst.create(ss)

        # Confirming all 3 PVCs exist
        await verify_pvcs_exist(case, ss, [0, 1, 2])

        # Orphaning the 2rd pod (upstream: "patch 3rd pod maybe failed when pod has not been created")
        await orphan_pod(case, f"{SS_NAME}-1")

        # Scaling stateful set to one replica
        ss = await scale(case, sst, ss, 1)

        # Verifying all but one PVC deleted
        await verify_pvcs_exist(case, ss, [0])


async def set_unschedulable(case: Case, node: str, unschedulable: bool) -> None:
    """The two-way strategic merge patch of the node with `spec.unschedulable` set, and its revert."""
    patch = {"spec": {"unschedulable": True if unschedulable else None}}
    await case.cluster.kubectl("patch", "node", node, "--type", "strategic", "-p", json.dumps(patch))


async def test_pvc_should_be_recreated_when_pod_is_pending_due_to_missing_pvc(
    kruise_sandbox_all_gates: Cluster,
):
    """PVC should be recreated when pod is pending due to missing PVC"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset") as case:
        await ensure_default_class(case.cluster)
        sst = StatefulSetTester(case)
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 1, STATEFUL_MOUNTS, [], LABELS)

        # `GetRandomReadySchedulableNode`
        _, out = await case.cluster.kubectl("get", "nodes", "-o", "json")
        ready = [
            n
            for n in json.loads(out)["items"]
            if not n["spec"].get("unschedulable")
            and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in n.get("status", {}).get("conditions", [])
            )
        ]
        assert ready, "no ready schedulable node"
        ready_node = ready[0]
        host = ready_node["metadata"]["labels"][HOST_LABEL]
        # force the pod on a specific node
        ss["spec"]["template"]["spec"]["nodeSelector"] = {HOST_LABEL: host}
        await sst.create(ss)

        # Confirming PVC exists
        await verify_pvcs_exist(case, ss, [0])

        # Confirming Pod is ready
        await sst.wait_for_status_ready_replicas(ss, 1)
        pod_name = f"{SS_NAME}-0"
        pod = await case.must_get("pod", pod_name)
        node_name = pod["spec"]["nodeName"]
        assert node_name == ready_node["metadata"]["name"], node_name

        # Cordoning Node: the pod must not get scheduled to it until the claim is deleted
        await set_unschedulable(case, node_name, True)
        cordoned = True
        try:
            await case.eventually(
                lambda: case.cluster.kubectl("get", "node", node_name, "-o", "json"),
                lambda read: json.loads(read[1])["spec"].get("unschedulable") is True,
                f"node {node_name} unschedulable",
            )

            # Deleting Pod
            await case.kubectl("delete", "pod", pod_name, "--wait=false")

            # wait for the pod to be recreated (`waitForStatusCurrentReplicas`)
            generation = int(ss["metadata"].get("generation") or 1)
            await sst.wait_for_state(
                ss,
                lambda s, _: (
                    int(status(s).get("observedGeneration") or 0) >= generation
                    and int(status(s).get("currentReplicas") or 0) == 1
                ),
                "currentReplicas 1",
            )
            await case.must_get("pod", pod_name)

            claims = await case.list("persistentvolumeclaims")
            assert len(claims) == 1, [c["metadata"]["name"] for c in claims]
            pvc_name = claims[0]["metadata"]["name"]

            # Deleting PVC
            await case.kubectl("delete", "pvc", pvc_name, "--wait=false")

            await set_unschedulable(case, node_name, False)
            cordoned = False
        finally:
            if cordoned:
                await set_unschedulable(case, node_name, False)

        # Confirming PVC recreated
        await verify_pvcs_exist(case, ss, [0])

        # Confirming Pod is ready after being recreated
        await sst.wait_for_status_ready_replicas(ss, 1)
        pod = await case.must_get("pod", pod_name)
        # confirm the pod was scheduled back to the original node
        assert pod["spec"]["nodeName"] == ready_node["metadata"]["name"], pod["spec"]
