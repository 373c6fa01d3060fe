"""Upstream's CloneSet e2e, context "CloneSet Scaling" (openkruise/kruise v1.9.0
test/e2e/apps/v1alpha1/cloneset.go), translated to kubectl on the AllAlpha sandbox: same objects, same
steps, same assertions. docs/upstream-e2e.md maps every upstream case to its test here."""

from __future__ import annotations

import itertools
from datetime import datetime

import pytest
from cloneset_tester import (
    AVAILABLE,
    LIFECYCLE_STATE,
    PAUSED,
    TEN_MINUTES,
    UPDATED,
    Case,
    upstream_case,
)
from harness import Cluster


def _time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


async def test_scales_in_normal_cases(kruise_sandbox_all_gates: Cluster):
    """scales in normal cases"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 3)
        cs["spec"]["progressDeadlineSeconds"] = TEN_MINUTES
        created = await case.create(cs)
        name = created["metadata"]["name"]
        assert created["spec"]["updateStrategy"]["type"] == "ReCreate"
        assert created["spec"]["updateStrategy"]["maxUnavailable"] == "20%"

        await case.eventually_status(name, "replicas", 3, timeout=30)
        await case.eventually_status(name, "readyReplicas", 3)
        await case.eventually_progressing(name, AVAILABLE)


async def test_scales_with_min_ready_seconds_and_scale_strategy(kruise_sandbox_all_gates: Cluster):
    """scales with minReadySeconds and scaleStrategy

    Upstream also bounds each gap from above (minReadySeconds + 2 s); on a shared machine that is a
    wall-clock assertion, so only the behaviour — no pod before the previous one is available — is
    asserted."""
    replicas = 4
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", replicas)
        cs["spec"]["minReadySeconds"] = 10
        cs["spec"]["progressDeadlineSeconds"] = TEN_MINUTES
        cs["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] = "IfNotPresent"
        cs["spec"]["scaleStrategy"] = {"maxUnavailable": 1}
        name = (await case.create(cs))["metadata"]["name"]

        await case.eventually_progressing(name, UPDATED)
        await case.eventually_status(name, "replicas", replicas)
        await case.eventually_status(name, "readyReplicas", replicas)
        await case.eventually_progressing(name, AVAILABLE)

        # check create time of pods
        pods = sorted(await case.pods(name), key=lambda p: _time(p["metadata"]["creationTimestamp"]))
        for previous, pod in itertools.pairwise(pods):
            ready = next(c for c in previous["status"]["conditions"] if c["type"] == "Ready")
            gap = _time(pod["metadata"]["creationTimestamp"]) - _time(ready["lastTransitionTime"])
            assert gap.total_seconds() >= 10, (pod["metadata"]["name"], gap)


async def test_pods_should_be_ready_when_paused(kruise_sandbox_all_gates: Cluster):
    """pods should be ready when paused=true"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        cs = case.new_cloneset(f"clone-{case.rand}", 3, {"type": "ReCreate", "paused": True})
        cs["spec"]["minReadySeconds"] = 60
        cs["spec"]["progressDeadlineSeconds"] = TEN_MINUTES
        name = (await case.create(cs))["metadata"]["name"]

        await case.eventually_status(name, "replicas", 3, timeout=30)
        await case.eventually_progressing(name, PAUSED)
        await case.eventually_status(name, "readyReplicas", 3)


async def _lifecycle_cloneset(case: Case, *, exclude_preparing_delete: bool) -> tuple[str, list[str]]:
    """Three pods with a preDelete label hook, all ready and available; their names."""
    cs = case.new_cloneset(f"clone-{case.rand}", 3)
    if exclude_preparing_delete:
        cs["metadata"]["labels"] = {"apps.kruise.io/cloneset-scaling-exclude-preparing-delete": "true"}
    cs["spec"]["template"]["metadata"]["labels"]["lifecycle-hook"] = "true"
    cs["spec"]["lifecycle"] = {"preDelete": {"labelsHandler": {"lifecycle-hook": "true"}}}
    cs["spec"]["progressDeadlineSeconds"] = TEN_MINUTES
    name = (await case.create(cs))["metadata"]["name"]

    await case.eventually_status(name, "replicas", 3, timeout=30)
    await case.eventually_status(name, "readyReplicas", 3)
    await case.eventually_progressing(name, AVAILABLE)
    old = await case.pods(name)
    assert len(old) == 3
    return name, [p["metadata"]["name"] for p in old]


async def _wait_preparing_delete(case: Case, pod: str) -> None:
    async def state():
        found = await case.pod(pod)
        assert found is not None, f"pod {pod} is gone"
        return found["metadata"]["labels"].get(LIFECYCLE_STATE)

    await case.eventually(state, "PreparingDelete", f"pod {pod} PreparingDelete", timeout=30)


async def _release_hook_and_wait_gone(case: Case, pod: str) -> None:
    """ "Remove lifecycle hook label and wait it to be deleted"."""
    await case.kubectl("label", "pod", pod, "lifecycle-hook-")
    await case.eventually(lambda: case.pod(pod), None, f"pod {pod} deleted", timeout=30)


@pytest.mark.timeout(300)
async def test_specific_delete_pod_scaling_exclude_preparing_delete_disabled(
    kruise_sandbox_all_gates: Cluster,
):
    """specific delete a Pod, when scalingExcludePreparingDelete is disabled"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        name, old = await _lifecycle_cloneset(case, exclude_preparing_delete=False)
        victim = old[0]
        await case.kubectl("label", "pod", victim, "apps.kruise.io/specified-delete=true")
        await _wait_preparing_delete(case, victim)

        # should not scale up
        await case.consistently(lambda: case.status(name, "replicas"), 3, "status.replicas", 5)
        await case.eventually_progressing(name, UPDATED, timeout=30)

        await _release_hook_and_wait_gone(case, victim)
        # a new pod is created and the two old pods keep running
        await case.eventually_status(name, "replicas", 3, timeout=30)
        new = await case.pods(name)
        assert len(new) == 3
        assert len({p["metadata"]["name"] for p in new} & set(old)) == 2
        await case.eventually_progressing(name, AVAILABLE, timeout=30)


@pytest.mark.timeout(300)
async def test_specific_scale_down_with_lifecycle_then_scale_up_exclude_preparing_delete(
    kruise_sandbox_all_gates: Cluster,
):
    """specific scale down with lifecycle and then scale up, when scalingExcludePreparingDelete is enabled"""
    async with upstream_case(kruise_sandbox_all_gates) as case:
        name, old = await _lifecycle_cloneset(case, exclude_preparing_delete=True)
        victim = old[0]

        def scale_down(obj):
            obj["spec"]["replicas"] = 2
            obj["spec"].setdefault("scaleStrategy", {})["podsToDelete"] = [victim]

        await case.update(name, scale_down)
        await _wait_preparing_delete(case, victim)
        assert (await case.get(name))["status"]["replicas"] == 3
        assert await case.progressing(name) == UPDATED

        def scale_up(obj):
            obj["spec"]["replicas"] = 3

        await case.update(name, scale_up)
        # the PreparingDelete pod does not count: a fourth pod is created
        await case.eventually_status(name, "replicas", 4, timeout=30)
        assert await case.progressing(name) == UPDATED

        await _release_hook_and_wait_gone(case, victim)
        await case.eventually_status(name, "replicas", 3, timeout=30)
        new = await case.pods(name)
        assert len(new) == 3
        assert len({p["metadata"]["name"] for p in new} & set(old)) == 2
        await case.eventually_progressing(name, AVAILABLE, timeout=30)
