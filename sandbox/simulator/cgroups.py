"""A container's requests and limits as the cgroup settings the kubelet hands its runtime.

The same numbers go into CreateContainer (a new container starts with them) and into
UpdateContainerResources (an in-place resize the container keeps running through), so a resize
really changes what the kernel enforces on a real node. The kubelet's conversion (pkg/kubelet/cm,
``MilliCPUToShares`` / ``MilliCPUToQuota``): cpu shares from the request (1024 per cpu, at least
2), a CFS quota over a 100 ms period from the cpu limit (at least 1 ms), and the memory limit in
bytes; a resource the spec does not limit stays 0, which the CRI reads as "not set".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kruise.sandbox.cri import LinuxResources
from kruise.sandbox.quantity import milli, whole

CPU_PERIOD = 100_000  # microseconds, the kubelet's default CFS period
MIN_SHARES = 2
SHARES_PER_CPU = 1024
MIN_QUOTA = 1_000


def linux_resources(resources: Mapping[str, Any] | None) -> LinuxResources:
    """The cgroup settings of a container whose ``resources`` (requests/limits) are these."""
    resources = resources or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    # the API defaults a missing request to the limit; read it the same way for unvalidated input
    cpu_request = requests.get("cpu", limits.get("cpu"))
    shares = max(MIN_SHARES, milli(cpu_request) * SHARES_PER_CPU // 1000) if cpu_request else MIN_SHARES
    quota = 0
    if limits.get("cpu"):
        quota = max(MIN_QUOTA, milli(limits["cpu"]) * CPU_PERIOD // 1000)
    memory = whole(limits["memory"]) if limits.get("memory") else 0
    return LinuxResources(
        cpu_period=CPU_PERIOD if quota else 0,
        cpu_quota=quota,
        cpu_shares=shares,
        memory_limit_in_bytes=memory,
    )
