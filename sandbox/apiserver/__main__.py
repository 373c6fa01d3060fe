"""`python -m kruise.sandbox.apiserver --port N --kubeconfig PATH`: run the emulator until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import signal

from kruise.sandbox.apiserver.server import ApiServer


async def _serve(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = ApiServer(
        tls=not args.insecure_http, watch_history_size=args.watch_history, bulk_load=args.allow_bulk_load
    )
    url = await server.start(args.host, args.port)
    server.write_kubeconfig(args.kubeconfig)
    print(f"ready: kube-apiserver emulator at {url}; kubeconfig {args.kubeconfig}", flush=True)
    await stop.wait()
    await server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kruise.sandbox.apiserver", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--kubeconfig", required=True, help="where to write the kubeconfig")
    parser.add_argument("--insecure-http", action="store_true", help="serve plain HTTP instead of HTTPS")
    parser.add_argument("--watch-history", type=int, default=1000, help="events kept for watch resumption")
    parser.add_argument(
        "--allow-bulk-load",
        action="store_true",
        help="serve POST /sandbox/bulk-load (NDJSON objects stored as they are; benchmarks only)",
    )
    asyncio.run(_serve(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
