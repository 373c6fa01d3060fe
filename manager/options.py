"""kruise-manager's command line, with upstream's flag names and defaults.

Parsing is separate from running so every flag error is found before anything connects, and the
message names the flag the way upstream's (pflag) errors do.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kruise.api.features import FeatureGateError, FeatureGates
from kruise.kube.leaderelection import LeaderElectionConfig


@dataclass(frozen=True)
class Address:
    host: str
    port: int


@dataclass(frozen=True)
class Options:
    kubeconfig: str | None = None
    leader_election: bool = True
    leader_election_namespace: str = "kruise-system"
    leader_election_id: str = "kruise-manager"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    metrics_addr: Address = Address("0.0.0.0", 8080)
    health_probe_addr: Address = Address("0.0.0.0", 8000)
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    qps: float = 30.0
    burst: int = 50
    workers: Mapping[str, int] = field(default_factory=dict)
    controllers: tuple[str, ...] = ("*",)
    namespace: str = "kruise-system"
    sync_period: float = 0.0
    log_level: str = "info"
    logging_format: str = "auto"
    nodeimage_creation_delay: float = 30.0
    assign_bcj_pods_by_scheduler: bool = True
    webhook_service_name: str = ""  # wait for this Service's ready endpoints before leading ("" = don't)
    expectation_timeout: float = 300.0  # `--expectation-timeout`: when lost events stop blocking a controller
    cache_sync_timeout: float = (
        120.0  # `--cache-sync-timeout`: how long the leader waits for its caches to list
    )

    def leader_election_config(self) -> LeaderElectionConfig:
        return LeaderElectionConfig(
            namespace=self.leader_election_namespace,
            name=self.leader_election_id,
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
        )

    def controller_enabled(self, name: str) -> bool:
        """controller-runtime's `--controllers` syntax: `*` all, `name` on, `-name` off (explicit wins)."""
        if f"-{name}" in self.controllers:
            return False
        return name in self.controllers or "*" in self.controllers


def parse_address(flag: str, value: str) -> Address:
    """`:8080`, `127.0.0.1:8080` or `0` (disabled is not supported: the probes are always served)."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{flag}: invalid address {value!r}: want [host]:port")
    return Address(host or "0.0.0.0", int(port))


def parse_workers(value: str) -> dict[str, int]:
    workers: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in value.split(","))):
        name, sep, count = part.partition("=")
        if not sep or not name or not count.isdigit() or int(count) < 1:
            raise ValueError(f"--controller-workers: invalid entry {part!r}: want name=N with N >= 1")
        workers[name] = int(count)
    return workers


_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(flag: str, text: str) -> float:
    """Go's time.ParseDuration (`30s`, `1m30s`, `500ms`, `0`) in seconds, as upstream's flags take it."""
    text = text.strip()
    if text in ("0", "-0", "+0"):
        return 0.0
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f'{flag}: invalid duration "{text}" (e.g. 30s, 1m30s, 500ms)')
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def parse_period(flag: str, text: str) -> float:
    """Upstream's `--sync-period` is a Go duration (the chart's `manager.resyncPeriod`); plain seconds
    are also taken, as kruise-py's flag took them first."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = parse_duration(flag, text)
    if seconds < 0:
        raise ValueError(f'{flag}: invalid duration "{text}": must not be negative')
    return seconds


_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def parse_go_bool(flag: str, text: str) -> bool:
    """Go's strconv.ParseBool, which pflag's boolean flags use (`--flag`, `--flag=false`, `--flag=0`)."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    raise ValueError(f'{flag}: invalid boolean "{text}" (want true or false)')


def parse_args(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Options:
    env = os.environ if env is None else env
    p = argparse.ArgumentParser(prog="kruise-manager", description="Kruise controller manager.")
    p.add_argument("--kubeconfig", default=env.get("KUBECONFIG"))
    p.add_argument("--enable-leader-election", default="true", choices=("true", "false"))
    namespace = env.get("POD_NAMESPACE", "kruise-system")
    p.add_argument("--leader-election-namespace", default=namespace)
    p.add_argument("--leader-election-id", default="kruise-manager")
    p.add_argument("--leader-election-lease-duration", type=float, default=15.0)
    p.add_argument("--leader-election-renew-deadline", type=float, default=10.0)
    p.add_argument("--leader-election-retry-period", type=float, default=2.0)
    p.add_argument("--metrics-addr", default=":8080")
    p.add_argument("--health-probe-addr", default=":8000")
    p.add_argument("--feature-gates", default="")
    p.add_argument("--rest-config-qps", type=float, default=30.0)
    p.add_argument("--rest-config-burst", type=int, default=50)
    p.add_argument(
        "--controller-workers", default="", help="per controller, e.g. cloneset=5,podunavailablebudget=2"
    )
    p.add_argument("--controllers", default="*", help="'*' for all, 'name' to enable, '-name' to disable")
    p.add_argument("--namespace", default=namespace, help="the namespace kruise runs in")
    p.add_argument(
        "--sync-period", default="0", help="informer resync: a duration (30s, 10m) or seconds; 0: never"
    )
    p.add_argument("--log-level", default="info")
    p.add_argument("--logging-format", default="auto", choices=("auto", "json", "console"))
    p.add_argument(
        "--nodeimage-creation-delay", default="30s", help="wait after a Node turns Ready before its NodeImage"
    )
    p.add_argument(
        "--assign-bcj-pods-by-scheduler",
        nargs="?",
        const="true",
        default="true",
        help="bind BroadcastJob pods by node affinity through the scheduler (false: set spec.nodeName)",
    )
    p.add_argument(
        "--expectation-timeout",
        default="5m",
        help="how long scale/resourceVersion expectations may wait for the informer before the controller "
        "treats the events as lost (upstream's flag, a duration, default 5m)",
    )
    p.add_argument(
        "--cache-sync-timeout",
        default="120",
        help="how long the leader waits for every informer cache to list before it gives up and exits, "
        "seconds or a duration (2m); controller-runtime's CacheSyncTimeout, 2 minutes",
    )
    p.add_argument(
        "--webhook-service-name",
        default="",
        help="the kruise-webhook Service in --namespace; the leader starts controllers once it has a ready "
        "endpoint (upstream's manager waits for its in-process webhook); empty: do not wait",
    )
    a = p.parse_args(argv)
    try:
        metrics = parse_address("--metrics-addr", a.metrics_addr)
        health = parse_address("--health-probe-addr", a.health_probe_addr)
        workers = parse_workers(a.controller_workers)
        gates = FeatureGates.from_flag(a.feature_gates, env=env)
        options = Options(
            kubeconfig=a.kubeconfig, leader_election=a.enable_leader_election == "true",
            leader_election_namespace=a.leader_election_namespace, leader_election_id=a.leader_election_id,
            lease_duration=a.leader_election_lease_duration, renew_deadline=a.leader_election_renew_deadline,
            retry_period=a.leader_election_retry_period, metrics_addr=metrics, health_probe_addr=health,
            feature_gates=gates, qps=a.rest_config_qps, burst=a.rest_config_burst, workers=workers,
            controllers=tuple(c.strip() for c in a.controllers.split(",") if c.strip()),
            namespace=a.namespace, sync_period=parse_period("--sync-period", a.sync_period),
            log_level=a.log_level, logging_format=a.logging_format,
            nodeimage_creation_delay=parse_duration("--nodeimage-creation-delay", a.nodeimage_creation_delay),
            assign_bcj_pods_by_scheduler=parse_go_bool(
                "--assign-bcj-pods-by-scheduler", a.assign_bcj_pods_by_scheduler
            ),
            webhook_service_name=a.webhook_service_name,
            expectation_timeout=parse_duration("--expectation-timeout", a.expectation_timeout),
            cache_sync_timeout=parse_period("--cache-sync-timeout", a.cache_sync_timeout),
        )  # fmt: skip
        options.leader_election_config()  # validates the lease timings
    except FeatureGateError as exc:
        p.error(f"--feature-gates: {exc}")
    except ValueError as exc:
        p.error(str(exc))
    if options.expectation_timeout <= 0:
        p.error(f'--expectation-timeout: invalid duration "{a.expectation_timeout}": must be greater than 0')
    if options.cache_sync_timeout <= 0:
        p.error(f'--cache-sync-timeout: invalid duration "{a.cache_sync_timeout}": must be greater than 0')
    if options.qps <= 0 or options.burst <= 0:
        p.error("--rest-config-qps and --rest-config-burst: must be greater than 0")
    return options
