"""Upstream's UnitedDeployment e2e (openkruise/kruise v1.9.0 test/e2e/apps/v1alpha1/uniteddeployment.go),
translated to kubectl on the AllAlpha sandbox: same objects, same steps, same assertions.
docs/upstream-e2e.md maps every upstream case to its test here.

Upstream draws each run's template kind at random; here every case names one (see
uniteddeployment_tester), the six together covering all four kinds. The adaptive cases pin subsets to
a label of one node (kind's `ci-testing-worker`, here the first sandbox node) and wait on the
controller's real-time timers (`rescheduleCriticalSeconds`, `unschedulableDuration`), which
`--speed` does not shorten."""

from __future__ import annotations

import pytest
from harness import Cluster
from uniteddeployment_tester import (
    ADVANCED_STATEFULSET,
    CLONESET,
    DEPLOYMENT,
    STATEFULSET,
    NodeLabels,
    UnitedDeploymentManager,
    replicas_map,
    unschedulable_map,
)
from upstream_kit import upstream_case

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def adaptive(reschedule_critical: int, unschedulable_duration: int, reserve: bool = False) -> dict:
    strategy: dict = {
        "rescheduleCriticalSeconds": reschedule_critical,
        "unschedulableDuration": unschedulable_duration,
    }
    if reserve:
        strategy["reserveUnschedulablePods"] = True
    return {"type": "Adaptive", "adaptive": strategy}


async def test_united_deployment_with_elastic_allocator(kruise_sandbox_all_gates: Cluster):
    """united deployment with elastic allocator"""
    async with upstream_case(kruise_sandbox_all_gates, "uniteddeployment") as case:
        ud = UnitedDeploymentManager(case, "ud-elastic-test", STATEFULSET)
        ud.add_subset("subset-0", None, 1, 2)
        ud.add_subset("subset-1", None, 1, 2)
        ud.add_subset("subset-2", None, 1, None)

        # test replicas equals to sum of min replicas
        await ud.create(3)
        await ud.check_subsets(replicas_map(1, 1, 1))

        # test replicas more than sum of min replicas
        await ud.scale(7)
        await ud.check_subsets(replicas_map(2, 2, 3))

        # test replicas less than sum of min replicas
        await ud.scale(1)
        await ud.check_subsets(replicas_map(1, 0, 0))


async def test_united_deployment_with_specific_allocator(kruise_sandbox_all_gates: Cluster):
    """united deployment with specific allocator"""
    async with upstream_case(kruise_sandbox_all_gates, "uniteddeployment") as case:
        ud = UnitedDeploymentManager(case, "ud-specific-test", ADVANCED_STATEFULSET)
        ud.add_subset("subset-0", "25%", None, None)
        ud.add_subset("subset-1", "25%", None, None)
        ud.add_subset("subset-2", None, None, None)

        # create ud
        await ud.create(3)
        await ud.check_subsets(replicas_map(1, 1, 1))

        # scale up
        await ud.scale(4)
        await ud.check_subsets(replicas_map(1, 1, 2))

        # scale down
        await ud.scale(1)
        await ud.check_subsets(replicas_map(0, 0, 1))


async def test_adaptive_united_deployment_basic(kruise_sandbox_all_gates: Cluster):
    """adaptive united deployment basic"""
    async with upstream_case(kruise_sandbox_all_gates, "uniteddeployment") as case:
        nodes = NodeLabels(case)
        try:
            ud = UnitedDeploymentManager(case, "adaptive-ud-elastic-test", DEPLOYMENT)
            ud.spec["topology"]["scheduleStrategy"] = adaptive(10, 10)
            ud.add_subset("subset-0", None, None, 2)
            ud.add_subset("subset-1", None, None, 2)
            ud.add_subset("subset-2", None, None, None)
            # make subset-1 unschedulable
            node_key = "ud-e2e/adaptive-ud"
            ud.pin_subset(1, node_key, "haha")
            await nodes.set(node_key, "")
            # creating united deployment
            await ud.create_only(3)

            # wait for rescheduling, will take long
            await ud.check_unschedulable_status(unschedulable_map(False, True, False))
            await ud.check_subset_pods(replicas_map(2, 0, 1))

            # scale up while unschedulable
            await ud.scale(5)
            await ud.check_subset_pods(replicas_map(2, 0, 3))

            # scale down while unschedulable
            await ud.scale(4)
            await ud.check_subset_pods(replicas_map(2, 0, 2))

            # wait subset recovery, will take long
            await ud.check_unschedulable_status(unschedulable_map(False, False, False))
            await ud.check_subset_pods(replicas_map(2, 0, 2))

            # scale up after recovery
            await ud.scale(5)
            await ud.check_subset_pods(replicas_map(2, 1, 2))

            # scale down after recovery, pending first
            await ud.scale(4)
            await ud.check_subset_pods(replicas_map(2, 0, 2))

            # scale down after recovery, goes to running
            await ud.scale(3)
            await ud.check_subset_pods(replicas_map(2, 0, 1))

            # create new subset
            ud.add_subset("subset-3", None, 2, None)
            await ud.update()

            # waiting final status after scaling up to new subset, will take long
            await ud.scale(6)
            await ud.check_unschedulable_status(unschedulable_map(False, False, False, False))
            await ud.check_subset_pods(replicas_map(2, 0, 2, 2))

            # fix subset-1 and wait recover
            await nodes.set(node_key, "haha")
            await ud.check_unschedulable_status(unschedulable_map(False, False, False, False))

            # waiting final status after deleting new subset
            ud.spec["topology"]["subsets"] = ud.spec["topology"]["subsets"][:3]
            await ud.update()
            await ud.check_unschedulable_status(unschedulable_map(False, False, False))
            await ud.check_subset_pods(replicas_map(2, 2, 2))

            # scale down after fixed (upstream sleeps 10s first: the pods of subset-1 get ready)
            await ud.wait_all_pods_ready()
            await ud.scale(3)
            await ud.check_unschedulable_status(unschedulable_map(False, False, False))
            await ud.check_subset_pods(replicas_map(2, 1, 0))

            # scale up after fixed
            await ud.scale(5)
            await ud.check_unschedulable_status(unschedulable_map(False, False, False))
            await ud.check_subset_pods(replicas_map(2, 2, 1))
        finally:
            await nodes.clear()


async def test_adaptive_united_deployment_with_min_replicas(kruise_sandbox_all_gates: Cluster):
    """adaptive united deployment with min replicas"""
    async with upstream_case(kruise_sandbox_all_gates, "uniteddeployment") as case:
        nodes = NodeLabels(case)
        try:
            ud = UnitedDeploymentManager(case, "adaptive-ud-with-min", CLONESET)
            ud.spec["topology"]["scheduleStrategy"] = adaptive(10, 20)
            ud.add_subset("subset-0", None, 1, 2)
            ud.add_subset("subset-1", None, None, None)
            # make subset-0 unschedulable
            node_key = "ud-e2e/adaptive-ud-min"
            ud.pin_subset(0, node_key, "haha")
            await nodes.set(node_key, "")
            # creating united deployment
            await ud.create_only(3)

            # wait for rescheduling, will take long
            await ud.check_unschedulable_status(unschedulable_map(True, False))
            await ud.check_subset_pods(replicas_map(1, 2))

            # scale up while unschedulable
            await ud.scale(4)
            await ud.check_subset_pods(replicas_map(1, 3))

            # scale down while unschedulable
            await ud.scale(3)
            await ud.check_subset_pods(replicas_map(1, 2))

            # wait subset recovery, will take long
            # If pending Pods persist, subset-0 will never recover. So we have to fix it.
            await nodes.set(node_key, "haha")
            await ud.check_unschedulable_status(unschedulable_map(False, False))
            await ud.check_subset_pods(replicas_map(1, 2))

            # scale up after recovery
            await ud.scale(5)
            await ud.check_subset_pods(replicas_map(2, 3))

            # scale down after recovery (upstream sleeps 10s first: the new pods get ready)
            await ud.wait_all_pods_ready()
            await ud.scale(4)
            await ud.check_subset_pods(replicas_map(2, 2))

            # scale down after recovery again
            await ud.scale(3)
            await ud.check_subset_pods(replicas_map(2, 1))

            # scale down after recovery again and again
            await ud.scale(1)
            await ud.check_subset_pods(replicas_map(1, 0))
        finally:
            await nodes.clear()


async def reserved_case(cluster: Cluster, kind: str, min_replicas: int | None, keys: tuple[str, str]) -> None:
    """The two reservation cases share every step; with `min_replicas` subset-0/1 keep that many
    reserved pods at the end instead of none (upstream's second case), and its shorter
    `rescheduleCriticalSeconds`."""
    async with upstream_case(cluster, "uniteddeployment") as case:
        nodes = NodeLabels(case)
        try:
            ud = UnitedDeploymentManager(case, "adaptive-ud-tr-test", kind)
            ud.spec["topology"]["scheduleStrategy"] = adaptive(20 if min_replicas is None else 10, 1, True)
            ud.add_subset("subset-0", None, min_replicas, None)
            ud.add_subset("subset-1", None, min_replicas, None)
            ud.add_subset("subset-2", None, None, None)
            subset0_key, subset1_key = keys
            ud.pin_subset(0, subset0_key, "true")
            ud.pin_subset(1, subset1_key, "true")
            # initializing node labels
            await nodes.set(subset0_key, "false")
            await nodes.set(subset1_key, "false")
            # creating united deployment
            await ud.create_only(2)

            held = 2 if min_replicas is None else min_replicas
            # wait for rescheduling, will take long
            await ud.check_unschedulable_status(unschedulable_map(True, True, False))
            await ud.check_reserved_pods(replicas_map(held, held, 2), replicas_map(held, held, 0))

            # scale up while unschedulable
            await ud.scale(4)
            await ud.check_reserved_pods(replicas_map(held, held, 4), replicas_map(held, held, 0))

            # scale down while unschedulable
            await ud.scale(2)
            await ud.check_reserved_pods(replicas_map(held, held, 2), replicas_map(held, held, 0))

            # scale up again
            await ud.scale(4)
            await ud.check_reserved_pods(replicas_map(held, held, 4), replicas_map(held, held, 0))

            # update
            ud.set_image("busybox:1.33")
            await ud.update()
            await ud.check_reserved_pods(replicas_map(held, held, 4), replicas_map(held, held, 0))
            await ud.check_pod_image("busybox:1.33")

            # recover subset-0
            await nodes.set(subset0_key, "true")
            if min_replicas is None:
                await ud.check_unschedulable_status(unschedulable_map(False, False, False))
                await ud.check_reserved_pods(replicas_map(4, 0, 0), replicas_map(0, 0, 0))
            else:
                await ud.check_unschedulable_status(unschedulable_map(False, True, False))
                await ud.check_reserved_pods(replicas_map(4, 1, 0), replicas_map(0, 1, 0))

            # scale up after recovery
            await ud.scale(5)
            if min_replicas is None:
                await ud.check_reserved_pods(replicas_map(5, 0, 0), replicas_map(0, 0, 0))
            else:
                await ud.check_reserved_pods(replicas_map(5, 1, 0), replicas_map(0, 1, 0))
        finally:
            await nodes.clear()


async def test_adaptive_united_deployment_with_unschedulable_pods_reserved(kruise_sandbox_all_gates: Cluster):
    """adaptive united deployment with unschedulable pods reserved"""
    keys = ("ud-e2e/temp-adaptive-subset-0", "ud-e2e/temp-adaptive-subset-1")
    await reserved_case(kruise_sandbox_all_gates, CLONESET, None, keys)


async def test_adaptive_united_deployment_with_reserved_pods_and_min_replicas(
    kruise_sandbox_all_gates: Cluster,
):
    """adaptive united deployment with reserved pods and min replicas"""
    keys = ("ud-e2e/temp-adaptive-subset-min-0", "ud-e2e/temp-adaptive-subset-min-1")
    await reserved_case(kruise_sandbox_all_gates, DEPLOYMENT, 1, keys)
