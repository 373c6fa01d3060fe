"""`kruise-manager`: parse flags, connect, serve probes, campaign for the lease, run controllers.

Exit codes tell the supervisor what happened: 0 after SIGTERM/SIGINT (lease released so the standby
takes over at once), 1 when leadership was lost (restart me), 2 for bad flags.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Sequence

import structlog

from kruise.kube.client import Client
from kruise.kube.leaderelection import LeadershipLost
from kruise.kube.logging import configure_logging, warn_gates_without_effect
from kruise.manager.app import Manager
from kruise.manager.context import ControllerSetup
from kruise.manager.options import Options, parse_args

log = structlog.get_logger("kruise.manager")


async def run(options: Options, setups: Sequence[ControllerSetup] | None = None) -> int:
    client = await Client.from_environment(options.kubeconfig, qps=options.qps, burst=options.burst)
    manager = Manager(client, options, setups)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    try:
        metrics_port, health_port = await manager.start_probes()
        log.info(
            "kruise-manager started",
            metrics_port=metrics_port,
            health_port=health_port,
            controllers=[s.name for s in manager.setups],
        )
        running = asyncio.create_task(manager.run(), name="manager")
        stop = asyncio.create_task(stopping.wait())
        done, _ = await asyncio.wait({running, stop}, return_when=asyncio.FIRST_COMPLETED)
        if running in done:
            stop.cancel()
            running.result()  # LeadershipLost or a start-up failure
            return 0
        log.info("kruise-manager stopping on signal")
        running.cancel()  # steps down and releases the lease
        await asyncio.gather(running, return_exceptions=True)
        return 0
    except LeadershipLost as exc:
        log.error("leadership lost, exiting", error=str(exc))
        return 1
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await manager.stop()
        await client.close()


def main(argv: list[str] | None = None) -> None:
    options = parse_args(argv)
    configure_logging(options.log_level, options.logging_format)  # type: ignore[arg-type]
    warn_gates_without_effect(log, options.feature_gates)
    sys.exit(asyncio.run(run(options)))


if __name__ == "__main__":
    main()
