"""kruise-daemon flags, named as upstream's daemon names them; bad values exit 2 naming the flag."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kruise.api.features import FeatureGateError, FeatureGates


@dataclass(frozen=True)
class Options:
    node_name: str
    kubeconfig: str | None
    socket_file: str | None
    host_run_dir: str
    addr_host: str
    addr_port: int
    feature_gates: FeatureGates
    qps: float
    burst: int
    log_level: str
    logging_format: str


def _addr(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"must be [host]:port, got {value!r}")
    return host or "0.0.0.0", int(port)


def parse_args(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Options:
    env = os.environ if env is None else env
    p = argparse.ArgumentParser(prog="kruise-daemon", description="kruise-py's node agent (one per node).")
    p.add_argument("--node-name", default=env.get("NODE_NAME", ""), help="this node (default: env NODE_NAME)")
    p.add_argument("--kubeconfig", default=None, help="kubeconfig path (default: in-cluster or KUBECONFIG)")
    p.add_argument(
        "--socket-file", default=None, help="CRI runtime socket; probed under --host-run-dir if unset"
    )
    p.add_argument("--host-run-dir", default="/hostvarrun", help="the host's /var/run as mounted in the pod")
    p.add_argument("--addr", default=":10221", type=_addr, help="serves /metrics and /healthz")
    p.add_argument("--feature-gates", default="", help="A=true,B=false (the same gates as kruise-manager)")
    p.add_argument("--rest-config-qps", type=float, default=0.0, help="0: the client default")
    p.add_argument("--rest-config-burst", type=int, default=0, help="0: the client default")
    p.add_argument("--log-level", default="info")
    p.add_argument("--logging-format", default="auto", choices=("auto", "json", "console"))
    a = p.parse_args(argv)
    if not a.node_name:
        p.error("--node-name: required (or set env NODE_NAME)")
    try:
        gates = FeatureGates.from_flag(a.feature_gates)
    except (ValueError, FeatureGateError) as exc:
        p.error(f"--feature-gates: {exc}")
    host, port = a.addr
    return Options(
        node_name=a.node_name, kubeconfig=a.kubeconfig, socket_file=a.socket_file,
        host_run_dir=a.host_run_dir, addr_host=host, addr_port=port, feature_gates=gates,
        qps=a.rest_config_qps or 30.0, burst=a.rest_config_burst or 50, log_level=a.log_level,
        logging_format=a.logging_format,
    )  # fmt: skip
