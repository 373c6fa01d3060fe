"""``python -m kruise.sandbox.simulator --kubeconfig PATH --nodes N``: run the simulator until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal

from kruise.sandbox.simulator.processes import ProcessImage
from kruise.sandbox.simulator.simulator import CONTROLLERS, Simulator


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m kruise.sandbox.simulator", description=__doc__)
    parser.add_argument("--kubeconfig", required=True, help="kubeconfig of the target apiserver")
    parser.add_argument("--nodes", type=int, default=3, help="number of simulated nodes (default 3)")
    parser.add_argument("--speed", type=float, default=1.0, help="divides every simulated duration")
    parser.add_argument("--cri-socket-dir", default=None, help="serve each node's CRI at <dir>/<node>.sock")
    parser.add_argument(
        "--controllers",
        default=",".join(CONTROLLERS),
        help=f"comma-separated built-ins to run (default {','.join(CONTROLLERS)})",
    )
    parser.add_argument(
        "--process-image",
        action="append",
        default=[],
        metavar="PATTERN=NAME[,NAME...]",
        help="run containers of images matching PATTERN as local processes; each NAME is an entry "
        "point run as the local executable of that name, the first is the image's default",
    )
    parser.add_argument("--state-dir", default=None, help="where process containers' files are written")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> None:
    controllers = tuple(c for c in args.controllers.split(",") if c)
    simulator = Simulator(
        args.kubeconfig,
        nodes=args.nodes,
        speed=args.speed,
        cri_socket_dir=args.cri_socket_dir,
        controllers=controllers,
        process_images=[ProcessImage.parse(text) for text in args.process_image],
        state_dir=args.state_dir,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await simulator.start()
    print(f"ready: {args.nodes} node(s): {', '.join(simulator.node_names)}", flush=True)
    try:
        await stop.wait()
    finally:
        await simulator.stop()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
