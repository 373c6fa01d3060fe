"""Requests and limits -> the cgroup settings the kubelet hands the runtime (pkg/kubelet/cm's formulas)."""

from __future__ import annotations

from kruise.sandbox.cri import LinuxResources
from kruise.sandbox.simulator.cgroups import linux_resources


def test_requests_give_shares_and_limits_give_quota_and_memory() -> None:
    resources = {"requests": {"cpu": "200m", "memory": "200Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}
    assert linux_resources(resources) == LinuxResources(
        cpu_period=100_000, cpu_quota=100_000, cpu_shares=204, memory_limit_in_bytes=1 << 30
    )


def test_no_limits_leave_quota_and_memory_unset_and_no_request_gives_the_least_shares() -> None:
    assert linux_resources(None) == LinuxResources(cpu_shares=2)
    assert linux_resources({"requests": {"memory": "64Mi"}}) == LinuxResources(cpu_shares=2)


def test_a_cpu_limit_alone_is_the_request_and_a_tiny_one_keeps_the_least_quota() -> None:
    assert linux_resources({"limits": {"cpu": "500m"}}) == LinuxResources(
        cpu_period=100_000, cpu_quota=50_000, cpu_shares=512
    )
    assert linux_resources({"limits": {"cpu": "1m"}}).cpu_quota == 1_000
