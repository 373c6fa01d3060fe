"""Upstream's CloneSet e2e, context "CloneSet Updating" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/cloneset.go), translated to kubectl on the AllAlpha sandbox: same objects, same
steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test. The three
two-container "with priorities" cases need real containers (postStart hooks held in real seconds, a
container that really exits): they run on real nodes, in
e2e/containerd/test_upstream_cloneset_priorities_containerd_e2e.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from cloneset_tester import (
    AVAILABLE,
    HTTPD_IMAGE,
    INSTANCE_ID,
    LIFECYCLE_STATE,
    NEW_NGINX_IMAGE,
    NGINX_ALPINE,
    NGINX_IMAGE,
    NGINX_MAINLINE_ALPINE,
    PARTITION_AVAILABLE,
    REDIS_IMAGE,
    TEN_MINUTES,
    UPDATED,
    Case,
    deadline_exceeded,
    equal_to_revision_hash,
    upstream_case,
)
from harness import Cluster

INPLACE = {"type": "InPlaceIfPossible"}


def _state(pod: dict[str, Any]) -> str:
    return pod["metadata"]["labels"].get(LIFECYCLE_STATE, "")


@pytest.mark.timeout(300)
async def test_in_place_update_images_with_the_same_image_id(kruise_sandbox_all_gates: Cluster):
    """in-place update images with the same imageID

    nginx:alpine and nginx:mainline-alpine are one image on Docker Hub, and in the sandbox's simulated
    registry (docs/sandbox.md): the container restarts with a new containerID and the same imageID, and the
    update completes although the status names the image by its first tag (kruise-daemon's container hash
    report decides, as upstream)."""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1, INPLACE)
        cs["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_ALPINE
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        created = await case.create(cs)
        name = created["metadata"]["name"]
        assert created["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"
        # upstream polls 3 s for this one; a kubectl read alone can take that long on a loaded machine
        await case.eventually_status(name, "replicas", 1)
        await case.eventually_progressing(name, UPDATED)
        await case.eventually_status(name, "readyReplicas", 1)
        await case.eventually_progressing(name, AVAILABLE)
        [old] = await case.pods(name)
        old_status = old["status"]["containerStatuses"][0]

        def mainline(obj):
            obj["metadata"].setdefault("annotations", {})
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_MAINLINE_ALPINE

        await case.update(name, mainline)
        await case.generation_observed(name)
        await case.eventually_progressing(name, UPDATED)
        await case.eventually_status(name, "updatedReadyReplicas", 1)

        # the containerID changed and the imageID did not
        pods = await case.pods(name)
        assert len(pods) == 1
        new_status = pods[0]["status"]["containerStatuses"][0]
        assert pods[0]["metadata"]["uid"] == old["metadata"]["uid"]
        assert new_status["containerID"] != old_status["containerID"]
        assert new_status["imageID"] == old_status["imageID"]
        await case.eventually_progressing(name, AVAILABLE)


@pytest.mark.timeout(300)
async def test_in_place_update_both_image_and_env_from_label(kruise_sandbox_all_gates: Cluster):
    """in-place update both image and env from label"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1, INPLACE)
        template = cs["spec"]["template"]
        template["spec"]["containers"][0]["image"] = NGINX_IMAGE
        template["metadata"]["labels"]["test-env"] = "foo"
        template["spec"]["containers"][0]["env"].append(
            {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}
        )
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        name = await case.created_and_available(cs, 1)
        [old] = await case.pods(name)

        def label_and_image(obj):
            obj["spec"]["template"]["metadata"]["labels"]["test-env"] = "bar"
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE

        await case.update(name, label_and_image)
        await case.updated_and_available(name, 1)

        # the containerID changed and restartCount is 1
        [new] = await case.pods(name)
        assert new["metadata"]["uid"] == old["metadata"]["uid"]
        old_status, new_status = old["status"]["containerStatuses"][0], new["status"]["containerStatuses"][0]
        assert new_status["containerID"] != old_status["containerID"]
        assert new_status["restartCount"] == 1


@pytest.mark.timeout(300)
async def test_partition_99_percent_replicas_4_one_pod_upgraded(kruise_sandbox_all_gates: Cluster):
    """CloneSet partition="99%", replicas=4, make sure one pod is upgraded"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        strategy = {"type": "InPlaceIfPossible", "maxUnavailable": "50%", "partition": "99%"}
        cs = case.new_cloneset(f"clone-{case.rand}", 4, strategy)
        cs["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_ALPINE
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        name = await case.created_and_available(cs, 4)
        assert len(await case.pods(name)) == 4

        def mainline(obj):
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_MAINLINE_ALPINE

        await case.update(name, mainline)
        await case.eventually_progressing(name, UPDATED)
        await case.generation_observed(name)
        await case.eventually_status(name, "updatedReplicas", 1)
        await case.eventually_progressing(name, PARTITION_AVAILABLE)
        # upstream sleeps 10 s and checks again: the partition keeps the other three
        await case.consistently(lambda: case.status(name, "updatedReplicas"), 1, "status.updatedReplicas", 10)
        await case.eventually_status(name, "updatedReadyReplicas", 1)
        await case.eventually_status(name, "expectedUpdatedReplicas", 1)


def _claim(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def _controller_kind(obj: dict[str, Any]) -> str | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref["kind"]
    return None


async def _delete_all(case: Case, pods: list[dict[str, Any]]) -> None:
    await case.kubectl("delete", "pod", "--wait=false", *[p["metadata"]["name"] for p in pods])


@pytest.mark.timeout(400)
async def test_update_with_disable_pvc_reuse(kruise_sandbox_all_gates: Cluster):
    """CloneSet Update with DisablePVCReuse=true"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 4, {"type": "ReCreate"})
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        cs["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_ALPINE
        cs["spec"]["volumeClaimTemplates"] = [_claim("data-vol1"), _claim("data-vol2")]
        created = await case.create(cs)
        name = created["metadata"]["name"]
        assert created["spec"]["updateStrategy"]["type"] == "ReCreate"
        await case.eventually_progressing(name, UPDATED)
        await case.eventually_status(name, "replicas", 4)
        await case.eventually_status(name, "readyReplicas", 4)

        pods = await case.pods(name)
        assert len(pods) == 4
        instance_ids = {p["metadata"]["labels"][INSTANCE_ID] for p in pods}
        pvcs = await case.pvcs()
        assert len(pvcs) == 8
        pvc_names = set()
        for pvc in pvcs:
            assert pvc["metadata"]["labels"][INSTANCE_ID] in instance_ids
            pvc_names.add(pvc["metadata"]["name"])
            assert _controller_kind(pvc) == "CloneSet"
        await case.eventually_progressing(name, AVAILABLE)
        condition = await case.progressing(name)

        # delete the pods: their claims are reused
        await _delete_all(case, pods)
        await case.eventually(
            lambda: case.status(name, "updatedAvailableReplicas"), 4, "status.updatedAvailableReplicas"
        )
        assert await case.progressing(name) == condition
        pvcs = await case.pvcs()
        assert len(pvcs) == 8
        for pvc in pvcs:
            assert pvc["metadata"]["labels"][INSTANCE_ID] in instance_ids
            assert pvc["metadata"]["name"] in pvc_names
            assert _controller_kind(pvc) == "CloneSet"

        def disable_reuse(obj):
            obj["spec"].setdefault("scaleStrategy", {})["disablePVCReuse"] = True

        await case.update(name, disable_reuse)
        await case.generation_observed(name)
        assert await case.progressing(name) == condition

        # delete the pods again: new claims for new instances
        await _delete_all(case, await case.pods(name))

        async def recreated() -> int:
            live = {p["metadata"]["labels"][INSTANCE_ID] for p in await case.pods(name)}
            if live & instance_ids:
                return -1
            return await case.status(name, "updatedAvailableReplicas")

        await case.eventually(recreated, 4, "four new instances available")
        assert await case.progressing(name) == AVAILABLE
        pods = await case.pods(name)
        assert len(pods) == 4
        instance_ids = {p["metadata"]["labels"][INSTANCE_ID] for p in pods}
        pvcs = await case.pvcs()
        assert len(pvcs) == 8
        for pvc in pvcs:
            assert pvc["metadata"]["labels"][INSTANCE_ID] in instance_ids
            assert pvc["metadata"]["name"] not in pvc_names
            assert _controller_kind(pvc) == "CloneSet"


@pytest.mark.timeout(600)
async def test_regard_preparing_update_pod_as_update_when_scaling(kruise_sandbox_all_gates: Cluster):
    """CloneSet regard preparing-update pod as update when scaling

    Needs gate PreparingUpdateAsUpdate (AllAlpha upstream): a pod held in PreparingUpdate by its
    inPlaceUpdate hook counts as updated, so a rebuilt or scaled-out pod takes the current revision."""
    hook = "preparing-update-hook"
    async with upstream_case(kruise_sandbox_all_gates) as case:
        strategy = {"type": "InPlaceIfPossible", "maxUnavailable": "50%", "partition": "99%"}
        cs = case.new_cloneset(f"clone-{case.rand}", 2, strategy)
        cs["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_ALPINE
        cs["spec"]["lifecycle"] = {"inPlaceUpdate": {"labelsHandler": {hook: "true"}}}
        cs["spec"]["template"]["metadata"]["labels"][hook] = "true"
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, 120
        created = await case.create(cs)
        name = created["metadata"]["name"]
        assert created["spec"]["updateStrategy"]["type"] == "InPlaceIfPossible"
        await case.eventually_status(name, "readyReplicas", 2)
        await case.eventually_progressing(name, AVAILABLE)
        assert len(await case.pods(name)) == 2

        def mainline(obj):
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_MAINLINE_ALPINE

        await case.update(name, mainline)
        await case.generation_observed(name)

        async def groups() -> tuple[list[dict], list[dict], list[int]]:
            """upstream's groupPodsByRevision: (updated, current, indexes of PreparingUpdate pods)."""
            revision = (await case.get(name))["status"]["updateRevision"]
            pods = await case.pods(name)
            updated = [p for p in pods if equal_to_revision_hash(p, revision)]
            current = [p for p in pods if not equal_to_revision_hash(p, revision)]
            preparing = [
                i
                for i, p in enumerate(pods)
                if p["metadata"]["labels"].get(LIFECYCLE_STATE) == "PreparingUpdate"
            ]
            return updated, current, preparing

        async def counts() -> tuple[int, int, int]:
            updated, current, preparing = await groups()
            return len(updated), len(current), len(preparing)

        await case.eventually(counts, (0, 2, 1), "2 current, 1 of them PreparingUpdate")

        # rebuild one old-version pod (not the PreparingUpdate one): it comes back at the current revision
        _, current, _ = await groups()
        rebuilt = next(
            p for p in current if p["metadata"]["labels"].get(LIFECYCLE_STATE) != "PreparingUpdate"
        )
        await case.kubectl("delete", "pod", rebuilt["metadata"]["name"], "--wait=false")

        async def rebuilt_counts():
            names = {p["metadata"]["name"] for p in await case.pods(name)}
            if rebuilt["metadata"]["name"] in names or len(names) != 2:
                return None
            return await counts()

        await case.eventually(rebuilt_counts, (0, 2, 1), "rebuilt pod at the current revision")

        revision = (await case.get(name))["status"]["updateRevision"]
        await case.eventually_progressing(name, deadline_exceeded(revision), timeout=240)
        condition = await case.progressing(name)

        def three(obj):
            obj["spec"]["replicas"] = 3

        await case.update(name, three)

        async def scaled_counts():
            if len(await case.pods(name)) != 3:
                return None
            return await counts()

        await case.eventually(scaled_counts, (0, 3, 1), "scaled pod at the current revision")

        # let the PreparingUpdate pod go to the update revision
        _, _, preparing = await groups()
        pods = await case.pods(name)
        await case.kubectl("label", "pod", pods[preparing[0]]["metadata"]["name"], f"{hook}-")
        await case.eventually(counts, (1, 2, 0), "one pod updated")

        def no_partition(obj):
            obj["spec"]["updateStrategy"].pop("partition", None)
            obj["spec"]["updateStrategy"]["maxUnavailable"] = "100%"

        await case.update(name, no_partition)
        await case.eventually(counts, (1, 2, 2), "the two others PreparingUpdate")

        _, current, _ = await groups()
        for pod in current:
            await case.kubectl("label", "pod", pod["metadata"]["name"], f"{hook}-")
        await case.eventually(counts, (3, 0, 0), "all three updated")
        assert await case.progressing(name) == condition


async def _change_and_wait_ready(
    case: Case, name: str, replicas: int, change: Callable[[dict[str, Any]], None]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """upstream's changeCloneSetAndWaitReady: update, wait all updated+ready at the observed generation
    and Available; the pods and the claims, every claim belonging to a live instance."""
    await case.update(name, change)
    await case.eventually_status(name, "replicas", replicas)

    async def updated_ready() -> int:
        cs = await case.get(name)
        status = cs.get("status") or {}
        if status.get("observedGeneration") != cs["metadata"]["generation"]:
            return -1
        return status.get("updatedReadyReplicas", 0)

    await case.eventually(updated_ready, replicas, f"{name} updatedReadyReplicas")
    await case.eventually_progressing(name, AVAILABLE)
    pods = await case.pods(name)
    assert len(pods) == replicas
    ids = {p["metadata"]["labels"][INSTANCE_ID] for p in pods}
    pvcs = await case.pvcs()
    for pvc in pvcs:
        assert pvc["metadata"]["labels"][INSTANCE_ID] in ids
    return pods, pvcs


def _ids(pods: list[dict[str, Any]]) -> set[str]:
    return {p["metadata"]["labels"][INSTANCE_ID] for p in pods}


def _names(objs: list[dict[str, Any]]) -> set[str]:
    return {o["metadata"]["name"] for o in objs}


def _check_recreated(
    before: tuple[list[dict], list[dict]], after: tuple[list[dict], list[dict]], recreate: bool, replicas: int
) -> None:
    """checkPodsDoRecreate + checkPVCsDoRecreate."""
    old_pods, old_pvcs = before
    pods, pvcs = after
    assert len(pods) == replicas
    for pod in pods:
        assert (pod["metadata"]["labels"][INSTANCE_ID] in _ids(old_pods)) == (not recreate)
    assert len(pvcs) == replicas * 2
    for pvc in pvcs:
        instance = pvc["metadata"]["labels"][INSTANCE_ID]
        assert instance in _ids(pods)
        assert (instance in _ids(old_pods)) == (not recreate)
        assert (pvc["metadata"]["name"] in _names(old_pvcs)) == (not recreate)


def _check_sizes(pvcs: list[dict[str, Any]], size: Callable[[str], str]) -> None:
    for pvc in pvcs:
        assert pvc["spec"]["resources"]["requests"]["storage"] == size(pvc["metadata"]["name"])


@pytest.mark.timeout(900)
async def test_update_with_volume_claim_template_changes(kruise_sandbox_all_gates: Cluster):
    """CloneSet Update with VolumeClaimTemplate changes"""
    replicas = 4
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", replicas, {"type": "ReCreate"})
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, TEN_MINUTES
        cs["spec"]["template"]["spec"]["containers"][0]["image"] = NGINX_ALPINE
        cs["spec"]["volumeClaimTemplates"] = [_claim("data-vol1"), _claim("data-vol2")]
        created = await case.create(cs)
        name = created["metadata"]["name"]
        assert created["spec"]["updateStrategy"]["type"] == "ReCreate"
        state = await _change_and_wait_ready(case, name, replicas, lambda obj: None)

        def vol1_2gi(claim: str) -> str:
            return "2Gi" if "data-vol1" in claim else "1Gi"

        # image + claim size: the pods and their claims are recreated
        def image_and_vct(obj):
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = NEW_NGINX_IMAGE
            obj["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"] = {"storage": "2Gi"}
            obj["spec"]["updateStrategy"] = {"type": "InPlaceIfPossible"}

        after = await _change_and_wait_ready(case, name, replicas, image_and_vct)
        _check_recreated(state, after, recreate=True, replicas=replicas)
        _check_sizes(after[1], vol1_2gi)
        state = after

        # only a claim size: nothing is recreated, the claims keep their sizes
        def vct_only(obj):
            obj["spec"]["volumeClaimTemplates"][1]["spec"]["resources"]["requests"] = {"storage": "2Gi"}
            obj["spec"]["updateStrategy"] = {"type": "InPlaceIfPossible"}

        after = await _change_and_wait_ready(case, name, replicas, vct_only)
        _check_recreated(state, after, recreate=False, replicas=replicas)
        _check_sizes(after[1], vol1_2gi)
        state = after

        # the image, after the size change of the previous step: recreated with both claims at 2Gi
        def image_only(obj):
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = REDIS_IMAGE
            obj["spec"]["updateStrategy"] = {"type": "InPlaceIfPossible"}

        after = await _change_and_wait_ready(case, name, replicas, image_only)
        _check_recreated(state, after, recreate=True, replicas=replicas)
        _check_sizes(after[1], lambda claim: "2Gi")
        state = after

        # InPlaceOnly with an image change: in place
        def in_place_only_image(obj):
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = HTTPD_IMAGE
            obj["spec"]["updateStrategy"] = {"type": "InPlaceOnly"}

        after = await _change_and_wait_ready(case, name, replicas, in_place_only_image)
        _check_recreated(state, after, recreate=False, replicas=replicas)
        _check_sizes(after[1], lambda claim: "2Gi")
        state = after

        # InPlaceOnly with image and claim changes: in place, the claims unchanged
        def in_place_only_image_and_vct(obj):
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = REDIS_IMAGE
            for vct in obj["spec"]["volumeClaimTemplates"]:
                vct["spec"]["resources"]["requests"] = {"storage": "3Gi"}
            obj["spec"]["updateStrategy"] = {"type": "InPlaceOnly"}

        after = await _change_and_wait_ready(case, name, replicas, in_place_only_image_and_vct)
        _check_recreated(state, after, recreate=False, replicas=replicas)
        _check_sizes(after[1], lambda claim: "2Gi")


@pytest.mark.timeout(300)
async def test_change_resource_and_qos_recreates(kruise_sandbox_all_gates: Cluster):
    """change resource and qos -> succeed to recreate"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 1, INPLACE)
        template = cs["spec"]["template"]
        template["spec"]["containers"][0]["image"] = NGINX_IMAGE
        template["metadata"]["labels"]["test-env"] = "foo"
        template["spec"]["containers"][0]["env"].append(
            {"name": "TEST_ENV", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['test-env']"}}}
        )
        cs["spec"]["minReadySeconds"], cs["spec"]["progressDeadlineSeconds"] = 10, 600
        name = await case.created_and_available(cs, 1)
        [old] = await case.pods(name)

        def guaranteed(obj):
            obj["spec"]["template"]["spec"]["containers"][0]["resources"] = {
                "requests": {"cpu": "1", "memory": "1Gi"},
                "limits": {"cpu": "1", "memory": "1Gi"},
            }

        await case.update(name, guaranteed)
        await case.updated_and_available(name, 1)
        [new] = await case.pods(name)
        assert new["metadata"]["uid"] != old["metadata"]["uid"]
