"""Prometheus metrics of the runtime, named exactly as controller-runtime names them.

All metrics live in one registry (`REGISTRY`, prometheus-client's default) so the `/metrics`
endpoint of every kruise process shows them without wiring.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from kruise.kube.workqueue import WorkQueue

# controller-runtime uses ExponentialBuckets(10e-9, 10, 12) for queue and work durations.
_WORKQUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(12))

WORKQUEUE_DEPTH = Gauge("workqueue_depth", "Current depth of workqueue", ["name"])
WORKQUEUE_ADDS = Counter("workqueue_adds", "Total number of adds handled by workqueue", ["name"])
WORKQUEUE_QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in workqueue before being requested",
    ["name"],
    buckets=_WORKQUEUE_BUCKETS,
)
WORKQUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from workqueue takes.",
    ["name"],
    buckets=_WORKQUEUE_BUCKETS,
)
WORKQUEUE_RETRIES = Counter("workqueue_retries", "Total number of retries handled by workqueue", ["name"])

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile", "Total number of reconciliations per controller", ["controller", "result"]
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors",
    "Total number of reconciliation errors per controller",
    ["controller"],
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ["controller"],
    buckets=(
        0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
        1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
    ),
)  # fmt: skip
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers", "Number of currently used workers per controller", ["controller"]
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller",
    ["controller"],
)

REST_CLIENT_REQUESTS = Counter(
    "rest_client_requests",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
)

IS_LEADER = Gauge("kruise_manager_is_leader", "1 while this process holds the leader lease", ["name"])


class _InFlightCollector(Collector):
    """Computes unfinished-work gauges at scrape time from the live queues (no polling task)."""

    def __init__(self) -> None:
        self._queues: weakref.WeakSet[WorkQueue] = weakref.WeakSet()

    def track(self, queue: WorkQueue) -> None:
        self._queues.add(queue)

    def collect(self) -> Iterable[GaugeMetricFamily]:
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads.",
            labels=["name"],
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels=["name"],
        )
        for queue in list(self._queues):
            if not queue.name:
                continue
            total, oldest = queue.in_flight_seconds()
            unfinished.add_metric([queue.name], total)
            longest.add_metric([queue.name], oldest)
        yield unfinished
        yield longest


IN_FLIGHT = _InFlightCollector()
REGISTRY.register(IN_FLIGHT)
