"""Upstream's Advanced StatefulSet e2e, Describe "VolumeExpansion v1beta1" — contexts "Resize PVC",
"Resize PVC only" and "Resize PVC with rollback" (openkruise/kruise v1.9.0
test/e2e/apps/v1beta1/statefulset.go) — translated to kubectl on the AllAlpha sandbox
(StatefulSetAutoResizePVCGate is alpha, so on): same objects, same steps, same assertions.
docs/upstream-e2e.md maps every upstream case to its test here.

Most cases are one shape (upstream's `validateExpandVCT`): a 3-replica set whose claim templates ask
1Gi of the given classes under `volumeClaimUpdateStrategy: OnPodRollingUpdate`, recreated or updated in
place; an update grows the first one or two templates to 2Gi ("Resize PVC" changes the image with it,
"Resize PVC only" does not). Where a grown template's class cannot expand, kruise-webhook must refuse
the update; otherwise every claim ends at its template's size and the status counts 3 replicas, 3 ready
and 3 with compatible claims."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from harness import Cluster
from statefulset_tester import (
    CAN_EXPAND_SC,
    CANNOT_EXPAND_SC,
    NEW_NGINX_IMAGE,
    NGINX_IMAGE,
    StatefulSetTester,
    ensure_expansion_classes,
    headless_service,
    new_statefulset,
    revision_of,
    set_image,
    volume_template_name,
    wait_for_partitioned_rolling_update,
    with_specified_deleted,
)
from upstream_kit import WEBSERVER_IMAGE, Case, Obj, upstream_case

from kruise.sandbox.quantity import amount

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

SS_NAME = "ss"
LABELS = {"foo": "bar", "baz": "blah"}
HEADLESS_SVC = "test"
OLD_SIZE, NEW_SIZE = "1Gi", "2Gi"
RECREATE, IN_PLACE = "ReCreate", "InPlaceIfPossible"


def mounts(count: int) -> list[Obj]:
    return [{"name": f"data{i}", "mountPath": f"/data{i}"} for i in range(count)]


def inject_sc(policy: str, ss: Obj, *classes: str) -> None:
    """Upstream's `injectSC`: the pod update policy (in place: with the `InPlaceUpdateReady` readiness
    gate), `OnPodRollingUpdate`, and — when there is a class per template — each template's class and a
    1Gi request."""
    spec = ss["spec"]
    if policy == IN_PLACE:
        spec["updateStrategy"]["rollingUpdate"] = {"podUpdatePolicy": policy}
        gates = spec["template"]["spec"].setdefault("readinessGates", [])
        gates.append({"conditionType": "InPlaceUpdateReady"})
    spec["volumeClaimUpdateStrategy"] = {"type": "OnPodRollingUpdate"}
    templates = spec["volumeClaimTemplates"]
    if len(templates) != len(classes):
        return
    for template, name in zip(templates, classes, strict=True):
        template["spec"]["storageClassName"] = name
        template["spec"]["resources"]["requests"]["storage"] = OLD_SIZE


def resize_vct(ss: Obj, size: str, count: int) -> None:
    """Upstream's `resizeVCT`: the first `count` templates ask `size`."""
    for template in ss["spec"]["volumeClaimTemplates"][:count]:
        template["spec"]["resources"]["requests"]["storage"] = size


def new_image_and_resize(count: int, new_image: bool = True) -> Callable[[Obj], None]:
    """The cases' `updateFn`: "Resize PVC" changes the image too, "Resize PVC only" does not."""

    def change(ss: Obj) -> None:
        if new_image:
            ss["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE
        resize_vct(ss, NEW_SIZE, count)

    return change


async def setup(case: Case) -> StatefulSetTester:
    """The context's BeforeEach: both classes exist, and the headless service."""
    await ensure_expansion_classes(case.cluster)
    await case.create(headless_service(HEADLESS_SVC, LABELS))
    return StatefulSetTester(case)


def pvc_capacity_matches(cmp: Callable[[str, str], bool]) -> Callable[[Obj, list[Obj]], bool]:
    """Upstream's `waitForPVCCapacity` condition: every claim of a template with a capacity has
    status capacity == its request, and `cmp(capacity, template request)`."""

    def until(ss: Obj, pvcs: list[Obj]) -> bool:
        templates = {
            t["metadata"]["name"]: t["spec"]["resources"]["requests"]["storage"]
            for t in ss["spec"]["volumeClaimTemplates"]
        }
        for pvc in pvcs:
            template = volume_template_name(pvc["metadata"]["name"], ss["metadata"]["name"])
            if template is None:
                continue
            capacity = capacity_of(pvc)
            if capacity is None:
                continue
            if not same_quantity(capacity, pvc["spec"]["resources"]["requests"]["storage"]):
                return False
            if not cmp(capacity, templates.get(template, "0")):
                return False
        return True

    return until


def claim_names(vct_number: int, replicas: int) -> set[str]:
    return {f"data{t}-{SS_NAME}-{i}" for t in range(vct_number) for i in range(replicas)}


def claims_with_capacity(pvcs: list[Obj]) -> set[str]:
    return {p["metadata"]["name"] for p in pvcs if capacity_of(p) is not None}


def capacity_of(pvc: Obj) -> str | None:
    return ((pvc.get("status") or {}).get("capacity") or {}).get("storage")


def same_quantity(a: str, b: str) -> bool:
    """`Quantity.Cmp == 0`."""
    return amount(a) == amount(b)


async def validate_expand_vct(
    cluster: Cluster,
    vct_number: int,
    policy: str,
    classes: tuple[str, ...],
    resized: int,
    expect_err: bool,
    new_image: bool = True,
) -> None:
    """Upstream's `validateExpandVCT` (both contexts have their own copy; they differ only in the
    update)."""
    async with upstream_case(cluster, "statefulset-storage") as case:
        sst = await setup(case)
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 3, mounts(vct_number), [], LABELS)
        inject_sc(policy, ss, *classes)
        ss = await sst.create(ss)
        await sst.wait_for_status(ss)
        await sst.wait_for_status_replicas(ss, 3)
        await sst.wait_for_status_ready_replicas(ss, 3)

        # expand volume claim size
        accepted, out = await sst.try_update(SS_NAME, new_image_and_resize(resized, new_image))
        if expect_err:
            assert not accepted, f"update growing a claim of {CANNOT_EXPAND_SC} was accepted: {out}"
            assert "does not support volume expansion" in out, out
            return
        assert accepted, out
        ss = await sst.get(SS_NAME)

        # we need to ensure we wait for all the new ones to show up, not just for any random 3
        await sst.wait_for_status(ss)
        _, pvcs = await sst.wait_for_pvc_state(
            ss, pvc_capacity_matches(same_quantity), "claims at template size"
        )
        # upstream's wait passes over claims it cannot see; here every claim of the 3 pods must be there
        assert claims_with_capacity(pvcs) == claim_names(vct_number, 3), pvcs

        # Confirming 3 pvc capacity consistent with spec
        await sst.wait_for_status_replicas(ss, 3)
        await sst.wait_for_status_ready_replicas(ss, 3)
        await sst.wait_for_status_pvc_ready_replicas(ss, 3)


async def test_recreate_expand_vct_with_sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_vct_with_sc_can_expand"""
    await validate_expand_vct(kruise_sandbox_all_gates, 1, RECREATE, (CAN_EXPAND_SC,), 2, False)


async def test_recreate_expand_vct_with_sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_vct_with_sc_cannot_expand"""
    await validate_expand_vct(kruise_sandbox_all_gates, 1, RECREATE, (CANNOT_EXPAND_SC,), 2, True)


async def test_recreate_expand_vct_with_2sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_vct_with_2sc_can_expand"""
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, (CAN_EXPAND_SC, CAN_EXPAND_SC), 2, False)


async def test_recreate_expand_vct_with_2sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_vct_with_2sc_cannot_expand"""
    classes = (CANNOT_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 2, True)


async def test_recreate_expand_only_can_expand_vct_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_only_can_expand_vct_with_mixed_sc"""
    classes = (CAN_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 1, False)


async def test_recreate_expand_only_cannot_expand_vct_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_only_cannot_expand_vct_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 1, True)


async def test_recreate_expand_both_cannot_expand_vct_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_both_cannot_expand_vct_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 2, True)


async def test_inplace_expand_vct_with_sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_vct_with_sc_can_expand"""
    await validate_expand_vct(kruise_sandbox_all_gates, 1, IN_PLACE, (CAN_EXPAND_SC,), 2, False)


async def test_inplace_expand_vct_with_sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_vct_with_sc_cannot_expand"""
    await validate_expand_vct(kruise_sandbox_all_gates, 1, IN_PLACE, (CANNOT_EXPAND_SC,), 2, True)


async def test_inplace_expand_vct_with_2sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_vct_with_2sc_can_expand"""
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, (CAN_EXPAND_SC, CAN_EXPAND_SC), 2, False)


async def test_inplace_expand_vct_with_2sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_vct_with_2sc_cannot_expand"""
    classes = (CANNOT_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 2, True)


async def test_inplace_expand_only_can_expand_vct_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_only_can_expand_vct_with_mixed_sc"""
    classes = (CAN_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 1, False)


async def test_inplace_expand_only_cannot_expand_vct_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_only_cannot_expand_vct_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 1, True)


async def test_inplace_expand_both_cannot_expand_vct_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_both_cannot_expand_vct_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 2, True)


async def test_should_perform_rolling_updates_with_specified_deleted_with_pvc(
    kruise_sandbox_all_gates: Cluster,
):
    """should perform rolling updates with specified-deleted with pvc"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset-storage") as case:
        sst = await setup(case)
        ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 4, mounts(1), [], LABELS)
        inject_sc(IN_PLACE, ss, CAN_EXPAND_SC)

        def change(update: Obj) -> None:
            update["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "20"
            update["spec"]["volumeClaimUpdateStrategy"] = {"type": "OnPodRollingUpdate"}
            resize_vct(update, NEW_SIZE, 2)

        ss = await with_specified_deleted(case, sst, ss, change)
        ss = await sst.wait_for_status(ss)
        await sst.wait_for_status_pvc_ready_replicas(ss, 2)

        ss = await sst.wait_for_status(ss)
        # upstream counts, over one read of the claims, those whose capacity is not the template's
        _, pvcs = await sst.wait_for_pvc_state(
            ss, pvc_capacity_matches(lambda _capacity, _template: True), "claims at their requests"
        )
        template = ss["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"]
        not_equal = [
            pvc["metadata"]["name"]
            for pvc in pvcs
            if volume_template_name(pvc["metadata"]["name"], SS_NAME) is not None
            and capacity_of(pvc) is not None
            and not same_quantity(capacity_of(pvc), template)
        ]
        assert claims_with_capacity(pvcs) == claim_names(1, 4), pvcs
        assert len(not_equal) == 2, not_equal


# Context "Resize PVC only": the same sets, an update that only grows the templates (no image change).


async def test_only_recreate_with_sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_with_sc_can_expand"""
    classes = (CAN_EXPAND_SC,)
    await validate_expand_vct(kruise_sandbox_all_gates, 1, RECREATE, classes, 2, False, new_image=False)


async def test_only_recreate_with_sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_with_sc_cannot_expand"""
    classes = (CANNOT_EXPAND_SC,)
    await validate_expand_vct(kruise_sandbox_all_gates, 1, RECREATE, classes, 2, True, new_image=False)


async def test_only_recreate_with_2sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_with_2sc_can_expand"""
    classes = (CAN_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 2, False, new_image=False)


async def test_only_recreate_with_2sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """recreate_with_2sc_cannot_expand"""
    classes = (CANNOT_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 2, True, new_image=False)


async def test_only_recreate_expand_only_can_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_only_can_with_mixed_sc"""
    classes = (CAN_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 1, False, new_image=False)


async def test_only_recreate_expand_only_cannot_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_only_cannot_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 1, True, new_image=False)


async def test_only_recreate_expand_both_cannot_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """recreate_expand_both_cannot_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, RECREATE, classes, 2, True, new_image=False)


async def test_only_inplace_with_sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_with_sc_can_expand"""
    classes = (CAN_EXPAND_SC,)
    await validate_expand_vct(kruise_sandbox_all_gates, 1, IN_PLACE, classes, 2, False, new_image=False)


async def test_only_inplace_with_sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_with_sc_cannot_expand"""
    classes = (CANNOT_EXPAND_SC,)
    await validate_expand_vct(kruise_sandbox_all_gates, 1, IN_PLACE, classes, 2, True, new_image=False)


async def test_only_inplace_with_2sc_can_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_with_2sc_can_expand"""
    classes = (CAN_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 2, False, new_image=False)


async def test_only_inplace_with_2sc_cannot_expand(kruise_sandbox_all_gates: Cluster):
    """inplace_with_2sc_cannot_expand"""
    classes = (CANNOT_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 2, True, new_image=False)


async def test_only_inplace_expand_only_can_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_only_can_with_mixed_sc"""
    classes = (CAN_EXPAND_SC, CANNOT_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 1, False, new_image=False)


async def test_only_inplace_expand_only_cannot_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_only_cannot_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 1, True, new_image=False)


async def test_only_inplace_expand_both_cannot_with_mixed_sc(kruise_sandbox_all_gates: Cluster):
    """inplace_expand_both_cannot_with_mixed_sc"""
    classes = (CANNOT_EXPAND_SC, CAN_EXPAND_SC)
    await validate_expand_vct(kruise_sandbox_all_gates, 2, IN_PLACE, classes, 2, True, new_image=False)


# Context "Resize PVC with rollback": a 1-template set of the expandable class, recreated on update; the
# update changes the image, grows the template to 2Gi and holds pods below ordinal 2; the rollback
# returns to the old image with no partition.


def grow_with_partition(update: Obj) -> None:
    update["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE
    resize_vct(update, NEW_SIZE, 2)
    update["spec"]["updateStrategy"].setdefault("rollingUpdate", {})["partition"] = 2


def back_to_old_image(update: Obj) -> None:
    update["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_IMAGE
    update["spec"]["updateStrategy"].setdefault("rollingUpdate", {})["partition"] = 0


async def validate_update_vct_and_rollback(
    case: Case, sst: StatefulSetTester, rollback: Callable[[Obj], None]
) -> Obj:
    """Upstream's `validateUpdateVCTAndRollback` with one template: after the update the claim of the
    one updated pod is compatible, pods below the partition keep the old image and revision, those at
    or above it run the new ones; after `rollback` the set is back at 3 ready replicas."""
    ss = new_statefulset(SS_NAME, case.ns, HEADLESS_SVC, 3, mounts(1), [], LABELS)
    inject_sc(RECREATE, ss, CAN_EXPAND_SC)
    ss = await sst.create(ss)
    await sst.wait_for_status(ss)
    await sst.wait_for_status_replicas(ss, 3)
    await sst.wait_for_status_ready_replicas(ss, 3)

    # expand volume claim size
    ss = await sst.update_with_retries(SS_NAME, grow_with_partition)
    await sst.wait_for_status_ready_replicas(ss, 3)
    await sst.wait_for_status_pvc_ready_replicas(ss, 1)

    ss, pods = await wait_for_partitioned_rolling_update(sst, ss)
    partition = int(ss["spec"]["updateStrategy"]["rollingUpdate"]["partition"])
    for i, pod in enumerate(pods):
        image = pod["spec"]["containers"][0]["image"]
        old = i < partition
        want_image = NGINX_IMAGE if old else NEW_NGINX_IMAGE
        want_revision = ss["status"]["currentRevision" if old else "updateRevision"]
        assert image == want_image, f"Pod {pod['metadata']['name']} has image {image}, not {want_image}"
        assert revision_of(pod) == want_revision, (
            f"Pod {pod['metadata']['name']} has revision {revision_of(pod)}, not {want_revision}"
        )

    # run rollback fn
    ss = await sst.update_with_retries(SS_NAME, rollback)
    await sst.wait_for_status_ready_replicas(ss, 3)
    # we need to ensure we wait for all the new ones to show up, not just for any random 3
    await sst.wait_for_status(ss)
    # Confirming 3 pvc capacity consistent with spec
    await sst.wait_for_status_replicas(ss, 3)
    await sst.wait_for_status_ready_replicas(ss, 3)
    return ss


async def confirm_claims(sst: StatefulSetTester, ss: Obj, cmp: Callable[[str, str], bool], pvc_ready: int):
    """`waitForPVCCapacity(cmp)` then "Confirming 3 pvc capacity consistent with spec"; every claim of
    the 3 pods must be there with a capacity (upstream's wait passes over claims it cannot see)."""
    _, pvcs = await sst.wait_for_pvc_state(ss, pvc_capacity_matches(cmp), "claims at their capacity")
    assert claims_with_capacity(pvcs) == claim_names(1, 3), pvcs
    await sst.wait_for_status_replicas(ss, 3)
    await sst.wait_for_status_ready_replicas(ss, 3)
    await sst.wait_for_status_pvc_ready_replicas(ss, pvc_ready)


def not_smaller(capacity: str, template: str) -> bool:
    return (amount(capacity) or 0) >= (amount(template) or 0)


async def test_partition_2_rollback_only_image(kruise_sandbox_all_gates: Cluster):
    """partition 2, rollback only image"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset-storage") as case:
        sst = await setup(case)
        # rollback only image, remain new pvc size
        ss = await validate_update_vct_and_rollback(case, sst, back_to_old_image)
        await confirm_claims(sst, ss, same_quantity, 3)

        # After rollbacked, continue to expand pvc size
        ss = await sst.update_with_retries(SS_NAME, lambda s: resize_vct(s, "3Gi", 2))
        await sst.wait_for_status_ready_replicas(ss, 3)
        await sst.wait_for_status(ss)
        await confirm_claims(sst, ss, same_quantity, 3)


async def test_partition_2_rollback_only_image_and_update_to_another_image(kruise_sandbox_all_gates: Cluster):
    """partition 2, rollback only image and update to another image"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset-storage") as case:
        sst = await setup(case)
        ss = await validate_update_vct_and_rollback(case, sst, back_to_old_image)

        # After rollbacked, update a new image
        ss = await sst.update_with_retries(SS_NAME, set_image(WEBSERVER_IMAGE))
        await sst.wait_for_status_ready_replicas(ss, 3)
        await sst.wait_for_status(ss)
        await confirm_claims(sst, ss, same_quantity, 3)


async def test_partition_2_rollback_image_and_pvc_size(kruise_sandbox_all_gates: Cluster):
    """partition 2, rollback image and pvc size"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset-storage") as case:
        sst = await setup(case)

        def rollback(update: Obj) -> None:
            back_to_old_image(update)
            resize_vct(update, OLD_SIZE, 2)

        ss = await validate_update_vct_and_rollback(case, sst, rollback)
        # only the one grown claim is bigger than the template, which is compatible with it
        await confirm_claims(sst, ss, not_smaller, 3)

        # After rollbacked, update a new image
        ss = await sst.update_with_retries(SS_NAME, set_image(WEBSERVER_IMAGE))
        await sst.wait_for_status_ready_replicas(ss, 3)
        await sst.wait_for_status(ss)
        await confirm_claims(sst, ss, not_smaller, 3)


async def test_partition_2_rollback_image_and_change_to_on_pvc_delete_update_strategy(
    kruise_sandbox_all_gates: Cluster,
):
    """partition 2, rollback image and change to OnPVCDelete update strategy"""
    async with upstream_case(kruise_sandbox_all_gates, "statefulset-storage") as case:
        sst = await setup(case)

        def rollback(update: Obj) -> None:
            back_to_old_image(update)
            update["spec"]["volumeClaimUpdateStrategy"]["type"] = "OnPVCDelete"

        ss = await validate_update_vct_and_rollback(case, sst, rollback)
        await sst.wait_for_status_pvc_ready_replicas(ss, 1)

        # After rollbacked, update a new image
        ss = await sst.update_with_retries(SS_NAME, set_image(WEBSERVER_IMAGE))
        await sst.wait_for_status_ready_replicas(ss, 3)
        await sst.wait_for_status(ss)
        # Confirming 3 pvc capacity consistent with spec
        await sst.wait_for_status_replicas(ss, 3)
        await sst.wait_for_status_ready_replicas(ss, 3)
        await sst.wait_for_status_pvc_ready_replicas(ss, 1)
