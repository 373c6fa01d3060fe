"""kruise-py's own processes as sandbox components: what `kruise sandbox up` runs on top of the cluster.

The sandbox is a generic Kubernetes stand-in and knows nothing of kruise, so the wiring lives here, in
the CLI layer: the kruise namespace (Helm creates it in a real install), then `kruise-webhook` as a
real HTTPS process that writes its own certificates and webhook configurations, then `kruise-manager`
once that entry point exists.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from kruise.api.apisets import DEFAULT_API_SET
from kruise.kube.client import Client
from kruise.kube.errors import AlreadyExists
from kruise.kube.resources import NAMESPACES
from kruise.sandbox.cluster import Component, Sandbox
from kruise.sandbox.components import ProcessComponent
from kruise.sandbox.ports import reserve_port

KRUISE_NAMESPACE = "kruise-system"
DAEMON_CONFIG_NAMESPACE = "kruise-daemon-config"
"""Where kruise-manager copies ImagePullJob pull secrets for kruise-daemon (the chart creates it too)."""
WEBHOOK_READY = "kruise-webhook serving"
MANAGER_READY = "kruise-manager started"
DAEMON_READY = "kruise-daemon started"

LogSink = Callable[[str], None] | None
"""Where the processes' output lines go (None: kept only for error messages)."""


class KruiseNamespace:
    """Creates the namespace kruise runs in before its processes start (they keep their Secret there)."""

    def __init__(self, namespace: str = KRUISE_NAMESPACE) -> None:
        self.name = f"namespace/{namespace}"
        self.namespace = namespace

    async def start(self, sandbox: Sandbox) -> None:
        client = await Client.from_kubeconfig(sandbox.kubeconfig)
        try:
            body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}}
            with contextlib.suppress(AlreadyExists):
                await client.create(NAMESPACES, body)
        finally:
            await client.close()

    async def stop(self) -> None:
        """The namespace goes with the cluster."""


def webhook_component(
    cert_dir: Path, feature_gates: str = "", log: LogSink = None, log_dir: Path | None = None,
    api_set: str = DEFAULT_API_SET,
) -> ProcessComponent:  # fmt: skip
    """`kruise-webhook` on a reserved loopback port (`kruise.sandbox.ports`), called by URL (the sandbox
    has no Service routing for it)."""
    port = reserve_port()
    argv = [
        sys.executable, "-m", "kruise.webhook.main", "--kubeconfig", "{kubeconfig}",
        "--namespace", KRUISE_NAMESPACE, "--bind-address", "127.0.0.1", "--port", str(port),
        "--webhook-url", f"https://127.0.0.1:{port}", "--cert-dir", str(cert_dir),
        "--shutdown-grace-seconds", "1", "--api-set", api_set,
    ]  # fmt: skip
    if feature_gates:
        argv += ["--feature-gates", feature_gates]
    return ProcessComponent(
        "kruise-webhook",
        argv,
        ready_line=WEBHOOK_READY,
        log=log,
        log_file=_log_file(log_dir, "kruise-webhook"),
    )


def manager_available() -> bool:
    return importlib.util.find_spec("kruise.manager.main") is not None


def manager_component(
    feature_gates: str = "", log: LogSink = None, log_dir: Path | None = None
) -> ProcessComponent:
    """`kruise-manager` with loopback probe ports and short leases (one replica, fast restarts)."""
    argv = [
        sys.executable, "-m", "kruise.manager.main", "--kubeconfig", "{kubeconfig}",
        "--metrics-addr", f"127.0.0.1:{reserve_port()}", "--health-probe-addr", f"127.0.0.1:{reserve_port()}",
        "--leader-election-namespace", KRUISE_NAMESPACE, "--nodeimage-creation-delay", "0s",
    ]  # fmt: skip
    if feature_gates:
        argv += ["--feature-gates", feature_gates]
    return ProcessComponent(
        "kruise-manager",
        argv,
        ready_line=MANAGER_READY,
        log=log,
        log_file=_log_file(log_dir, "kruise-manager"),
    )


def daemon_component(
    node: str, feature_gates: str = "", log: LogSink = None, log_dir: Path | None = None
) -> ProcessComponent:
    """`kruise-daemon` for one simulated node, talking to that node's fake CRI runtime over gRPC."""
    argv = [
        sys.executable, "-m", "kruise.daemon.main", "--kubeconfig", "{kubeconfig}", "--node-name", node,
        "--socket-file", "{cri_socket_dir}/" + f"{node}.sock", "--addr", f"127.0.0.1:{reserve_port()}",
    ]  # fmt: skip
    if feature_gates:
        argv += ["--feature-gates", feature_gates]
    return ProcessComponent(
        f"kruise-daemon/{node}",
        argv,
        ready_line=DAEMON_READY,
        log=log,
        log_file=_log_file(log_dir, f"kruise-daemon-{node}"),
    )


def kruise_components(
    workdir: Path, feature_gates: str = "", log: LogSink = None, nodes: int = 0, log_dir: Path | None = None,
    api_set: str = DEFAULT_API_SET,
) -> list[Component]:  # fmt: skip
    """Everything kruise-py runs in the sandbox, in start order; `workdir` holds the webhook's certs,
    `log_dir` one `<component>.log` per process. One kruise-daemon per simulated node (`node-1` ...
    `node-N`, the simulator's names). Only kruise-webhook takes the API set (its configurations' rules);
    the manager and daemons talk versions both sets serve."""
    components: list[Component] = [
        KruiseNamespace(),
        KruiseNamespace(DAEMON_CONFIG_NAMESPACE),
        webhook_component(workdir / "certs", feature_gates, log, log_dir, api_set),
    ]
    if manager_available():
        components.append(manager_component(feature_gates, log, log_dir))
    components += [daemon_component(f"node-{i}", feature_gates, log, log_dir) for i in range(1, nodes + 1)]
    return components


def _log_file(log_dir: Path | None, name: str) -> Path | None:
    return None if log_dir is None else log_dir / f"{name}.log"
