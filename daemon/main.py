"""`kruise-daemon`: the node agent. Connects to this node's CRI runtime, keeps its NodeImage pulled,
carries out the ContainerRecreateRequests of pods on this node, reports the runtime's containers of
those pods (runtime-containers-meta, under DaemonWatchingPod) and, under PodProbeMarkerGate, runs the
probes of its NodePodProbe.

Exit codes: 0 after SIGTERM/SIGINT, 1 when the runtime socket is missing (upstream: fatal
"not found container runtime sock"), 2 for bad flags.

SIGTERM exits within a second or so: a DaemonSet rollout waits for the old pod on every node. In-flight
container recreations get SHUTDOWN_DRAIN_SECONDS and are then cancelled (a CRI StopContainer blocks
for the container's whole grace period), pulls are cancelled at once (the next daemon resumes them from
the NodeImage spec), and every other teardown step is bounded by SHUTDOWN_STEP_SECONDS so one stuck
connection cannot hold the process.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Awaitable, Sequence

import structlog

from kruise.api import features
from kruise.daemon.containermeta.controller import ContainerMetaController
from kruise.daemon.containerrecreate.recreator import ContainerRecreator
from kruise.daemon.cri.client import RuntimeClient, RuntimeNotFound, discover_socket
from kruise.daemon.imagepuller.puller import ImagePuller
from kruise.daemon.options import Options, parse_args
from kruise.daemon.podprobe.prober import PodProber
from kruise.kube.client import Client
from kruise.kube.informer import SharedInformer
from kruise.kube.logging import configure_logging, warn_gates_without_effect
from kruise.kube.resources import NODEIMAGES
from kruise.kube.serving import ProbeServer
from kruise.kube.store import unwrap_tombstone

log = structlog.get_logger("kruise.daemon")

SHUTDOWN_DRAIN_SECONDS = 0.5
SHUTDOWN_STEP_SECONDS = 0.5


async def _bounded(step: str, work: Awaitable[object], seconds: float) -> None:
    """Run one teardown step for at most `seconds`; a step that overruns is abandoned and logged."""
    try:
        async with asyncio.timeout(seconds):
            await work
    except TimeoutError:
        log.warning("shutdown step overran; abandoned", step=step, seconds=seconds)
    except Exception as exc:  # teardown goes on: the process is exiting either way
        log.warning("shutdown step failed", step=step, error=repr(exc))


async def run(options: Options) -> int:
    try:
        socket = discover_socket(options.socket_file, options.host_run_dir)
    except RuntimeNotFound as exc:
        log.error(str(exc))
        return 1
    client = await Client.from_environment(options.kubeconfig, qps=options.qps, burst=options.burst)
    # NodeImage's storage version on the wire, as kruise-manager: no request of this daemon goes through
    # the conversion webhook, so none fails while kruise-webhook starts or while the CRDs' caBundle is
    # patched (a watch opened before the patch kept the CRD's old client config and failed TLS
    # verification once at install).
    client.wire = await client.read_wire_versions()
    runtime = RuntimeClient(socket)
    runtime.open()
    probes = ProbeServer(options.addr_host, options.addr_port)
    node_images = SharedInformer(
        client, NODEIMAGES, None, field_selector=f"metadata.name={options.node_name}"
    )
    puller = ImagePuller(client, runtime, options.node_name)
    node_images.add_event_handler(
        on_add=puller.sync,
        on_update=lambda _old, new: puller.sync(new),
        on_delete=lambda obj: puller.sync({"metadata": unwrap_tombstone(obj).get("metadata")}),
    )
    recreator = ContainerRecreator(client, runtime, options.node_name)
    probes.add_readyz_check("nodeimage-informer", node_images.has_synced)
    probes.add_readyz_check("containerrecreate-informers", recreator.has_synced)
    container_meta = None
    if options.feature_gates.enabled(features.DAEMON_WATCHING_POD):
        container_meta = ContainerMetaController(
            client,
            runtime,
            options.node_name,
            env_from_metadata=options.feature_gates.enabled(features.IN_PLACE_UPDATE_ENV_FROM_METADATA),
        )
        probes.add_readyz_check("containermeta-informer", container_meta.has_synced)
    prober = None
    if options.feature_gates.enabled(features.POD_PROBE_MARKER_GATE):
        prober = PodProber(client, runtime, options.node_name)
        probes.add_readyz_check("nodepodprobe-informer", prober.has_synced)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    try:
        version = await runtime.version()
        port = await probes.start()
        node_images.start()
        recreator.start()
        if container_meta is not None:
            container_meta.start()
        if prober is not None:
            prober.start()
        log.info(
            "kruise-daemon started",
            node=options.node_name,
            runtime=f"{version.runtime_name} {version.runtime_version}",
            socket=str(socket),
            port=port,
        )
        await stopping.wait()
        log.info("kruise-daemon stopping on signal")
        return 0
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        drain = SHUTDOWN_DRAIN_SECONDS
        await _bounded("containerrecreate", recreator.stop(drain), drain + SHUTDOWN_STEP_SECONDS)
        await _bounded("nodeimage-informer", node_images.stop(), SHUTDOWN_STEP_SECONDS)
        if container_meta is not None:
            await _bounded("containermeta", container_meta.stop(drain), drain + SHUTDOWN_STEP_SECONDS)
        if prober is not None:
            await _bounded("podprobe", prober.stop(), SHUTDOWN_STEP_SECONDS)
        await _bounded("imagepuller", puller.stop(), SHUTDOWN_STEP_SECONDS)
        await _bounded("probes", probes.stop(), SHUTDOWN_STEP_SECONDS)
        await _bounded("cri", runtime.close(), SHUTDOWN_STEP_SECONDS)
        await _bounded("apiserver-client", client.close(), SHUTDOWN_STEP_SECONDS)
        log.info("kruise-daemon stopped")


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    configure_logging(options.log_level, options.logging_format)  # type: ignore[arg-type]
    warn_gates_without_effect(log, options.feature_gates)
    return asyncio.run(run(options))


if __name__ == "__main__":
    sys.exit(main())
